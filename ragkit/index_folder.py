"""The index folder on disk: what `Pipeline.save` writes and `Pipeline.load` reads and checks.

Layout of a folder:
- `index.json` — `{"format": "ragkit-index", "version": 1, "config": {...}, "chunks": N,
  "embedder": {"name", "dim", "max_tokens", "fingerprint"} | null}`; `embedder` describes
  the model that made the dense vectors (null for a BM25-only index; absent in older
  indexes, which still load). `"files"` lists every file the index wrote (POSIX paths
  relative to the folder, index.json included): what a re-index may replace.
- `chunks.jsonl` — one chunk per line: `{"id", "doc_id", "text", "context", "start", "end",
  "metadata"}` (`metadata` absent → `{}`, so older indexes load; `ragkit.chunk_rows`).
- `chunks.offsets.npy` — N + 1 int64 byte offsets of chunks.jsonl's rows, so a row is read
  by position (`ragkit.chunk_table`); an index written before it loads every row at open.
- `parents.jsonl` — only in a parent–child index (config `parent_child`): the parent chunks,
  same rows; each row of chunks.jsonl (a child) names its parent in `metadata.parent`, and
  index.json counts them in "parents".
- `bm25/` — `BM25.save` (with its term table, `ragkit.term_table`).
- `dense_vectors.npy` + `dense_owners.npy` — `DenseIndex`, when built with an embedder.

What it is: the writer (through `ragkit.atomic.replace_folder`, so an existing index is
replaced crash-safely and a folder that is not an index is never touched; an index folder
holding anything ragkit did not write is refused whole, naming that file) and a reader that
checks every part against the others — chunk count, BM25 documents, vector rows, owners and
width — so a damaged or mixed-up folder is a clear RagkitError naming the file, line and
field, never a traceback or silently wrong results.

What it is not: a database. Nor a reader of everything at open: chunks.jsonl rows are read by
position when asked for (`ragkit.chunk_table`, through chunks.offsets.npy), the BM25 postings
and the dense vectors are memory-mapped, and the vectors' values are checked by the first scan
that reads them (`ragkit.dense`): a million-chunk index opens in a fraction of a second.
"""
from __future__ import annotations

import errno
import json
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ragkit.atomic import replace_folder
from ragkit.chunk_rows import read_chunks, write_chunks
from ragkit.chunk_table import OFFSETS
from ragkit.dense import DenseIndex
from ragkit.documents import Chunk, RagkitError, where
from ragkit.embed.base import fingerprint_of
from ragkit.index_owner import (FORMAT, WHAT, files_of, is_index, owns_index,  # noqa: F401
                                refuse_inputs_inside, refuse_special_files)
from ragkit.jsonl import read_json
from ragkit.lexical import BM25

T = TypeVar("T")
FORMAT_VERSION = 1


def embedder_record(embedder) -> dict[str, Any]:
    """What `index.json` records of the embedder that made the vectors."""
    return {"name": embedder.name, "dim": int(embedder.dim),
            "max_tokens": int(embedder.max_tokens), "fingerprint": fingerprint_of(embedder)}


def describe(record: dict[str, Any]) -> str:
    """`'name' (dim D, fingerprint F)` for error messages."""
    return f"{record['name']!r} (dim {record['dim']}, fingerprint {record['fingerprint']})"


def check_embedder(embedder, record: dict[str, Any] | None, dense: DenseIndex | None) -> None:
    """Refuse an embedder that is not the one the index was built with.

    With a record, name, dim and fingerprint must match it (max_tokens is recorded for
    reference only); without one (an older index) the dim must match the vectors' width.
    """
    if record is None:
        if dense is not None and embedder.dim != dense.vectors.shape[1]:
            raise RagkitError(f"embedder {embedder.name!r} gives {embedder.dim}-d vectors, but "
                              f"this index holds {dense.vectors.shape[1]}-d ones; pass the "
                              f"embedder it was built with")
        return
    given = embedder_record(embedder)
    if any(given[key] != record[key] for key in ("name", "dim", "fingerprint")):
        raise RagkitError(f"this index was built with embedder {describe(record)}, not "
                          f"{describe(given)}; pass that one: Pipeline.load(folder, "
                          f"embedder=...), or search with mode 'bm25'")


# ---------------------------------------------------------------------------- write

def write_index(folder: Path | str, manifest: dict[str, Any], chunks: Sequence[Chunk],
                bm25: BM25, dense: DenseIndex | None, parents: Sequence[Chunk] = ()) -> Path:
    """Write a complete index folder, replacing an existing index at `folder` atomically.

    `parents` (a parent–child index) go to `parents.jsonl`, counted in index.json "parents".
    """
    folder = Path(folder)
    with replace_folder(folder, owns_index, WHAT) as tmp:
        write_chunks(tmp / "chunks.jsonl", chunks, offsets=tmp / OFFSETS)
        if parents:
            write_chunks(tmp / "parents.jsonl", parents)
        bm25.save(tmp / "bm25")
        if dense is not None:
            dense.save(tmp)
        write_manifest(tmp, manifest, len(chunks), len(parents))
    return folder


