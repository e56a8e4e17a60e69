"""The full scan of a long BM25 query, with the top k taken without sorting every document.

What it is: `scan_top_k` scores every document for a query whose weights are all > 0 and
returns its exact top k (score descending, ties to the lower index), as `BM25.search` does.
Rows holding at least 1/DENSE of the documents are added as dense vectors (`DenseRows`, one
float64 per document, built on first use and kept in memory: a vector add is ~10x faster
than scattering a million postings); the other rows are scattered into the scores. Rows are
added one by one in query order from 0.0 and a row's documents are distinct, so each
document's score is the same sum in the same order as `BM25._score`'s bincount: bit for
bit. The top k: the k-th best score of every STRIDE-th document is a lower bound of the k-th
best overall, so only the documents at or above it are ranked (ties at the cut included).

What it is not: for weights ≤ 0 (their zero-score matches would be lost), nor a cache
bounded by anything but the index: at most 1/DENSE of the postings' rows get a dense copy,
8 bytes × documents each (about 8 MB per row at 1M documents).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ragkit.dense import top_k

DENSE = 8  # a row holding >= 1/DENSE of the documents is added as a dense vector
STRIDE = 64  # the sample for the k-th score's lower bound: every STRIDE-th document


class DenseRows:
    """Dense copies of the long rows of `weights` (terms × documents), built on first use."""

    def __init__(self, weights: sparse.csr_matrix) -> None:
        self.weights = weights
        self.rows: dict[int, np.ndarray] = {}

    def row(self, term: int) -> np.ndarray | None:
        """The row as one weight per document (0.0 where absent), or None for a shorter row."""
        dense = self.rows.get(term)
        w = self.weights
        lo, hi = int(w.indptr[term]), int(w.indptr[term + 1])
        if dense is None and (hi - lo) * DENSE >= w.shape[1]:
            dense = self.rows[term] = np.zeros(w.shape[1])
            dense[w.indices[lo:hi]] = w.data[lo:hi]
        return dense


def scan_scores(weights: sparse.csr_matrix, dense: DenseRows, ids: np.ndarray) -> np.ndarray:
    """Every document's score for the term ids `ids` (query order, repeats kept)."""
    out = np.zeros(weights.shape[1])
    for term in ids.tolist():
        row = dense.row(term)
        if row is not None:
            out += row
        else:
            lo, hi = int(weights.indptr[term]), int(weights.indptr[term + 1])
            out[weights.indices[lo:hi]] += weights.data[lo:hi]
    return out


def scan_top_k(weights: sparse.csr_matrix, dense: DenseRows, ids: np.ndarray, k: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """The k best documents (indices, scores) for `ids`, all of whose weights are > 0: the
    documents scoring > 0, so fewer than k when fewer match."""
    scores = scan_scores(weights, dense, ids)
    sample = scores[::STRIDE]
    floor = np.partition(sample, sample.size - k)[sample.size - k] if 0 < k < sample.size \
        else 0.0
    keep = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores)
    best, values = top_k(scores[keep], k)
    return keep[best], values
