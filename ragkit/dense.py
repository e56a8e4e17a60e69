"""Exact top-k dense search over L2-normalised vectors, one or several vectors per chunk.

What it is: a matrix product and `argpartition` — exact, no approximate index, fine up to a
few hundred thousand vectors on a laptop. A chunk may own several vectors (windows of its
text); its score is the best window's score (MaxP: Dai & Callan, SIGIR 2019). That is how
chunks longer than the embedder's window (256 word-pieces for MiniLM) are searched: every
part of the chunk gets seen, and the window that matches the question wins.

What it is not: a vector database. Vectors live in one float32 `.npy` file.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ragkit.chunking import TOKEN

_SEGMENT = re.compile(r"(?<=[.!?。])\s+|\n+")


def windows(text: str, size: int = 96, stride: int = 48) -> list[str]:
    """Overlapping windows of about `size` chunker tokens, cut at sentence or line ends.

    A text of at most `size` tokens is its own single window.
    """
    spans, start = [], 0
    for match in _SEGMENT.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    segments = [(a, b, len(TOKEN.findall(text[a:b]))) for a, b in spans if b > a]
    if sum(n for _, _, n in segments) <= size:
        return [text]
    out, first = [], 0
    while first < len(segments):
        last, total = first, 0
        while last < len(segments) and (total + segments[last][2] <= size or last == first):
            total += segments[last][2]
            last += 1
        out.append(text[segments[first][0]:segments[last - 1][1]])
        if last == len(segments):
            break
        advanced, step = first, 0
        while advanced < last - 1 and step < stride:
            step += segments[advanced][2]
            advanced += 1
        first = max(advanced, first + 1)
    return out


class DenseIndex:
    """Vectors with the chunk each belongs to; search returns chunk positions and scores."""

    def __init__(self, vectors: np.ndarray, owners: np.ndarray) -> None:
        owners = np.asarray(owners, dtype=np.int64)
        if len(vectors) != len(owners) or (owners.size and np.any(np.diff(owners) < 0)):
            raise ValueError("owners must be sorted and give one chunk per vector")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.owners = owners
        self.n_chunks = int(owners[-1]) + 1 if owners.size else 0
        self._starts = np.flatnonzero(np.r_[True, np.diff(owners) > 0])

    def chunk_scores(self, queries: np.ndarray) -> np.ndarray:
        """(n_queries, n_chunks) best-window cosine scores."""
        sims = np.asarray(queries, dtype=np.float32) @ self.vectors.T
        if len(self._starts) == len(self.owners):
            return sims
        return np.maximum.reduceat(sims, self._starts, axis=1)

    def search(self, queries: np.ndarray, k: int, block: int = 256
               ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-k (chunk positions, scores) per query, best first; ties by lower position."""
        out = []
        for lo in range(0, len(queries), block):
            scores = self.chunk_scores(queries[lo:lo + block])
            for row in scores:
                out.append(top_k(row, k))
        return out

    def save(self, folder: Path) -> None:
        np.save(folder / "dense_vectors.npy", self.vectors)
        np.save(folder / "dense_owners.npy", self.owners)

    @classmethod
    def load(cls, folder: Path) -> "DenseIndex":
        return cls(np.load(folder / "dense_vectors.npy"), np.load(folder / "dense_owners.npy"))


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the k largest scores, best first, ties broken by lower index."""
    k = min(k, scores.size)
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=scores.dtype)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    order = np.lexsort((part, -scores[part]))
    best = part[order]
    return best, scores[best]
