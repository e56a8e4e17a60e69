"""The full scan of a long BM25 query: a single-precision pass, then exact scores of a few.

What it is: `scan_top_k` returns a query's exact top k (score descending, ties to the lower
index; with `ties`, also every further document whose score equals the k-th's in single
precision, as the tie rule compares) when every weight of the query's rows is > 0. Two
passes:

1. every document's approximate score `a`, summed in float32: rows holding at least
   1/DENSE of the documents are added as dense float32 vectors (`DenseRows`), first, the
   others scattered. With m query terms, in whatever order they are added, each `a` is
   within γ = (m + 2)·2⁻²³ (relative) of the float64 score `s` (all weights > 0: m
   roundings of at most 2⁻²⁴ of a partial sum no larger than s, counted twice over);
2. with θ the k-th largest `a`, at least k documents score s ≥ θ/(1+γ), so the k-th best s
   is at least that, and any document in the answer (s within a single-precision step,
   2⁻²³ relative, of the k-th best) has a ≥ θ(1−γ)(1−2⁻²²)/(1+γ). θ and those candidates
   are found without a pass over a million flags: the documents are dealt into STRIPES
   stripes (document i into stripe i mod STRIPES), whose maxima one vectorized pass
   gives; the k-th largest maximum, v, is at most θ (k stripes hold a document at least
   that high), so only the stripes whose maximum reaches v(1−γ)(1−2⁻²²)/(1+γ) are looked
   into (about k of them). The few candidates get exact scores: each row's weight found
   by binary search, added in query order from 0.0, the order `BM25._score`'s bincount
   adds in, so bit for bit the same scores.

Why: the float64 scan read and wrote 8 bytes per document per dense row and its p95 at a
million chunks stayed above 5 ms; float32 halves that traffic and the second pass costs
microseconds. Finding the candidates by a comparison and `flatnonzero` over all documents
cost more than a dense row's sum (0.75 ms a query at 1M); the stripes' maxima and the
~150 stripes looked into cost about 0.6 ms together. Pass 1 runs on one thread: its
two halves on two threads were slower at every k (the handoffs and the GIL between
dozens of small numpy calls cost more than the second core's memory bandwidth gave)
(measured in benchmarks/bench_index.py --latency-of).

What it is not: for weights ≤ 0 (their zero-score matches would be lost), nor an
approximation (the second pass makes it exact). Memory: the dense rows are built on first
use, all at once, most frequent term first, at most DENSE_BYTES in all (4 bytes × documents
each; at 1M generated chunks 69 rows, 276 MB).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ragkit.ranking import top_k

DENSE = 16  # a row holding >= 1/DENSE of the documents is added as a dense float32 vector
DENSE_BYTES = 1 << 30  # at most this much memory for the dense rows
STRIPES = 16384  # the documents in this many stripes, whose maxima bound θ from below
TIE = 2.0 ** -22  # covers one single-precision step (2⁻²³ relative) with room to spare


class DenseRows:
    """float32 copies of the rows of `weights` (terms × documents) holding at least 1/DENSE
    of the documents, most frequent first within DENSE_BYTES, built on first `row` call."""

    def __init__(self, weights: sparse.csr_matrix) -> None:
        self.weights = weights
        self.rows: dict[int, np.ndarray] | None = None

    def row(self, term: int) -> np.ndarray | None:
        """The row as one float32 weight per document (0 where absent), or None."""
        if self.rows is None:
            self.rows = self._build()
        return self.rows.get(term)

    def _build(self) -> dict[int, np.ndarray]:
        w, n = self.weights, self.weights.shape[1]
        df = np.diff(w.indptr)
        terms = np.flatnonzero(df * DENSE >= n)
        rows: dict[int, np.ndarray] = {}
        most = DENSE_BYTES // (4 * max(n, 1))
        for term in terms[np.argsort(-df[terms], kind="stable")][:most].tolist():
            lo, hi = int(w.indptr[term]), int(w.indptr[term + 1])
            rows[term] = row = np.zeros(n, dtype=np.float32)
            row[w.indices[lo:hi]] = w.data[lo:hi]
        return rows


def exact_scores(weights: sparse.csr_matrix, ids: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """The float64 scores of `docs`: each query row's weight (0.0 where absent) added in
    query order from 0.0, as bincount adds a document's postings (pass 2). A repeated
    term's weights are looked up once and added again (the same values, so the same sums)."""
    docs = docs.astype(weights.indices.dtype)  # else searchsorted converts the whole row
    out = np.zeros(docs.size)
    if docs.size == 0:
        return out
    found: dict[int, np.ndarray] = {}
    for term in ids.tolist():
        if term not in found:
            lo, hi = int(weights.indptr[term]), int(weights.indptr[term + 1])
            if hi == lo:
                continue
            row = weights.indices[lo:hi]
            at = np.minimum(np.searchsorted(row, docs), row.size - 1)
            found[term] = np.where(row[at] == docs, weights.data[lo + at], 0.0)
        out += found[term]
    return out


