"""Exact top-k BM25 from impact-ordered prefixes of the long posting lists.

What it is: `ImpactOrder` keeps, for every row of the BM25 weight matrix holding more than
1/LONG of the documents, its postings' positions sorted by weight descending (int32, ties
by document). `pruned_top_k` finds a query's k best documents without scoring them all: the
candidates are the documents of the query's short rows and of the first p postings of each
long row by weight; each candidate is scored exactly (its weight looked up in every query
row, summed in query order from 0.0, the order `BM25._score`'s bincount adds in, so the
scores are the same bit for bit). A document outside the candidates holds, for each long
row, at most the weight at that row's prefix boundary, so its score is at most the sum of
those boundary weights (rounding is monotone, the sum is taken in query order too). When
that bound is strictly below the k-th candidate score θ, no other document reaches or ties
θ and the candidates' top k is the exact top k, ties to the lower index included.

What it is not: an approximation, nor valid for weights ≤ 0 (a term's idf ≤ 0): the caller
(`BM25.search`) only uses it when every query idf is positive, and scans all documents when
it returns None (the prefixes would grow too large to pay).

Method: Fagin's threshold algorithm (Fagin, Lotem & Naor 2003, "Optimal aggregation
algorithms for middleware") over impact-ordered lists, short lists scored whole as in
MaxScore (Turtle & Flood 1995).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ragkit.dense import top_k
from ragkit.lexical.bm25_scan import DenseRows

LONG = 100  # a row is long (impact-ordered) when it holds more than 1/LONG of the documents
MARGIN = 1e-9  # the bound must stay below θ by this relative margin (float safety)
BUDGET = 4  # give up when candidates × query rows exceed the documents / BUDGET
FLOOR = 1 << 16  # ... and this many (below it, scoring candidates costs under a millisecond)


class ImpactOrder:
    """Per long row of `weights` (terms × documents, CSR, documents ascending per row), the
    positions of its postings by weight descending; computed row by row on first use unless
    given (`terms` ascending and their rows' `order` concatenated, as `arrays` returns)."""

    def __init__(self, weights: sparse.csr_matrix, terms: np.ndarray | None = None,
                 order: np.ndarray | None = None) -> None:
        self.weights = weights
        self.rows: dict[int, np.ndarray] = {}
        if terms is not None and order is not None:
            df = np.diff(weights.indptr)[terms]
            if int(df.sum()) != order.size:
                raise ValueError(f"impact order holds {order.size} postings, its rows {df.sum()}")
            ends = np.cumsum(df)
            for term, end, size in zip(terms.tolist(), ends.tolist(), df.tolist()):
                self.rows[term] = order[end - size:end]

    def is_long(self, term: int) -> bool:
        w = self.weights
        return int(w.indptr[term + 1] - w.indptr[term]) * LONG > w.shape[1]

    def row(self, term: int) -> np.ndarray | None:
        """The row's positions by weight descending, or None for a short row."""
        order = self.rows.get(term)
        if order is None and self.is_long(term):
            w = self.weights
            data = w.data[w.indptr[term]:w.indptr[term + 1]]
            order = self.rows[term] = np.argsort(-data, kind="stable").astype(np.int32)
        return order

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every long row's term id (ascending) and their orders concatenated (for saving)."""
        df = np.diff(self.weights.indptr)
        terms = np.flatnonzero(df * LONG > self.weights.shape[1])
        orders = [self.row(int(t)) for t in terms]
        return terms, np.concatenate(orders) if orders else np.empty(0, dtype=np.int32)


def pruned_top_k(weights: sparse.csr_matrix, impact: ImpactOrder, dense: DenseRows,
                 ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The k best documents for the query term ids `ids` (query order, repeats kept) as
    (indices, scores), exactly `BM25.search`'s; None when no row is long or the candidates
    grow past the budget. Every weight of the query's rows must be > 0. A candidate's weight
    in a row with a dense copy (`dense`) is read from it, else found by binary search."""
    terms = list(dict.fromkeys(ids.tolist()))
    orders = [impact.row(t) for t in terms]
    if k <= 0 or all(o is None for o in orders):
        return None
    query = _Query(weights, terms, orders, ids, [dense.row(t) for t in terms])
    depth = k
    while True:
        docs = query.candidates(depth)
        if docs is None:
            return None
        scores, bound = query.scores(docs), query.bound(depth)
        if bound == 0.0:  # every row taken whole: the candidates are all the matches
            return _top(docs, scores, k)
        if docs.size >= k:
            theta = np.partition(scores, docs.size - k)[docs.size - k]
            if bound * (1 + MARGIN) < theta:
                return _top(docs, scores, k)
            depth = query.depth_below(theta, depth)  # there θ only grows: the next pass ends
        else:
            depth *= 2


class _Query:
    """One query's rows: their documents and weights, prefixes, bounds."""

    def __init__(self, weights, terms, orders, ids, dense) -> None:
        self.spans = [(int(weights.indptr[t]), int(weights.indptr[t + 1])) for t in terms]
        self.indices, self.data = weights.indices, weights.data
        self.orders, self.n_docs, self.dense = orders, weights.shape[1], dense
        slot = {t: i for i, t in enumerate(terms)}
        self.slots = [slot[t] for t in ids.tolist()]  # query order, repeats kept

    def candidates(self, depth: int) -> np.ndarray | None:
        """Documents (ascending) of the short rows and the long rows' first `depth`."""
        sizes = [hi - lo if o is None else min(depth, hi - lo)
                 for (lo, hi), o in zip(self.spans, self.orders)]
        if sum(sizes) * len(self.slots) > max(self.n_docs // BUDGET, FLOOR):
            return None
        parts = [self.indices[lo:hi] if o is None else self.indices[lo + o[:depth].astype(np.int64)]
                 for (lo, hi), o in zip(self.spans, self.orders)]
        docs = np.concatenate(parts)
        docs.sort()  # a sort and a mask: np.unique's hashing measured 10x slower here
        return docs[np.concatenate(([True], docs[1:] != docs[:-1]))]

    def scores(self, docs: np.ndarray) -> np.ndarray:
        """Exact scores of `docs`: each row's weight (0.0 where absent) added in query order
        from 0.0, as bincount adds a document's postings, so bit for bit `BM25._score`'s."""
        rows = [self._row_weights(lo, hi, docs) if d is None else d[docs]
                for (lo, hi), d in zip(self.spans, self.dense)]
        out = np.zeros(docs.size)
        for slot in self.slots:
            out += rows[slot]
        return out

    def _row_weights(self, lo: int, hi: int, docs: np.ndarray) -> np.ndarray:
        row = self.indices[lo:hi]
        if row.size <= docs.size:  # scatter the row's weights into the (sorted) documents
            out = np.zeros(docs.size)
            at = np.searchsorted(docs, row)
            found = at < docs.size
            found[found] = docs[at[found]] == row[found]
            out[at[found]] = self.data[lo:hi][found]
            return out
        at = np.minimum(np.searchsorted(row, docs), row.size - 1)
        return np.where(row[at] == docs, self.data[lo + at], 0.0)

    def bound(self, depth: int) -> float:
        """Sum in query order of each row's largest weight outside its first `depth`
        postings (0.0 for a row taken whole): no document outside the candidates beats it."""
        edge = [0.0 if o is None or depth >= hi - lo else float(self.data[lo + int(o[depth])])
                for (lo, hi), o in zip(self.spans, self.orders)]
        total = 0.0
        for slot in self.slots:
            total += edge[slot]
        return total

    def depth_below(self, theta: float, depth: int) -> int:
        """The smallest depth > `depth` whose bound is below θ (with the margin); the
        bound falls as the depth grows and is 0.0 past the longest row."""
        lo, hi = depth + 1, max(end - start for start, end in self.spans)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.bound(mid) * (1 + MARGIN) < theta:
                hi = mid
            else:
                lo = mid + 1
        return lo


def _top(docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    best, values = top_k(scores, k)
    return docs[best].astype(np.int64), values
