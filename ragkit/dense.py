"""Exact top-k dense search over L2-normalised vectors, one or several vectors per chunk.

What it is: a matrix product and `argpartition` — exact, no approximate index, fine up to a
few hundred thousand vectors on a laptop. A chunk may own several vectors (windows of its
text, cut by `ragkit.windows.windows`); its score is the best window's score (MaxP: Dai &
Callan, SIGIR 2019). That is how chunks longer than the embedder's window (256 word-pieces
for MiniLM) are searched: every part of the chunk gets seen, and the window that matches the
question wins.

What it is not: a vector database. Vectors live in one float32 `.npy` file, memory-mapped
when an index is loaded (`ragkit.index_folder.read_dense`): opening reads none of them, the
first dense or hybrid query reads them all (1M × 384 float32 is 1.5 GB; a full scan per
query, its cost measured in benchmarks/bench_index.py --dense). A NaN or infinite value makes
every score with its row non-finite, whatever the query, and a row of damaged bytes or
zeros a score beyond ±1 or exactly 0, so the first full scan checks every row at the cost
of a comparison over the scores, and refuses a damaged row by number (`source` names the
file) instead of ranking its scores (cosines of 9e36 ranked first, with exit 0). The length
is checked only for vectors read from an index file (`source`): built in memory, a
`DenseIndex` takes any finite vectors. Rows swapped with each other are not detected.
"""
from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from ragkit.windows import windows
from ragkit.documents import Chunk, RagkitError, RagkitWarning
from ragkit.jobs import threads
from ragkit.progress import progress_bar
from ragkit.ranking import top_k, top_k_rows  # noqa: F401 (their home before ragkit.ranking)

VECTOR_BLOCK = 1 << 16  # vectors per single-threaded block of products (`similarities`)
QUERY_GROUP = 8  # query rows per product: a row scores alike in any place of it
SUB_BLOCK = 2048  # vectors per product, read from cache by every query group
_BLAS = ThreadpoolController()  # found once: `threadpool_limits` rescans libraries per call

BAR_DELAY = 1.0  # seconds before the `windows` bar shows (a fast measure shows none)
DOMINANT_WINDOWS = 20_000  # windows from which one document's share of them is checked


UNIT_SLACK = 1e-2  # how far a stored vector's length may be from 1 (float32 rounding: 1e-6)


def _suspect(scores: np.ndarray, unit: bool) -> np.ndarray:
    """The scores a damaged row would give: not finite, or (`unit`: the rows are an index
    file's unit-length vectors) a cosine beyond ±1 or exactly 0 (a zeroed row). Only these
    rows are checked (`DenseIndex._refuse`): a length per row would read the whole matrix
    again on the first query."""
    with np.errstate(invalid="ignore"):
        if not unit:
            return ~np.isfinite(scores)
        return ~(np.abs(scores) <= 1 + UNIT_SLACK) | (scores == 0)