def scan_top_k(weights: sparse.csr_matrix, dense: DenseRows, ids: np.ndarray, k: int,
               ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The k best documents (indices, scores) for `ids`, all of whose weights are > 0
    (only documents scoring > 0, so fewer than k when fewer match); with `ties`, followed
    by every further one whose float32 score equals the k-th's (see the module docstring)."""
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    docs = _candidates(weights, dense, ids, k)
    exact = exact_scores(weights, ids, docs)
    best, values = top_k(exact, k, ties=ties)
    return docs[best].astype(np.int64), values


def _candidates(weights: sparse.csr_matrix, dense: DenseRows, ids: np.ndarray, k: int
                ) -> np.ndarray:
    """Pass 1: the documents (ascending) whose approximate score reaches
    θ(1−γ)(1−TIE)/(1+γ), found through the maxima of STRIPES stripes of documents."""
    n = weights.shape[1]
    stripes = -(-n // STRIPES)  # documents per stripe; stripe j holds j, j + STRIPES, ...
    padded = np.empty(stripes * STRIPES, dtype=np.float32)
    padded[n:] = 0  # padding scores 0, as a document without a query term
    approx = _approximate(weights, dense, ids, padded[:n])
    gamma = (ids.size + 2) * 2.0 ** -23
    margin = (1 - gamma) * (1 - TIE) / (1 + gamma)
    grid = padded.reshape(stripes, STRIPES)  # column j: stripe j
    tops = grid.max(axis=0)  # element-wise over rows: one vectorized pass
    # k stripes whose maxima reach v hold k documents scoring ≥ v, so θ ≥ v: every
    # document at or above the cut θ·margin is in a stripe whose maximum reaches v·margin
    floor = float(np.partition(tops, STRIPES - k)[STRIPES - k]) * margin \
        if k < STRIPES else 0.0
    if floor <= 0:  # fewer than k stripes with a match: look at every document
        docs = np.flatnonzero(approx > 0)
        if docs.size <= k:  # every match is a candidate
            return docs
        values = approx[docs]
    else:
        chosen = np.flatnonzero(tops >= floor)
        rows, cols = np.nonzero(grid[:, chosen] >= floor)
        docs = np.sort(rows * STRIPES + chosen[cols])
        values = approx[docs]
    theta = float(np.partition(values, values.size - k)[values.size - k])
    return docs[values >= theta * margin]


def _approximate(weights: sparse.csr_matrix, dense: DenseRows, ids: np.ndarray,
                 approx: np.ndarray) -> np.ndarray:
    """Every document's float32 score into `approx`: dense rows first (float32 sums in
    any order stay within γ; pass 2 restores the order), the other rows scattered."""
    terms = sorted(ids.tolist(), key=lambda term: dense.row(term) is None)
    for term in terms[_start(dense, terms, approx):]:
        row = dense.row(term)
        if row is not None:
            approx += row
            continue
        lo, hi = int(weights.indptr[term]), int(weights.indptr[term + 1])
        # float32 weights: ufunc.at then adds in place, 2x faster than `approx[idx] += data`
        # (numpy >= 1.25; with float64 data it takes a slow casting path, 35x slower)
        np.add.at(approx, weights.indices[lo:hi], weights.data[lo:hi].astype(np.float32))
    return approx


def _start(dense: DenseRows, terms: list[int], approx: np.ndarray) -> int:
    """Set `approx` to the sum of the leading dense rows of `terms` (up to two, in order),
    else to 0.0; return how many terms that added. Writing the first sum directly skips a
    pass over the documents (zeroing 4 MB, then adding, costs about a row more)."""
    rows = [dense.row(term) for term in terms[:2]]
    if rows and rows[0] is not None:
        if len(rows) > 1 and rows[1] is not None:
            np.add(rows[0], rows[1], out=approx)
            return 2
        np.copyto(approx, rows[0])
        return 1
    approx.fill(0)
    return 0