def write_manifest(folder: Path, manifest: dict[str, Any], n_chunks: int,
                   n_parents: int = 0) -> None:
    """index.json of an index folder being written: format, version, `manifest`, counts, and
    the files already in `folder` (written last, it lists itself too)."""
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, **manifest,
                "chunks": n_chunks, **({"parents": n_parents} if n_parents else {}),
                "files": files_of(folder)}
    (folder / "index.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


# ---------------------------------------------------------------------------- read

def read_manifest(folder: Path) -> dict[str, Any]:
    """index.json as a dict, its format, version, chunk count and embedder record checked."""
    path = folder / "index.json"
    if not folder.is_dir():
        raise RagkitError(not_a_folder(folder))
    refuse_special_files(folder)  # before any is opened: a FIFO would block
    if not path.is_file():
        raise RagkitError(f"{folder}: not a ragkit index (no index.json)")
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise RagkitError(f"{where(path, None, 'format')}: not a ragkit index "
                          f"(expected \"format\": \"{FORMAT}\")")
    if manifest.get("version") != FORMAT_VERSION:
        raise RagkitError(f"{where(path, None, 'version')}: index format "
                          f"{manifest.get('version')!r}, this ragkit reads {FORMAT_VERSION}; "
                          f"rebuild it with `ragkit index`")
    if not isinstance(manifest.get("config"), dict):
        raise RagkitError(f"{where(path, None, 'config')}: missing or not an object")
    if not isinstance(manifest.get("chunks"), int):
        raise RagkitError(f"{where(path, None, 'chunks')}: missing or not a whole number")
    record = manifest.get("embedder")
    if record is not None and not _valid_record(record):
        raise RagkitError(f"{where(path, None, 'embedder')}: expected null or an object with "
                          f"name, dim, max_tokens and fingerprint")
    return manifest


def not_a_folder(folder: Path) -> str:
    """The one line for an index path that is no folder: absent, a file, or a symbolic link
    to nothing, to a file or in a loop — saying where the link points, since the link itself
    is there to see and "no such index folder" alone sent the user looking for a typo.

    Only reads: a reader never makes the folder a link names (the index commands write one,
    and refuse to write through a link, `ragkit.atomic.check_target`)."""
    if not folder.is_symlink():
        return (f"{folder}: a file, not an index folder" if folder.exists()
                else f"{folder}: no such index folder")
    target = os.readlink(folder)
    try:
        folder.resolve(strict=True)
    except (RuntimeError, OSError) as exc:  # Python 3.11: RuntimeError "Symlink loop from"
        if isinstance(exc, OSError) and exc.errno != errno.ELOOP:
            return (f"{folder}: no such index folder (a symbolic link to {target}, which names "
                    f"nothing)")
        return f"{folder}: no such index folder (a symbolic link that leads back to itself)"
    return f"{folder}: a symbolic link to {target}, a file, not an index folder"


def read_stable(folder: Path, read: Callable[[], T], attempts: int = 3) -> T:
    """`read()` of the index at `folder`, again when the folder was replaced while it ran.

    A build swaps the whole folder at once (`ragkit.atomic`), but a reader opens its files
    one path at a time: a swap between two opens paired one version's BM25 with the other's
    chunk text (silently), or named a file the swap had just removed "damaged, rebuild it".
    The folder's inode before and after tells: the same, and every file read was one
    version's; else read again (a file gone meanwhile included). A Milvus index is written
    in place, its index.json replaced last (then the old collection is dropped), so that
    file's inode counts too: a search that waited for a build's Milvus Lite database then
    opens the collection the new index.json names."""
    for _ in range(attempts):
        before = _inode(folder)
        try:
            result = read()
        except (RagkitError, OSError) as exc:
            if _inode(folder) != before:
                continue  # replaced meanwhile: what was missing is in the new one
            if isinstance(exc, OSError):
                raise RagkitError(f"{folder}: cannot read the index ({exc.strerror or exc})"
                                  ) from None
            raise
        if _inode(folder) == before:
            return result
    raise RagkitError(f"{folder}: replaced {attempts} times while being opened (another "
                      f"`ragkit index` is writing it); try again when it is done")


def _inode(folder: Path) -> tuple[tuple[int, int] | None, ...]:
    """(device, inode) of `folder` and of its index.json (None for one that is missing)."""
    found = []
    for path in (folder, folder / "index.json"):
        try:
            info = path.stat()
        except OSError:
            found.append(None)
        else:
            found.append((info.st_dev, info.st_ino))
    return tuple(found)


def _valid_record(record: Any) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("name"), str)
            and isinstance(record.get("dim"), int) and isinstance(record.get("fingerprint"), str)
            and isinstance(record.get("max_tokens", 0), (int, type(None))))


