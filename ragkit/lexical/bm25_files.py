"""A BM25 index on disk: `.npy` arrays and `bm25.json`, memory-mapped when read.

What it is: `save` writes the weight matrix's CSR arrays (data, indices, indptr), idf and
document lengths as `.npy` files, and the parameters, tokenizer name and vocabulary as
`bm25.json`; `load` reads them back with the arrays memory-mapped (read-only), so a
million-chunk index opens without reading its postings (`impact*.npy` files written by
earlier versions are ignored). An older folder with one `bm25.npz` is read whole. The
vocabulary is also saved as a memory-mapped term table (`ragkit.term_table`): a folder
that has it opens without parsing bm25.json's "vocabulary" or building its dict (0.85 s
and 120 MB at two million terms); one without it (older) builds the dict as before.
What it is not: a pickle — nothing here executes code from the folder. Nor a trusting
reader: array lengths, the index pointer, every posting's document number and weight are
checked against bm25.json on load (one pass over each, read in parts: none left resident),
so a damaged file is a RagkitError naming it, not an IndexError at the first search nor a
ranking of NaN or 7.9e206. A folder or file ragkit may not read is "cannot read (Permission
denied)" naming it, not "damaged": rebuilding would not help.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import orjson
from scipy import sparse

from ragkit.documents import RagkitError
from ragkit.jsonl import parse_json, read_json
from ragkit.lexical.bm25_data import BM25Data
from ragkit.lexical.tokenizers import TOKENIZERS
from ragkit.term_table import FILES as TERM_FILES
from ragkit.term_table import TermTable, has_terms, write_terms

Model = TypeVar("Model", bound=BM25Data)
NAMES = ("data", "indices", "indptr", "idf", "doc_len")


def save(model: BM25Data, folder: str | Path) -> Path:
    """Write `model` into `folder`; a custom tokenizer function cannot be saved (no name)."""
    if model.tokenizer_name is None:
        raise RagkitError(
            "cannot save a BM25 index built with a custom tokenizer function; "
            f"use a named tokenizer ({', '.join(TOKENIZERS)})"
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    w = model.weights
    arrays = {"data": w.data, "indices": w.indices, "indptr": w.indptr, "idf": model.idf,
              "doc_len": model.doc_len}
    for name, values in arrays.items():
        np.save(folder / f"{name}.npy", values)
    meta = {
        "format": "ragkit.bm25", "version": 1,
        "k1": model.k1, "b": model.b, "epsilon": model.epsilon,
        "tokenizer": model.tokenizer_name, "avgdl": model.avgdl,
        "n_docs": model.n_docs, "vocabulary": list(model.vocabulary),
    }
    (folder / "bm25.json").write_bytes(orjson.dumps(meta))  # "vocabulary" last: `_head`
    write_terms(folder, meta["vocabulary"])
    return folder


def _meta(meta_path: Path) -> dict:
    meta = read_json(meta_path)
    if meta.get("format") != "ragkit.bm25" or meta.get("version") != 1:
        raise RagkitError(f"{meta_path}: fields 'format'/'version' are "
                          f"{meta.get('format')!r}/{meta.get('version')!r}, "
                          "expected 'ragkit.bm25'/1")
    return meta


def _head(meta_path: Path) -> dict | None:
    """bm25.json without its "vocabulary" (written last), parsed from the file's first
    bytes; None when the file does not start that way (then it is read whole)."""
    with meta_path.open("rb") as handle:
        head = handle.read(1 << 16)
    cut = head.find(b',"vocabulary":[')
    if cut < 0:
        return None
    try:
        meta = parse_json(head[:cut] + b"}", meta_path)
    except ValueError:  # RagkitError too: not JSON, or too deep to read
        return None
    return meta if meta.get("format") == "ragkit.bm25" and meta.get("version") == 1 else None


def load(cls: Callable[..., Model], folder: str | Path) -> Model:
    """Read an index `save` wrote into `folder`; a missing file or bad field is a RagkitError
    naming it, and so is a folder or file that may not be read (`_unreadable`).
    `cls(k1=, b=, epsilon=, tokenizer=)` makes the empty model the arrays go into (`BM25`,
    which checks the parameters and the tokenizer name before any array is read)."""
    folder = Path(folder)
    try:
        return _load(cls, folder)
    except PermissionError as exc:
        raise _unreadable(folder, exc) from None


def _unreadable(folder: Path, exc: PermissionError) -> RagkitError:
    """"PATH: cannot read (Permission denied)": the folder when the file in it cannot even be
    looked at (a chmod 000 folder; the file named may not exist), else the file itself."""
    path = Path(exc.filename) if exc.filename else folder
    try:
        path.stat()
    except OSError:
        path = folder
    return RagkitError(f"{path}: cannot read ({exc.strerror or exc})")


def _load(cls: Callable[..., Model], folder: Path) -> Model:
    """`load`, letting a PermissionError through for it to name."""
    meta_path = folder / "bm25.json"
    npz = folder / "bm25.npz"
    needed = [meta_path, npz] if npz.is_file() else [meta_path, *(folder / f"{n}.npy"
                                                                  for n in NAMES)]
    for path in needed:
        if not path.is_file():
            raise RagkitError(f"{path}: missing; not a BM25 index folder written by BM25.save")
    terms = not npz.is_file() and has_terms(folder)
    for path in needed + [folder / name for name in TERM_FILES if terms]:
        path.open("rb").close()  # one that may not be read: `load` names it
    meta = (_head(meta_path) if terms else None) or _meta(meta_path)
    for name in ("k1", "b", "epsilon", "avgdl"):  # a hand edit: one line naming the field
        value = meta.get(name)
        if type(value) not in (int, float) or not abs(value) <= 1e9:  # NaN, ∞, 400 digits
            raise RagkitError(f"{meta_path}: field '{name}': expected a number, got "
                              f"{meta.get(name)!r:.40}")
    try:
        model = cls(k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"],
                    tokenizer=meta["tokenizer"])
    except RagkitError as exc:  # k1 < 0, an unknown tokenizer: say which file
        raise RagkitError(f"{meta_path}: {exc}") from None
    if npz.is_file():
        with np.load(npz, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in NAMES}
    else:
        arrays = {name: _array(folder / f"{name}.npy") for name in NAMES}
    vocab = TermTable(folder) if "vocabulary" not in meta else meta["vocabulary"]
    _check_arrays(arrays, len(vocab), meta["n_docs"], (model.k1, model.b, meta["avgdl"]),
                  lambda name: npz if npz.is_file() else folder / f"{name}.npy")
    model.weights = sparse.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]),
        shape=(len(vocab), meta["n_docs"]), copy=False,
    )
    model.idf, model.doc_len = arrays["idf"], arrays["doc_len"]
    model.vocabulary = (vocab if isinstance(vocab, TermTable)
                        else {term: i for i, term in enumerate(vocab)})
    model.avgdl = meta["avgdl"]
    return model


def _array(path: Path) -> np.ndarray:
    """One `.npy` file, memory-mapped; an empty or unreadable one (a full disk, a cut copy)
    is the "damaged" line, not numpy's EOFError or ValueError."""
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except PermissionError:
        raise  # not damaged: `load` says it cannot be read
    except (EOFError, ValueError, OSError) as exc:
        why = "empty file" if isinstance(exc, EOFError) else str(exc)[:120]
        raise RagkitError(f"{path}: damaged BM25 index ({why}); rebuild it") from None


