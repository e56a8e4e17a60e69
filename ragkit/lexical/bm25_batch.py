"""Many BM25 queries at once: gather, scatter-add and top k as whole-batch numpy passes.

What it is: `search_many`, what `BM25.search_many` runs (and `BM25.search`, for one
query, in an index of up to ONE_QUERY_DOCS documents). Queries whose postings are short
are answered together, a chunk of them at a time: every posting of every query of the
chunk is gathered in one pass, keyed (query, document), and added into one dense
accumulator, the queries' first terms, then their second terms, ... (`_chunk`): each key
gets its weights in query-term order from 0.0, the order `bm25_search.score_all`'s bincount
and rank-bm25 add in, so the scores are the same bit for bit. Each (query, document) pair
found is a candidate, as in `BM25.search`, whatever its score. The top k of every query is
then found without a Python loop per query: one sort of approximate keys (query, −score)
gives each query a score below which nothing can make its top k, and an exact lexsort of
the few candidates above it orders them by score descending, then document ascending
(with `ties`, followed by those whose single-precision score equals the k-th's, as
`ranking.top_k` does).

Why: at 20,000 documents a query has a few hundred postings, and the per-query path spent
its time in thirty-odd numpy calls of a few microseconds each (0.17 ms a query against
rank-bm25-rs's 0.05 ms); batched, the call overhead is shared by a chunk of queries and
what remains is a few passes over the postings, about 0.04 ms a query
(benchmarks/bench_bm25.py). The accumulator is kept small (CHUNK_ENTRIES, 2 MB) so its
random writes stay in cache: 8 MB was 10 % slower, 32 MB 35 %.

What it is not: a change of results, nor used everywhere. Queries with long postings
(over LONG_POSTINGS, and over 1/`bm25_search.LONG` of a posting per document) take
`bm25_search.search`, whose float32 scan over dense rows beats gathering their postings;
`exhaustive` models take it for every query; and so does every query of an index too large
for MIN_CHUNK queries in MAX_ENTRIES (over 262,144 documents), where a chunk of one or two
queries measured 1.5-2x slower than `search` per query (at a million documents). Memory:
at most MAX_ENTRIES × 9 bytes (18 MB) for the accumulator and its flags.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragkit.lexical import bm25_search
from ragkit.lexical.bm25_data import BM25Data

CHUNK_ENTRIES = 1 << 18  # queries per chunk × documents: the accumulator (2 MB) stays in cache
MIN_CHUNK = 8  # fewer queries a chunk than this (a larger index) and the chunk grows to it,
MAX_ENTRIES = 1 << 21  # ... up to this many entries (16 MB); beyond, `search` runs per query
ONE_QUERY_DOCS = 1 << 17  # `BM25.search` (one query) batches up to this many documents:
#                          1.8x faster at 20k, 1.4x at 100k, but 13 % slower at 200k, where
#                          a lone query's fresh 1.6 MB accumulator costs more than it saves
LONG_POSTINGS = 1 << 15  # a query with more postings than this (and long) takes the scan
TINY = 2.0 ** -149  # the smallest single-precision step (a subnormal)

Result = tuple[np.ndarray, np.ndarray]


def search_many(model: BM25Data, ids: np.ndarray, counts: np.ndarray, k: int,
                ties: bool = False, done: Callable[[int], object] | None = None
                ) -> list[Result]:
    """`bm25_search.search(model, q, k, ties)` for each query q, in order: the same
    documents, scores (bit for bit) and order. `ids` holds every query's vocabulary ids
    one query after another, `counts` how many each has. `done(n)` is called as each n
    queries are answered (a progress bar's update)."""
    nq = counts.size
    if k <= 0:
        if done is not None:
            done(nq)
        return [(np.empty(0, dtype=np.int64), np.empty(0)) for _ in range(nq)]
    ids, counts = ids.astype(np.int64), counts.astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    results: list[Result | None] = [None] * nq
    n = model.n_docs
    per_chunk = min(CHUNK_ENTRIES // n, 1 << 15)
    if per_chunk < MIN_CHUNK:
        per_chunk = MIN_CHUNK if MIN_CHUNK * n <= MAX_ENTRIES else 0
    per_chunk = min(per_chunk, nq)  # a few queries: a smaller accumulator
    scans = _scans(model, ids, bounds) if per_chunk else np.arange(nq)
    for i in scans.tolist():
        results[i] = bm25_search.search(model, ids[bounds[i]:bounds[i + 1]], k, ties)
    if done is not None and scans.size:
        done(scans.size)
    batched = np.ones(nq, dtype=bool)
    batched[scans] = False
    order = np.flatnonzero(batched).tolist()
    ids = ids[np.repeat(batched, counts)]
    counts = counts[batched]
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    acc = np.zeros(per_chunk * n)
    seen = np.zeros(per_chunk * n, dtype=bool)
    for lo in range(0, len(order), max(per_chunk, 1)):  # (none when per_chunk is 0)
        hi = min(lo + per_chunk, len(order))
        found = _chunk(model, ids[bounds[lo]:bounds[hi]], counts[lo:hi], k, ties, acc, seen)
        for i, result in zip(order[lo:hi], found):
            results[i] = result
        if done is not None:
            done(hi - lo)
    return results  # type: ignore[return-value]


def _scans(model: BM25Data, ids: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The queries (`ids[bounds[i]:bounds[i + 1]]`) that take `bm25_search.search`: all of
    them for an `exhaustive` model, else those it would scan (every idf > 0, long
    postings) whose postings are too many to gather profitably."""
    nq = bounds.size - 1
    if model.exhaustive:
        return np.arange(nq)
    w = model.weights
    postings = np.concatenate([[0], np.cumsum(w.indptr[ids + 1] - w.indptr[ids])])
    per_query = postings[bounds[1:]] - postings[bounds[:-1]]
    long = np.flatnonzero((per_query > LONG_POSTINGS)
                          & (per_query * bm25_search.LONG > model.n_docs))
    return np.array([i for i in long.tolist()
                     if (model.idf[ids[bounds[i]:bounds[i + 1]]] > 0).all()], dtype=np.int64)


def _chunk(model: BM25Data, terms: np.ndarray, counts: np.ndarray, k: int, ties: bool,
           acc: np.ndarray, seen: np.ndarray) -> list[Result]:
    """The results of up to len(acc) // n_docs queries (`terms`, `counts` of them each):
    their postings summed into `acc` (left all zero again, `seen` all False), the
    candidates' scores read out, then `_top_k` per query.

    The postings are added term place by term place: every query's first term, then every
    second term, ... Within one place no (query, document) key repeats (a row holds a
    document once), so `acc[keys] += weights` is exact and cheaper than np.add.at; and
    each key gets its terms' weights in query order, from 0.0, as rank-bm25 adds them."""
    w, n, nq = model.weights, model.n_docs, counts.size
    query = np.repeat(np.arange(nq), counts)
    place = np.arange(terms.size) - np.repeat(np.cumsum(counts) - counts, counts)
    by_place = np.argsort(place, kind="stable")
    terms, query = terms[by_place], query[by_place]
    starts = w.indptr[terms].astype(np.int64)
    lengths = w.indptr[terms + 1] - starts
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    # posting j of term t sits at indptr[t] + j: one repeat and one arange for them all
    at = np.repeat(starts - (ends - lengths), lengths)
    at += np.arange(total)
    query = np.repeat(query, lengths)
    docs = w.indices[at]
    key = query * n
    key += docs
    weights = w.data[at]
    new = np.empty(total, dtype=bool)
    cuts = np.concatenate([[0], ends])[np.searchsorted(place[by_place], np.arange(
        int(counts.max(initial=0)) + 1))].tolist()
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        part = key[lo:hi]
        acc[part] += weights[lo:hi]
        np.logical_not(seen[part], out=new[lo:hi])  # a (query, document) not met before
        seen[part] = True
    first = np.flatnonzero(new)
    key = key[first]
    scores = acc[key]
    acc[key] = 0.0
    seen[key] = False
    return _top_k(scores, docs[first].astype(np.int64), query[first], nq, k, ties)


def _top_k(scores: np.ndarray, docs: np.ndarray, query: np.ndarray, nq: int, k: int,
           ties: bool) -> list[Result]:
    """Per query (0..nq-1; `query` is each candidate's, in any order), its k best (docs,
    scores): score descending, then document ascending; with `ties`, followed by every
    further one whose float32 score equals the k-th's. A candidate can only be in the answer at or above its query's k-th
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
