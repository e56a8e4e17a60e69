"""Precomputed dense vectors a user brings to `ragkit index --vectors FILE.npy`.

What it is: the reader and checks for a 2-d float `.npy` file holding **one row per indexed
chunk, in chunk order** — the order of `chunks.jsonl` in the index written: documents in
input order, each document's chunks in order (with `--parents`, the children). The embedder
named by `--embedder` embeds the queries, so the file's width must be that embedder's `dim`,
and the vectors must come from the same model (ragkit cannot check that; it records the
embedder's name, dim and fingerprint in `index.json` as for vectors it computed). Rows are
L2-normalised here, as dense search takes cosine similarity; a zero row is refused.

Why one row per chunk, not per window: windows are cut by ragkit's chunker (`--window`) and
would force users to reproduce that cut; a chunk is the unit they already see in
`chunks.jsonl` (and what a long-input API embedder takes whole).

What it is not: an embedder. Nothing is computed; a wrong row count, a non-float or
non-2-d array, a NaN or infinite value, a value beyond float32's range (±3.4e38: vectors are
stored as float32, and such a row would become infinite there and make every hybrid score
NaN), or a width other than the query embedder's is a RagkitError naming the file and what
to fix. Values inside float32's range whose squares are not (1e30, 1e-30) still give unit
rows: such rows are normalised in float64.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ragkit.dense import DenseIndex
from ragkit.documents import RagkitError


def read_vectors(path: Path | str) -> np.ndarray:
    """The array in `path`, memory-mapped, checked to be a finite 2-d float array."""
    path = Path(path)
    if not path.is_file():
        raise RagkitError(f"{path}: no such file (--vectors expects a .npy file)")
    try:
        vectors = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise RagkitError(f"{path}: not a readable .npy array ({exc})") from None
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2:
        shape = getattr(vectors, "shape", "?")
        raise RagkitError(f"{path}: expected a 2-d array (one row per chunk), got shape {shape}")
    if not np.issubdtype(vectors.dtype, np.floating):
        raise RagkitError(f"{path}: expected float vectors (float16/32/64), got dtype "
                          f"{vectors.dtype}")
    for lo in range(0, len(vectors), BLOCK):  # in blocks: a memory-mapped file stays mapped
        _check_finite(vectors[lo:lo + BLOCK], lo, path)
    return vectors


BLOCK = 65_536  # rows checked or converted at once


def _check_finite(block: np.ndarray, lo: int, path: Path | str) -> np.ndarray:
    """`block` (rows from `lo`) as float32, refused if a value is NaN or infinite before the
    cast, or beyond float32's range (infinite after it)."""
    bad = ~np.isfinite(block).all(axis=1)
    if bad.any():
        row = lo + int(np.flatnonzero(bad)[0])
        raise RagkitError(f"{path}: row {row} holds NaN or infinite values")
    with np.errstate(over="ignore"):
        cast = np.asarray(block, dtype=np.float32)
    bad = ~np.isfinite(cast).all(axis=1)
    if bad.any():
        row = lo + int(np.flatnonzero(bad)[0])
        raise RagkitError(f"{path}: row {row} holds values beyond float32 range (|x| > "
                          f"3.4e38); vectors are stored as float32, scale them down")
    return cast


def check_width(vectors: np.ndarray, embedder, path: Path | str) -> None:
    """Refuse vectors whose width is not the query embedder's dimension."""
    if vectors.shape[1] != int(embedder.dim):
        raise RagkitError(f"{path}: vectors are {vectors.shape[1]}-d, but embedder "
                          f"{embedder.name!r} gives {embedder.dim}-d query vectors; name the "
                          f"embedder that made them with --embedder")


def vectors_index(vectors: np.ndarray, n_chunks: int, embedder, path: Path | str
                  ) -> DenseIndex:
    """A one-vector-per-chunk `DenseIndex` of `vectors`, rows L2-normalised."""
    if len(vectors) != n_chunks:
        raise RagkitError(f"{path}: {len(vectors)} rows, but the documents make {n_chunks} "
                          f"chunks; give one row per chunk in chunk order (see chunks.jsonl "
                          f"of an index built without --vectors, same chunk options)")
    check_width(vectors, embedder, path)
    out = np.empty(vectors.shape, dtype=np.float32)
    for lo in range(0, len(vectors), BLOCK):
        block = _check_finite(vectors[lo:lo + BLOCK], lo, path)  # checked after the cast too
        with np.errstate(over="ignore", under="ignore"):
            norms = np.linalg.norm(block, axis=1)
        out[lo:lo + len(block)] = block / np.where(norms == 0, 1, norms)[:, None]
        odd = np.flatnonzero((norms == 0) | ~np.isfinite(norms))  # squares overflowed or
        if odd.size:                                               # underflowed float32
            wide = block[odd].astype(np.float64)
            wide_norms = np.linalg.norm(wide, axis=1)
            if (wide_norms == 0).any():
                row = lo + int(odd[np.flatnonzero(wide_norms == 0)[0]])
                raise RagkitError(f"{path}: row {row} is all zeros (it has no direction to "
                                  f"compare)")
            out[lo + odd] = (wide / wide_norms[:, None]).astype(np.float32)
    return DenseIndex(out, np.arange(n_chunks))