class DenseIndex:
    """Vectors with the chunk each belongs to; search returns chunk positions and scores."""

    def __init__(self, vectors: np.ndarray, owners: np.ndarray,
                 source: Path | str | None = None) -> None:
        owners = np.asarray(owners, dtype=np.int64)
        steps = np.diff(owners)
        if (len(vectors) != len(owners)
                or (owners.size and (owners[0] != 0 or np.any((steps != 0) & (steps != 1))))):
            raise ValueError("owners must give each vector its chunk position, running "
                             "0, 1, 2, ... with no gaps (every chunk owns at least one vector)")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)  # a mapped file stays so
        self.owners = owners
        self.source = source  # the file the vectors came from, for errors
        self._finite = False  # True once a full scan found every row finite
        self.n_chunks = int(owners[-1]) + 1 if owners.size else 0
        self._starts = np.flatnonzero(np.r_[True, steps > 0]) if owners.size else owners

    def chunk_scores(self, queries: np.ndarray) -> np.ndarray:
        """(n_queries, n_chunks) best-window cosine scores."""
        with np.errstate(invalid="ignore", over="ignore"):  # a damaged row: refused below
            sims = similarities(np.asarray(queries, dtype=np.float32), self.vectors)
        if not self._finite and len(queries):  # one query's scores see every row
            suspect = _suspect(sims[0], self.source is not None)
            if suspect.any():
                self._refuse(np.flatnonzero(suspect))
            self._finite = True
        if len(self._starts) == len(self.owners):  # one vector per chunk (or none at all)
            return sims
        return np.maximum.reduceat(sims, self._starts, axis=1)

    def maxp_at(self, query_vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Best-window cosine with `query_vector` of only the chunks at `positions` (the
        rerankers' candidates): their windows' rows, not the whole matrix."""
        starts = self._starts
        ends = np.append(starts[1:], len(self.owners))
        lo, hi = starts[positions], ends[positions]
        rows = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)]) if positions.size \
            else np.empty(0, dtype=np.int64)
        if not rows.size:
            return np.zeros(len(positions))
        with np.errstate(invalid="ignore", over="ignore"):  # a damaged row: refused below
            sims = self.vectors[rows] @ np.asarray(query_vector, dtype=np.float32)
        if not self._finite and (suspect := _suspect(sims, self.source is not None)).any():
            self._refuse(rows[suspect])
        firsts = np.concatenate([[0], np.cumsum(hi - lo)[:-1]]).astype(np.int64)
        return np.maximum.reduceat(sims, firsts).astype(np.float64)

    def _refuse(self, rows: np.ndarray) -> None:
        """Raise for the first of `rows` (vector rows whose score was `_suspect`) that holds
        a NaN or infinite value or is not of unit length; return when none does (the query
        itself was not finite or not of unit length)."""
        for lo in range(0, len(rows), SUB_BLOCK):  # a NaN query makes every row suspect
            block = rows[lo:lo + SUB_BLOCK]
            vectors = self.vectors[block].astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                length = np.sqrt((vectors * vectors).sum(axis=1))
            finite = np.isfinite(vectors).all(axis=1)
            unit = self.source is None or np.abs(length - 1) <= UNIT_SLACK
            damaged = np.flatnonzero(~finite | ~unit)
            if damaged.size:
                at = damaged[0]
                what = (f"has length {length[at]:.3g}, not 1" if finite[at]
                        else "holds NaN or infinite values")
                raise RagkitError(f"{self.source or 'dense vectors'}: row {int(block[at])} "
                                  f"{what}; the index is damaged, rebuild it")

    def search(self, queries: np.ndarray, k: int, block: int = 256
               ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-k (chunk positions, scores) per query, best first; ties by lower position."""
        out = []
        for lo in range(0, len(queries), block):
            scores = self.chunk_scores(queries[lo:lo + block])
            best, values = top_k_rows(scores, k)
            out.extend(zip(best, values))
        return out

    def save(self, folder: Path) -> None:
        np.save(folder / "dense_vectors.npy", self.vectors)
        np.save(folder / "dense_owners.npy", self.owners)

    @classmethod
    def load(cls, folder: Path) -> "DenseIndex":
        return cls(np.load(folder / "dense_vectors.npy"), np.load(folder / "dense_owners.npy"))


def similarities(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """queries @ vectors.T, the same bit for bit on any number of cores and in any company.

    A multi-threaded BLAS splits a product by its core count and the parts' sums round
    differently (measured: 82,278 of 1.5M scores change from 1 to 2 threads), so a near tie
    could rank one way on a laptop and the other in CI. Here each block of VECTOR_BLOCK
    vectors is single-threaded; blocks run on the usable cores. A BLAS also rounds a row by
    the product's row count: one row takes the matrix-vector path (18,487 of 20,000 scores
    differed), and OpenBLAS's AVX2 kernels round a row of a 2-, 4-, 8- or 16-row product four
    different ways. So queries go through in groups of exactly QUERY_GROUP rows, the last
    padded with zeros, where a row's scores do not depend on its place or its company: a
    question asked alone (`ragkit ask`, a last batch of one) scores as in `ragkit eval`. Each
    group meets SUB_BLOCK vectors at a time, so a batch reads the vectors from memory once;
    a batch costs about twice one big product (256 queries × 300k vectors: 0.92 s against
    0.45 s, 2 cores), one query the same (53 ms)."""
    n = len(queries)
    rows = -(-n // QUERY_GROUP) * QUERY_GROUP
    padded = np.zeros((rows, queries.shape[1]), dtype=np.float32)
    padded[:n] = queries
    out = np.empty((rows, len(vectors)), dtype=np.float32)

    def block(lo: int) -> None:
        end = min(lo + VECTOR_BLOCK, len(vectors))
        for start in range(lo, end, SUB_BLOCK):
            stop = min(start + SUB_BLOCK, end)
            part = vectors[start:stop].T
            for g in range(0, rows, QUERY_GROUP):
                np.matmul(padded[g:g + QUERY_GROUP], part, out=out[g:g + QUERY_GROUP,
                                                                 start:stop])

    with _BLAS.limit(limits=1, user_api="blas"):
        if len(vectors) <= VECTOR_BLOCK:
            block(0)
        else:
            list(threads().map(block, range(0, len(vectors), VECTOR_BLOCK)))
    return out[:n]


def embed_chunks(embedder, chunks: Sequence[Chunk], window: int, progress: bool
                  ) -> DenseIndex:
    """Dense vectors: MaxP windows of (context + chunk) — each short enough, context
    included, for the embedder's `max_tokens`, so nothing is truncated — or, for an embedder with
    `embed_documents` (voyage-context-3), one vector per chunk with its document's chunks
    embedded together (chunks arrive grouped by document, in order)."""
    if hasattr(embedder, "embed_documents"):
        documents: list[list[str]] = []
        for i, chunk in enumerate(chunks):
            if i == 0 or chunk.doc_id != chunks[i - 1].doc_id:
                documents.append([])
            documents[-1].append(f"{chunk.context}\n\n{chunk.text}" if chunk.context
                                 else chunk.text)
        vectors = embedder.embed_documents(documents, progress=progress)
        dim = getattr(embedder, "dim", 0)
        return DenseIndex(np.concatenate([np.zeros((0, dim), np.float32), *vectors]),
                          np.arange(len(chunks)))
    _prepare(embedder, chunks, window)
    texts, owners = window_texts(embedder, chunks, window, progress)
    if progress:
        _note_dominant_document(chunks, owners)
    vectors = embedder.embed(texts, input_type="document", progress=progress)
    return DenseIndex(vectors, np.array(owners))


def _prepare(embedder, chunks: Sequence[Chunk], window: int) -> None:
    """What the embedder's first request needs (Voyage: its key), made ready before the
    windows are measured — unless its cache holds the first chunk's windows, as a rebuild's
    does: a new build without the key measured them (100,000 chunks: a minute, under a
    `windows` bar) and only then stopped with its one line."""
    if not chunks:
        return
    if hasattr(embedder, "prepare_for"):  # a cached embedder
        embedder.prepare_for(window_texts(embedder, chunks[:1], window)[0])
    elif hasattr(embedder, "prepare"):  # no cache: every text is sent
        embedder.prepare()


def _note_dominant_document(chunks: Sequence[Chunk], owners: Sequence[int]) -> None:
    """Warn, before the wait, when one document makes most of a long embedding run: a 23 MB
    log in a folder of notes made 85 % of 94,908 windows, about 45 minutes, unannounced."""
    if len(owners) < DOMINANT_WINDOWS:
        return
    counts = Counter(chunks[owner].doc_id for owner in owners)
    doc_id, count = counts.most_common(1)[0]
    if len(counts) > 1 and count * 2 >= len(owners):  # one document alone was asked for
        warnings.warn(f"{doc_id} makes {count:,} of the {len(owners):,} windows to embed "
                      f"({100 * count / len(owners):.0f} %); leave it out of the folder if it "
                      f"is not meant to be searched", RagkitWarning, stacklevel=3)


def window_texts(embedder, chunks: Sequence[Chunk], window: int, progress: bool = False
                 ) -> tuple[list[str], list[int]]:
    """The (context + window) texts `embed_chunks` embeds, and each one's chunk position:
    windows of `window` tokens, stride `window // 2`, each short enough, context included,
    for `embedder.max_tokens` (unless the embedder never truncates).

    Measuring the windows in the model's tokens is slow at scale (100,000 chunks: about a
    minute before the first vector), so with `progress` a `windows` bar counts the chunks."""
    texts, owners = [], []
    limit = getattr(embedder, "max_tokens", None) if getattr(embedder, "truncates", True) else None
    bar = progress_bar(chunks, desc="windows", unit="chunk", leave=False, disable=not progress,
                       delay=BAR_DELAY)
    for position, chunk in enumerate(bar):
        prefix = f"{chunk.context}\n\n" if chunk.context else ""

        def measure(pieces: list[str], prefix: str = prefix) -> list[int]:
            return embedder.token_lengths([prefix + p for p in pieces])

        for piece in windows(chunk.text, window, window // 2, limit=limit,
                             measure=measure if limit else None):
            texts.append(prefix + piece)
            owners.append(position)
    return texts, owners