def _check_arrays(arrays: dict, n_terms: int, n_docs: object,
                  params: tuple[float, float, float], file_of) -> None:
    """Refuse arrays that do not make a `n_terms` × `n_docs` CSR matrix: wrong shapes or
    lengths, an index pointer that does not run from 0 up to the number of postings, a
    document number outside 0..n_docs-1, or a posting weight BM25 with `params` (k1, b,
    avgdl) cannot give (`_weights_bad`). `file_of(name)` is the file to name."""
    def damaged(name: str, why: str) -> RagkitError:
        return RagkitError(f"{file_of(name)}: damaged BM25 index ({why}); rebuild it")

    if not isinstance(n_docs, int) or n_docs < 0:
        raise damaged("indices", f"bm25.json n_docs is {n_docs!r}")
    data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
    for name, kind in (("data", "f"), ("indices", "iu"), ("indptr", "iu"), ("idf", "f"),
                       ("doc_len", "fiu")):
        if arrays[name].ndim != 1 or arrays[name].dtype.kind not in kind:
            raise damaged(name, f"a {arrays[name].ndim}-d {arrays[name].dtype} array")
    if len(indptr) != n_terms + 1:
        raise damaged("indptr", f"{len(indptr)} entries for {n_terms} terms")
    if len(indices) != len(data):
        raise damaged("indices", f"{len(indices)} entries, but data.npy has {len(data)}")
    if indptr[0] != 0 or indptr[-1] != len(indices) or (np.diff(indptr) < 0).any():
        raise damaged("indptr", f"does not rise from 0 to the {len(indices)} postings")
    if len(arrays["idf"]) != n_terms:
        raise damaged("idf", f"{len(arrays['idf'])} entries for {n_terms} terms")
    if len(arrays["doc_len"]) != n_docs:
        raise damaged("doc_len", f"{len(arrays['doc_len'])} entries for {n_docs} documents")
    # one pass: as unsigned, a negative number is larger than any document number
    if indices.size and _largest(indices.view(indices.dtype.str.replace("i", "u"))) >= n_docs:
        raise damaged("indices", f"document numbers outside 0..{n_docs - 1}")
    why = _weights_bad(data, arrays["idf"], arrays["doc_len"], params)
    if why:
        raise damaged("idf" if why.startswith("idf") else "data", why)


