"""A BM25 index on disk: `.npy` arrays and `bm25.json`, memory-mapped when read.

What it is: `save` writes the weight matrix's CSR arrays (data, indices, indptr), idf and
document lengths as `.npy` files, and the parameters, tokenizer name and vocabulary as
`bm25.json`; `load` reads them back with the arrays memory-mapped (read-only), so a
million-chunk index opens without reading its postings (`impact*.npy` files written by
earlier versions are ignored). An older folder with one `bm25.npz` is read whole.
What it is not: a pickle — nothing here executes code from the folder.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import orjson
from scipy import sparse

from ragkit.documents import RagkitError
from ragkit.lexical.tokenizers import TOKENIZERS

if TYPE_CHECKING:
    from ragkit.lexical.bm25 import BM25

NAMES = ("data", "indices", "indptr", "idf", "doc_len")


def save(model: BM25, folder: str | Path) -> Path:
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
    (folder / "bm25.json").write_bytes(orjson.dumps(meta))
    return folder


def _meta(meta_path: Path) -> dict:
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise RagkitError(
            f"{meta_path}, line {err.lineno}: invalid JSON ({err.msg})") from None
    if meta.get("format") != "ragkit.bm25" or meta.get("version") != 1:
        raise RagkitError(f"{meta_path}: fields 'format'/'version' are "
                          f"{meta.get('format')!r}/{meta.get('version')!r}, "
                          "expected 'ragkit.bm25'/1")
    return meta


def load(cls: type[BM25], folder: str | Path) -> BM25:
    """Read an index `save` wrote into `folder` as a `cls`; a missing file or bad field is
    a RagkitError naming it."""
    folder = Path(folder)
    meta_path = folder / "bm25.json"
    npz = folder / "bm25.npz"
    needed = [meta_path, npz] if npz.is_file() else [meta_path, *(folder / f"{n}.npy"
                                                                  for n in NAMES)]
    for path in needed:
        if not path.is_file():
            raise RagkitError(f"{path}: missing; not a BM25 index folder written by BM25.save")
    meta = _meta(meta_path)
    model = cls(k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"],
                tokenizer=meta["tokenizer"])
    if npz.is_file():
        with np.load(npz, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in NAMES}
    else:
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                  for name in NAMES}
    vocab = meta["vocabulary"]
    model.weights = sparse.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]),
        shape=(len(vocab), meta["n_docs"]), copy=False,
    )
    model.idf, model.doc_len = arrays["idf"], arrays["doc_len"]
    model.vocabulary = {term: i for i, term in enumerate(vocab)}
    model.avgdl = meta["avgdl"]
    return model