def read_parents(folder: Path, manifest: dict[str, Any], chunks: Sequence[Chunk]
                 ) -> dict[str, Chunk]:
    """parents.jsonl of a parent–child index as child id → parent chunk; every chunk must
    name an existing parent in its metadata "parent"."""
    count = manifest.get("parents")
    if not isinstance(count, int):
        raise RagkitError(f"{where(folder / 'index.json', None, 'parents')}: missing or not a "
                          f"whole number, but the config says parent_child")
    parents = {p.id: p for p in read_chunks(folder / "parents.jsonl", count)}
    lifted = {}
    for line, chunk in enumerate(chunks, start=1):
        parent = parents.get(str(chunk.metadata.get("parent")))
        if parent is None:
            raise RagkitError(f"{where(folder / 'chunks.jsonl', line, 'metadata.parent')}: no "
                              f"parent {chunk.metadata.get('parent')!r} in parents.jsonl")
        lifted[chunk.id] = parent
    return lifted


def read_bm25(folder: Path, n_chunks: int) -> BM25:
    """The BM25 index in `folder`; it must index exactly `n_chunks` documents."""
    try:
        bm25 = BM25.load(folder)
    except RagkitError:
        raise
    except (KeyError, TypeError, ValueError, OSError, zipfile.BadZipFile) as exc:
        raise RagkitError(f"{folder}: damaged BM25 index ({type(exc).__name__}: {exc}); "
                          f"rebuild it") from None
    if bm25.n_docs != n_chunks:
        raise RagkitError(f"{where(folder / 'bm25.json', None, 'n_docs')}: {bm25.n_docs} "
                          f"documents, but the index has {n_chunks} chunks; rebuild it")
    return bm25


def read_dense(folder: Path, n_chunks: int, dim: int | None) -> DenseIndex | None:
    """The dense vectors, or None when the folder has none; rows, owners and width checked."""
    vpath, opath = folder / "dense_vectors.npy", folder / "dense_owners.npy"
    if not vpath.exists() and not opath.exists():
        return None
    vectors, owners = _npy(vpath, mmap=True), _npy(opath)
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.floating):
        raise RagkitError(f"{vpath}: expected a 2-d float array, got {vectors.ndim}-d "
                          f"{vectors.dtype}")
    if owners.ndim != 1 or not np.issubdtype(owners.dtype, np.integer):
        raise RagkitError(f"{opath}: expected a 1-d integer array")
    if len(owners) != len(vectors):
        raise RagkitError(f"{opath}: {len(owners)} rows, but {vpath.name} has {len(vectors)}")
    damage = _owners_damage(owners, n_chunks)
    if damage:
        raise RagkitError(f"{opath}: damaged ({damage}); rebuild the index")
    if dim is not None and vectors.shape[1] != dim:
        raise RagkitError(f"{vpath}: vectors are {vectors.shape[1]}-d, but index.json field "
                          f"'embedder' records dim {dim}")
    # NaN and infinite values are refused by the first scan that reads them (`DenseIndex`)
    return DenseIndex(vectors, owners, source=vpath)


def _owners_damage(owners: np.ndarray, n_chunks: int) -> str | None:
    """What is wrong with `owners` (each vector's chunk position), or None: they must run
    0, 1, …, n_chunks - 1 in order, every chunk owning at least one vector (its windows).

    Why "at least one": sorted and in range alone let an all-zero file through, every vector
    then the first chunk's, and a dense search returned 1 chunk of 57 with exit 0."""
    if not owners.size:
        return f"no vector, but the index has {n_chunks} chunks" if n_chunks else None
    low, high = int(owners.min()), int(owners.max())
    if low < 0 or high >= n_chunks:
        return f"chunk positions {low}..{high}, but the index has {n_chunks} chunks"
    steps = np.diff(owners)
    if np.any(steps < 0):
        return "chunk positions out of order"
    gaps = np.flatnonzero(steps > 1)
    lost = (0 if owners[0] else int(owners[gaps[0]]) + 1 if gaps.size
            else high + 1 if high < n_chunks - 1 else None)
    return None if lost is None else (f"chunk {lost} of {n_chunks} owns no vector; every "
                                      f"chunk owns at least one")


def _npy(path: Path, mmap: bool = False) -> np.ndarray:
    """The array in `path`; with `mmap`, memory-mapped read-only (nothing read yet)."""
    if not path.is_file():
        raise RagkitError(f"{path}: missing; the index folder is incomplete")
    try:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise RagkitError(f"{path}: cannot read ({exc})") from None