def _weights_bad(data: np.ndarray, idf: np.ndarray, doc_len: np.ndarray,
                 params: tuple[float, float, float]) -> str | None:
    """Why the postings' weights (data.npy) cannot be BM25's with `params` (k1, b, avgdl),
    or None. Each is idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)): with tf ≥ 1 and
    0 ≤ b ≤ 1 the factor lies between its value at tf = 1 in the longest document and k1+1,
    so every weight is finite, at most max|idf|·(k1+1) and, when every idf is positive (as in
    any corpus of more than a few chunks), at least min idf times the smallest factor.
    NaN pages, a byte flipped in an exponent (7.9e206 or 1e-300) and zeroed pages are damage,
    caught in one pass. Not a checksum: a flip in a mantissa's low bits, or postings swapped
    with each other, stay unseen."""
    if not data.size or not idf.size:
        return None
    bounds = np.array([(p.min(), p.max()) for p in _parts(idf)])  # NaN: both NaN
    least, most = float(bounds[:, 0].min()), float(bounds[:, 1].max())
    if not (np.isfinite(least) and np.isfinite(most)):
        return "idf.npy holds a value that is not a number"
    k1, b, avgdl = params
    high = max(abs(least), abs(most)) * (k1 + 1) * (1 + 1e-6)
    low = -high
    if least > 0 and avgdl > 0:
        longest = max(float(p.max()) for p in _parts(doc_len)) / avgdl
        low = least * (k1 + 1) / (1 + k1 * (1 - b + b * longest)) * (1 - 1e-6)
    for part in _parts(data):
        if not (low <= part.min() and part.max() <= high):  # NaN makes both NaN
            wrong = part[~((part >= low) & (part <= high))][0]
            return f"a posting weight is {float(wrong):.3g}, not in [{low:.3g}, {high:.3g}]"
    return None


def _parts(values: np.ndarray, block: int = 1 << 18):
    """`values` in parts of `block`; a memory-mapped array is read from its file into one
    small buffer instead, so a check does not leave every page of the postings mapped into
    the process (274 MB of resident memory at 1M chunks before the first query, which
    reads a few of them)."""
    if not isinstance(values, np.memmap) or values.filename is None:
        for start in range(0, values.size, block):
            yield values[start:start + block]
        return
    buffer = np.empty(min(block, values.size), dtype=values.dtype)
    with open(values.filename, "rb") as handle:
        handle.seek(values.offset)
        for start in range(0, values.size, block):
            part = buffer[:min(block, values.size - start)]
            if handle.readinto(memoryview(part).cast("B")) != part.nbytes:
                raise ValueError(f"{values.filename} ends early")
            yield part


def _largest(values: np.ndarray) -> int:
    """values.max(), read in parts (`_parts`)."""
    return max((int(part.max()) for part in _parts(values)), default=0)
