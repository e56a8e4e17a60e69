"""Many BM25 queries at once: gather, scatter-add and top k as whole-batch numpy passes.

What it is: `search_many`, what `BM25.search_many` runs. Queries whose postings are short
are answered together, a chunk of them at a time: every posting of every query of the
chunk is gathered in one pass, keyed (query, document), and added into one dense
accumulator of CHUNK_ENTRIES floats (`np.add.at` adds in posting order, which is query-term
order, from 0.0: the order `bm25_search.score_all`'s bincount and rank-bm25 add in, so the
scores are the same bit for bit). Each (query, document) pair found is a candidate, as in
`BM25.search`, whatever its score. The top k of every query is then found without a
Python loop per query: one sort of approximate keys (query, −score) gives each query a
score below which nothing can make its top k, and an exact lexsort of the few candidates
above it orders them by score descending, then document ascending (with `ties`, followed
by those whose single-precision score equals the k-th's, as `ranking.top_k` does).

Why: at 20,000 documents a query has a few hundred postings, and the per-query path spent
its time in thirty-odd numpy calls of a few microseconds each (0.17 ms a query against
rank-bm25-rs's 0.05 ms); batched, the call overhead is shared by a chunk of queries and
what remains is a few passes over the postings (benchmarks/bench_bm25.py).

What it is not: a change of results. Queries with long postings (over LONG_POSTINGS, and
over 1/`bm25_search.LONG` of a posting per document) still take `bm25_search.search`,
whose float32 scan over dense rows beats gathering their postings; `exhaustive` models take
it for every query. Memory: CHUNK_ENTRIES × 16 bytes of buffers (16 MB), or 16 bytes per
document when an index holds more documents than that.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ragkit.lexical import bm25_search
from ragkit.lexical.bm25_data import BM25Data

CHUNK_ENTRIES = 1 << 20  # queries per chunk × documents: the accumulator's size
LONG_POSTINGS = 1 << 15  # a query with more postings than this (and long) takes the scan
TINY = 2.0 ** -149  # the smallest single-precision step (a subnormal)

Result = tuple[np.ndarray, np.ndarray]


def search_many(model: BM25Data, queries: Sequence[np.ndarray], k: int, ties: bool = False,
                done: Callable[[int], object] | None = None) -> list[Result]:
    """`bm25_search.search(model, ids, k, ties)` for each array of query ids, in order,
    the same documents, scores (bit for bit) and order. `done(n)` is called as each n
    queries are answered (a progress bar's update)."""
    results: list[Result | None] = [None] * len(queries)
    if k <= 0 or model.n_docs == 0:
        empty = (np.empty(0, dtype=np.int64), np.empty(0))
        if done is not None:
            done(len(queries))
        return [empty] * len(queries)
    batched = []
    for i, ids in enumerate(queries):
        if model.exhaustive or _scans(model, ids):
            results[i] = bm25_search.search(model, ids, k, ties)
            if done is not None:
                done(1)
        else:
            batched.append(i)
    n = model.n_docs
    per_chunk = max(1, min(CHUNK_ENTRIES // n, 1 << 15))
    acc = np.zeros(per_chunk * n)
    stamp = np.empty(per_chunk * n, dtype=np.int64)
    for lo in range(0, len(batched), per_chunk):
        chunk = batched[lo:lo + per_chunk]
        found = _chunk(model, [queries[i] for i in chunk], k, ties, acc, stamp)
        for i, result in zip(chunk, found):
            results[i] = result
        if done is not None:
            done(len(chunk))
    return results  # type: ignore[return-value]


def _scans(model: BM25Data, ids: np.ndarray) -> bool:
    """True when `bm25_search.search` would scan (every idf > 0, long postings) and the
    postings are too many to gather profitably."""
    if not ids.size:
        return False
    w = model.weights
    postings = int((w.indptr[ids + 1] - w.indptr[ids]).sum())
    return (postings > LONG_POSTINGS and postings * bm25_search.LONG > model.n_docs
            and bool((model.idf[ids] > 0).all()))


def _chunk(model: BM25Data, queries: list[np.ndarray], k: int, ties: bool,
           acc: np.ndarray, stamp: np.ndarray) -> list[Result]:
    """The results of up to len(acc) // n_docs queries: their postings summed into `acc`
    (left all zero again), the candidates' scores read out, then `_top_k` per query."""
    w, n, nq = model.weights, model.n_docs, len(queries)
    terms = np.concatenate(queries).astype(np.int64) if nq else np.empty(0, np.int64)
    counts = np.fromiter((q.size for q in queries), dtype=np.int64, count=nq)
    starts = w.indptr[terms].astype(np.int64)
    lengths = w.indptr[terms + 1] - starts
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    # posting j of term t sits at indptr[t] + j: one repeat and one arange for them all
    at = np.repeat(starts - (ends - lengths), lengths)
    at += np.arange(total)
    query = np.repeat(np.repeat(np.arange(nq, dtype=np.int32), counts), lengths)
    docs = w.indices[at]
    key = query.astype(np.int64)
    key *= n
    key += docs
    np.add.at(acc, key, w.data[at])  # in posting order: query-term order, from 0.0
    # one posting per distinct key: each key remembers one of its positions
    order = np.arange(total, dtype=np.int64)
    stamp[key] = order
    first = np.flatnonzero(stamp[key] == order)
    key = key[first]
    scores = acc[key]
    acc[key] = 0.0
    return _top_k(scores, docs[first].astype(np.int64), query[first], nq, k, ties)


def _top_k(scores: np.ndarray, docs: np.ndarray, query: np.ndarray, nq: int, k: int,
           ties: bool) -> list[Result]:
    """Per query (`query`, ascending), its k best (docs, scores): score descending, then
    document ascending; with `ties`, followed by every further one whose float32 score
    equals the k-th's. A candidate can only be in the answer at or above its query's k-th
    score (within a float32 step with `ties`); `_floor` bounds that from below."""
    counts = np.bincount(query, minlength=nq)
    floor = _floor(scores, query, counts, k)
    if ties:
        floor -= np.abs(floor) * 2.0 ** -22 + TINY
    keep = np.flatnonzero(scores >= floor[query])
    scores, docs, query = scores[keep], docs[keep], query[keep]
    order = np.lexsort((docs, -scores, query))
    scores, docs, query = scores[order], docs[order], query[order]
    kept = np.bincount(query, minlength=nq)
    first = np.cumsum(kept) - kept
    rank = np.arange(scores.size) - first[query]
    chosen = rank < k
    if ties and scores.size:
        kth = scores[np.minimum(first + k - 1, scores.size - 1)].astype(np.float32)
        chosen |= scores.astype(np.float32) == kth[query]  # (no rank >= k where kept <= k)
    pick = np.flatnonzero(chosen)
    scores, docs = scores[pick], docs[pick]
    bounds = np.searchsorted(query[pick], np.arange(nq + 1)).tolist()
    return [(docs[a:b], scores[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _floor(scores: np.ndarray, query: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """For each query, a score at or below its k-th best (−inf with at most k candidates).

    One float sort of the keys query·C + (high − score), C above the spread of the scores,
    puts each query's candidates together, best first; the key at a query's k-th place
    gives its k-th score but for the rounding of the keys (a few units in the last place
    of the largest key), which the floor subtracts. Sorting values, not indices, is 2x
    cheaper than an argsort, and the exact order is settled by `_top_k` among the few left.
    """
    floor = np.full(counts.size, -np.inf)
    big = np.flatnonzero(counts > k)
    if not big.size:
        return floor
    high, low = float(scores.max()), float(scores.min())
    spread = 2.0 * (high - low) + 1.0
    keys = query * spread
    keys += high - scores
    keys.sort()
    first = np.cumsum(counts) - counts
    kth = keys[first[big] + k - 1] - big * spread  # high − (k-th score), up to rounding
    slack = 8 * float(np.spacing(max(abs(float(keys[-1])), abs(high), abs(low), 1.0)))
    floor[big] = high - kth - slack
    return floor
