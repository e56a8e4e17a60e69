"""Exact top-k BM25 from impact-ordered prefixes of the long posting lists.

What it is: `ImpactOrder` keeps, for every row of the BM25 weight matrix holding more than
1/LONG of the documents, its postings' positions sorted by weight descending (int32, ties
by document), and builds on first use a row's code table (`lookup`: 1-2 bytes per
document) for looking up a candidate's weight. `pruned_top_k` finds a query's k best
documents without scoring them all: the candidates are the documents of the query's short
rows and of the first p_i postings of each long row i by weight; each candidate is scored
exactly (its weight looked up in every query row, summed in query order from 0.0, the order
`BM25._score`'s bincount adds in, so the scores are the same bit for bit). A document
outside the candidates holds, for each long row, at most the weight at that row's prefix
boundary, so its score is at most the sum of those boundary weights (rounding is monotone,
the sum is taken in query order too). When that bound is strictly below the k-th candidate
score θ, no other document reaches or ties θ and the candidates' top k is the exact top k,
ties to the lower index included. Each row gets its own depth: the next pass deepens the
rows whose boundary weight falls most per posting read (a flat row, its weights nearly
equal, stays shallow), and scores only the documents it adds.

What it is not: an approximation, nor valid for weights ≤ 0 (a term's idf ≤ 0): the caller
(`bm25_search`) only uses it when every query idf is positive, and scans all documents when
it returns None (reading on would cost more than the scan, by the measured costs below).

Method: Fagin's threshold algorithm (Fagin, Lotem & Naor 2003, "Optimal aggregation
algorithms for middleware") over impact-ordered lists, short lists scored whole as in
MaxScore (Turtle & Flood 1995).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ragkit.lexical.bm25_scan import DenseRows

LONG = 100  # a row is long (impact-ordered) when it holds more than 1/LONG of the documents
MARGIN = 1e-9  # the bound must stay below θ by this relative margin (float safety)
# Costs at 1M documents (CPU ns, measured): a posting read into the candidates, and a
# candidate's weight looked up in one query row; the full scan (`bm25_scan`) per document,
# per dense row and document, and per posting of a row scattered. The pruned search gives
# up when the postings still to read would cost more than the scan.
READ_NS, LOOKUP_NS = 90, 20
SCAN_NS, DENSE_NS, SCATTER_NS = 1.5, 0.5, 9
GROWTH = 4  # a pass reads at most this many times the postings of the one before
FLOOR = 1 << 16  # never give up below this many candidates × query rows (under a millisecond)


class ImpactOrder:
    """Per long row of `weights` (terms × documents, CSR, documents ascending per row), the
    positions of its postings by weight descending; computed row by row on first use unless
    given (`terms` ascending and their rows' `order` concatenated, as `arrays` returns)."""

    def __init__(self, weights: sparse.csr_matrix, terms: np.ndarray | None = None,
                 order: np.ndarray | None = None) -> None:
        self.weights = weights
        self.rows: dict[int, np.ndarray] = {}
        self.tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
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

    def lookup(self, term: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A long row as a table of its distinct weights (0.0 first, for absent documents)
        and one code per document indexing it (uint8, uint16 past 255 weights): a
        candidate's weight is table[codes[doc]], the stored float itself. Built on first
        use from the impact order (1-2 bytes per document, kept), None for a short row."""
        found = self.tables.get(term)
        order = self.row(term) if found is None else None
        if order is not None:
            w = self.weights
            lo = int(w.indptr[term])
            ranked = w.data[lo + order.astype(np.int64)]  # weight descending
            new = np.concatenate(([True], ranked[1:] != ranked[:-1]))
            rank = np.cumsum(new)  # 1 for the largest weight, ...
            dtype = np.uint8 if rank[-1] < 256 else np.uint16 if rank[-1] < 65536 else np.int32
            codes = np.zeros(w.shape[1], dtype=dtype)
            codes[w.indices[lo + order.astype(np.int64)]] = rank
            found = self.tables[term] = np.concatenate(([0.0], ranked[new])), codes
        return found

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every long row's term id (ascending) and their orders concatenated (for saving)."""
        df = np.diff(self.weights.indptr)
        terms = np.flatnonzero(df * LONG > self.weights.shape[1])
        orders = [self.row(int(t)) for t in terms]
        return terms, np.concatenate(orders) if orders else np.empty(0, dtype=np.int32)


def pruned_top_k(weights: sparse.csr_matrix, impact: ImpactOrder, dense: DenseRows,
                 ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The k best documents for the query term ids `ids` (query order, repeats kept) as
    (indices, scores), exactly `BM25.search`'s; None when no row is long or reading on
    would cost more than the full scan. Every weight of the query's rows must be > 0.

    Each pass reads deeper into the long rows (`_Query.deepen`: a depth per row) and scores
    only the documents it adds; θ, the k-th score so far, only grows from pass to pass."""
    terms = list(dict.fromkeys(ids.tolist()))
    orders = [impact.row(t) for t in terms]
    if k <= 0 or all(o is None for o in orders):
        return None
    with dense.scratch() as (_, seen):
        query = _Query(weights, terms, orders, ids, dense, impact, seen)
        try:
            return _passes(query, orders, k)
        finally:
            seen[query.docs] = False  # as `scratch` wants it back


def _passes(query: _Query, orders: list, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Read deeper until the bound is below θ; None when that stops paying first."""
    depths = query.start(k)
    while True:
        if not query.read(depths):
            return None
        bound, scores = query.bound(depths), query.scores
        if bound == 0.0:  # every row taken whole: the candidates are all the matches
            return query.top(k)
        if scores.size >= k:
            theta = np.partition(scores, scores.size - k)[scores.size - k]
            if bound * (1 + MARGIN) < theta:
                return query.top(k)
            depths = query.deepen(depths, theta)
            if depths is None:
                return None
        else:
            depths = [d if o is None else 2 * d for d, o in zip(depths, orders)]


class _Query:
    """One query's rows and the candidates read so far: a row's depth is how many of its
    postings (by weight descending) are candidates, a short row's its length (read whole)."""

    def __init__(self, weights, terms, orders, ids, dense: DenseRows, impact: ImpactOrder,
                 seen: np.ndarray) -> None:
        self.spans = [(int(weights.indptr[t]), int(weights.indptr[t + 1])) for t in terms]
        # plain arrays: a memory-mapped array's item access costs a microsecond more
        self.indices, self.data = np.asarray(weights.indices), np.asarray(weights.data)
        self.orders, self.n_docs = orders, weights.shape[1]
        # a candidate's weight: a dense copy, else a long row's code table, else a search
        self.dense = [dense.row(t) for t in terms]
        self.tables = [None if d is not None else impact.lookup(t)
                       for t, d in zip(terms, self.dense)]
        slot = {t: i for i, t in enumerate(terms)}
        self.slots = [slot[t] for t in ids.tolist()]  # query order, repeats kept
        self.repeats = [self.slots.count(i) for i in range(len(terms))]
        self.done = [0] * len(terms)  # postings of each row read so far
        self.seen = seen  # True for the candidates so far
        self.scan_ns = self.n_docs * SCAN_NS + sum(
            self.n_docs * DENSE_NS if self.dense[s] is not None
            else self.size(s) * SCATTER_NS for s in self.slots)
        self.docs, self.scores = np.empty(0, dtype=np.int64), np.empty(0)

    def pays(self, more: int) -> bool:
        """Whether reading `more` postings (at most as many new candidates) costs less
        than the full scan, or is small anyway."""
        slots = len(self.slots)
        return ((self.docs.size + more) * slots <= FLOOR
                or more * (READ_NS + slots * LOOKUP_NS) <= self.scan_ns)

    def size(self, row: int) -> int:
        return self.spans[row][1] - self.spans[row][0]

    def start(self, k: int) -> list[int]:
        """The first depths: k postings of each long row, short rows whole."""
        return [self.size(r) if o is None else k for r, o in enumerate(self.orders)]

    def read(self, depths: list[int]) -> bool:
        """Add each row's postings up to `depths` to the candidates, scoring only documents
        not seen before; False (nothing read) when that would not pay (`pays`)."""
        ends = [min(d, self.size(r)) for r, d in enumerate(depths)]
        more = sum(e - d for e, d in zip(ends, self.done))
        if not self.pays(more):
            return False
        fresh = []
        for (lo, hi), order, start, end in zip(self.spans, self.orders, self.done, ends):
            if end > start:
                part = self.indices[lo:hi] if order is None else \
                    self.indices[lo + order[start:end].astype(np.int64)]
                part = part[~self.seen[part]]  # a row's documents are distinct
                self.seen[part] = True
                fresh.append(part)
        self.done = ends
        if fresh:
            docs = np.sort(np.concatenate(fresh)).astype(np.int64)  # sorted gathers run faster
            self.docs = np.concatenate((self.docs, docs))
            self.scores = np.concatenate((self.scores, self._score(docs)))
        return True

    def _score(self, docs: np.ndarray) -> np.ndarray:
        """Exact scores of `docs`: each row's weight (0.0 where absent) added in query order
        from 0.0, as bincount adds a document's postings, so bit for bit `BM25._score`'s."""
        rows = [d[docs] if d is not None else t[0][t[1][docs]] if t is not None
                else self._search(lo, hi, docs)
                for (lo, hi), d, t in zip(self.spans, self.dense, self.tables)]
        out = np.zeros(docs.size)
        for slot in self.slots:
            out += rows[slot]
        return out

    def _search(self, lo: int, hi: int, docs: np.ndarray) -> np.ndarray:
        """A short row's weights of `docs` (any order), by binary search in the row."""
        row = self.indices[lo:hi]
        at = np.minimum(np.searchsorted(row, docs), row.size - 1)
        return np.where(row[at] == docs, self.data[lo + at], 0.0)

    def edge(self, row: int, depth: int) -> float:
        """The row's largest weight outside its first `depth` postings (0.0 past its end)."""
        (lo, hi), order = self.spans[row], self.orders[row]
        if order is None or depth >= hi - lo:
            return 0.0
        return float(self.data[lo + int(order[depth])])

    def bound(self, depths: list[int]) -> float:
        """Sum in query order of each row's `edge`: no document outside the candidates
        scores more."""
        return _total([self.edge(row, d) for row, d in enumerate(depths)], self.slots)

    def deepen(self, depths: list[int], theta: float) -> list[int] | None:
        """Deeper depths: the long row whose bound falls most per posting read is doubled,
        again and again, until the bound is below θ (with the margin). A flat row (its
        weights nearly equal) is then read only as far as it pays, a steep one further.
        Returns the depths reached at GROWTH times the long-row postings read now (θ grows
        meanwhile), or None when reading to the depths that end it would not pay."""
        depths, capped = list(depths), None
        long = [r for r, o in enumerate(self.orders) if o is not None]
        cap = GROWTH * sum(depths[r] for r in long)
        edges = [self.edge(r, d) for r, d in enumerate(depths)]
        steps = {r: min(2 * depths[r], self.size(r)) for r in long}
        after = {r: self.edge(r, steps[r]) for r in long}
        while _total(edges, self.slots) * (1 + MARGIN) >= theta:
            if capped is None and sum(depths[r] for r in long) >= cap:
                capped = list(depths)
            best, pick = (-1.0, 0), -1  # the largest fall per posting; on a tie (both
            for row in long:  # flat so far) the shorter step, so rows take turns
                if depths[row] < steps[row]:
                    cost = steps[row] - depths[row]
                    gain = (self.repeats[row] * (edges[row] - after[row]) / cost, -cost)
                    if gain > best:
                        best, pick = gain, row
            depths[pick], edges[pick] = steps[pick], after[pick]
            steps[pick] = min(2 * steps[pick], self.size(pick))
            after[pick] = self.edge(pick, steps[pick])
        if capped is None:
            return depths
        more = sum(min(d, self.size(r)) - self.done[r] for r, d in enumerate(depths))
        return capped if self.pays(more) else None

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The candidates' k best, score descending, ties to the lower document."""
        docs, scores = self.docs, self.scores
        if docs.size > k:
            kth = np.partition(scores, docs.size - k)[docs.size - k]
            tied = np.flatnonzero(scores == kth)
            above = np.flatnonzero(scores > kth)
            tied = tied[np.argsort(docs[tied], kind="stable")[:k - above.size]]
            keep = np.concatenate((above, tied))
            docs, scores = docs[keep], scores[keep]
        order = np.lexsort((docs, -scores))
        return docs[order], scores[order]


def _total(edges: list[float], slots: list[int]) -> float:
    """The rows' `edges` summed in query order (`slots`, repeats kept) from 0.0."""
    total = 0.0
    for slot in slots:
        total += edges[slot]
    return total
