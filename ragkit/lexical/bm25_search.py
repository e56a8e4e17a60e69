"""How `BM25` finds a query's top k: which of the exact paths a query takes.

What it is: `search` routes a query's vocabulary ids to the cheapest exact path. Every
idf positive and the query's postings long (over 1/LONG of a posting per document): the
two-pass scan (`bm25_scan`: float32 over all documents, then exact scores of the few that
can make the cut); shorter postings: the candidates' scores from their postings alone
(`matches`). A query with an idf ≤ 0 (a shared term can weigh 0 or less) takes `matches`
or `score_all`: its candidates are the documents sharing a term, whatever their score.
`BM25.exhaustive = True` scores every document with one bincount (the reference the
tests and benchmarks compare with). All paths give the same documents, scores (bit for
bit) and tie order. What it is not: a query parser (ids come from `BM25._query_ids`).
"""
from __future__ import annotations

import numpy as np

from ragkit.ranking import top_k
from ragkit.lexical.bm25_data import BM25Data
from ragkit.lexical.bm25_scan import scan_top_k

LONG = 64  # postings per document above which a query scans (1/8 to 1/64 tried at 1M:
#             1/64 had the lowest p95)


def search(model: BM25Data, ids: np.ndarray, k: int, ties: bool = False
           ) -> tuple[np.ndarray, np.ndarray]:
    """The k best candidates for the query ids `ids` as (indices, scores): score
    descending, ties to the lower index (`BM25.search`); with `ties`, also every further
    candidate whose score equals the k-th's in single precision."""
    if bool((model.idf[ids] > 0).all()) and is_long(model, ids):
        if not model.exhaustive:
            return scan_top_k(model.weights, model.dense_rows, ids, k, ties)
        # every weight > 0: a candidate scores > 0 and any other document 0.0, so the
        # top k of all documents are the top k candidates when there are k of them
        scores = score_all(model, ids)[0]
        if np.count_nonzero(scores) >= k:
            return top_k(scores, k, ties)
        docs = np.flatnonzero(scores)
        best, values = top_k(scores[docs], k, ties)
        return docs[best], values
    docs, scores = matches(model, ids)
    best, values = top_k(scores, k, ties)
    return docs[best], values


def is_long(model: BM25Data, ids: np.ndarray) -> bool:
    """True when the query's postings are long enough for million-entry arrays to pay."""
    w = model.weights
    return int((w.indptr[ids + 1] - w.indptr[ids]).sum()) * LONG > model.n_docs


def matches(model: BM25Data, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The candidates (ascending) and their scores, from the query terms' postings alone
    when they are short (a million-document index then costs no million-entry arrays).

    np.bincount adds each document's weights in posting order, which is query order,
    starting from 0.0, as `score_all` does, so the scores are the same bit for bit.
    """
    w = model.weights
    if is_long(model, ids):  # long postings: dense is cheaper
        scores, matched = score_all(model, ids)
        docs = np.flatnonzero(matched)
        return docs, scores[docs]
    spans = [(int(w.indptr[i]), int(w.indptr[i + 1])) for i in ids]
    if not spans:
        return np.empty(0, dtype=np.int64), np.empty(0)
    docs = np.concatenate([w.indices[lo:hi] for lo, hi in spans])
    unique, inverse = np.unique(docs, return_inverse=True)
    weights = np.concatenate([w.data[lo:hi] for lo, hi in spans])
    return unique.astype(np.int64), np.bincount(inverse, weights=weights,
                                                minlength=unique.size)


def score_all(model: BM25Data, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores of all documents, and a mask of those in some query term's postings.

    np.bincount adds each document's weights in the order given, query order, from 0.0:
    rank-bm25's order of addition, 1.5x faster than adding row by row into the scores.
    A posting is a stored entry of the weight matrix, zero weights included: nothing
    here or in `load` drops explicit zeros, so a zero-weight match stays a match.
    """
    w, n = model.weights, model.n_docs
    if ids.size == 0:
        return np.zeros(n), np.zeros(n, dtype=bool)
    spans = [(int(w.indptr[i]), int(w.indptr[i + 1])) for i in ids]
    docs = np.concatenate([w.indices[lo:hi] for lo, hi in spans])
    out = np.bincount(docs, weights=np.concatenate([w.data[lo:hi] for lo, hi in spans]),
                      minlength=n)
    if (model.idf[ids] > 0).all():  # every weight > 0: matched is scored above 0
        return out, out > 0
    return out, np.bincount(docs, minlength=n) > 0
