"""Pruned BM25 with a depth per long row, code tables and reused buffers: each new branch
built on purpose, every result compared with the exhaustive scan (same documents, scores
compared with ==)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit.lexical import BM25
from ragkit.lexical import bm25_prune
from ragkit.lexical.bm25_prune import _passes, _Query, pruned_top_k
from ragkit.lexical.bm25_scan import scan_scores

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_corpus  # noqa: E402


def exhaustive(bm25: BM25, query, k: int) -> tuple[list, list]:
    bm25.prune = False
    try:
        idx, scores = bm25.search(query, k)
    finally:
        bm25.prune = True
    return idx.tolist(), scores.tolist()


def pruned(bm25: BM25, query, k: int) -> tuple[list, list]:
    idx, scores = bm25.search(query, k)
    return idx.tolist(), scores.tolist()


def start(bm25: BM25, query) -> tuple[_Query, list]:
    """A `_Query` as `pruned_top_k` makes it (its marks left in the index's buffer: call
    `finish`)."""
    ids = bm25._query_ids(query)
    terms = list(dict.fromkeys(ids.tolist()))
    orders = [bm25.impact.row(t) for t in terms]
    seen = np.zeros(bm25.n_docs, dtype=bool)
    return _Query(bm25.weights, terms, orders, ids, bm25.dense_rows, bm25.impact, seen), orders


@pytest.fixture(scope="module")
def flat_and_steep() -> BM25:
    """3,000 documents. `a` is in every third, always once in an 8-token document: all its
    weights are equal (a flat row). `b` is in every fifth with 1 to 7 occurrences, in
    documents of 8 to 14 tokens outside `a`'s: its weights fall step by step (a steep row)."""
    docs = []
    for i in range(3000):
        tokens = []
        if i % 5 == 0:
            tokens += ["b"] * (1 + (i // 5) % 7)
        if i % 3 == 0:
            tokens.append("a")
            length = 8
        else:
            length = 8 + i % 7
        tokens += [f"f{(i + j) % 40}" for j in range(max(length - len(tokens), 0))]
        docs.append(tokens)
    return BM25.fit_tokens(docs)


def test_a_flat_row_stays_shallow_while_the_steep_one_is_read_deep(flat_and_steep):
    bm25 = flat_and_steep
    a, b = bm25.vocabulary["a"], bm25.vocabulary["b"]
    lengths = np.diff(bm25.weights.indptr)
    assert lengths[a] == 1000 and lengths[b] == 600 and bm25.impact.row(a) is not None
    row_a = bm25.weights.data[bm25.weights.indptr[a]:bm25.weights.indptr[a + 1]]
    assert np.unique(row_a).size == 1  # flat: one weight
    for k in (1, 10, 40):
        query, orders = start(bm25, ["a", "b"])
        found = _passes(query, orders, k)
        assert found is not None
        depth_a, depth_b = query.done
        assert depth_a < 1000 and depth_a < depth_b, (k, query.done)
        assert (found[0].tolist(), found[1].tolist()) == exhaustive(bm25, ["a", "b"], k)
        assert pruned(bm25, ["a", "b"], k) == exhaustive(bm25, ["a", "b"], k)


def test_deepen_stops_at_the_growth_cap_and_gives_up_when_the_rest_would_not_pay(
        flat_and_steep, monkeypatch):
    bm25 = flat_and_steep
    query, _ = start(bm25, ["b", "a", "b"])
    k = 10
    query.read(query.start(k))
    theta = float(np.sort(query.scores)[-k])
    assert query.bound(query.start(k)) * (1 + bm25_prune.MARGIN) >= theta  # must deepen
    monkeypatch.setattr(bm25_prune, "GROWTH", 10 ** 9)
    full = query.deepen(query.start(k), theta)
    assert query.bound(full) * (1 + bm25_prune.MARGIN) < theta  # the depths that end it
    monkeypatch.setattr(bm25_prune, "GROWTH", 1)
    capped = query.deepen(query.start(k), theta)
    assert capped is not None and capped != full and sum(capped) < sum(full)
    needed = sum(min(d, query.size(r)) - query.done[r] for r, d in enumerate(full))
    monkeypatch.setattr(query, "pays", lambda more: more < needed)
    assert query.deepen(query.start(k), theta) is None


def test_a_query_that_would_cost_more_than_the_scan_is_scanned(generated, words,
                                                               monkeypatch):
    query = f"{words[0]} {words[1]} {words[30]}"
    ids = generated._query_ids(query)
    assert generated._long(ids)
    assert pruned_top_k(generated.weights, generated.impact, generated.dense_rows, ids,
                        10) is not None
    want = {k: exhaustive(generated, query, k) for k in (1, 10, 150)}
    monkeypatch.setattr(bm25_prune, "FLOOR", 0)
    monkeypatch.setattr(bm25_prune, "READ_NS", 10 ** 9)
    assert pruned_top_k(generated.weights, generated.impact, generated.dense_rows, ids,
                        10) is None
    for k in (1, 10, 150):
        assert pruned(generated, query, k) == want[k]
    assert not generated.dense_rows._seen.any()  # marks cleared after giving up


@pytest.fixture(scope="module")
def generated() -> BM25:
    return BM25.fit([t for _, _, t in gen_corpus.documents(3000, size=2000)], tokenizer="auto")


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [w.lower() for w in gen_corpus.vocabulary(2000)]


def dense(bm25: BM25, term: int) -> np.ndarray:
    w = bm25.weights
    row = np.zeros(bm25.n_docs)
    lo, hi = w.indptr[term], w.indptr[term + 1]
    row[w.indices[lo:hi]] = w.data[lo:hi]
    return row


def test_code_tables_give_every_weight_of_a_long_row(generated):
    long = np.flatnonzero(np.diff(generated.weights.indptr) * bm25_prune.LONG
                          > generated.n_docs)
    assert long.size > 50
    for term in long[::5].tolist():
        values, codes = generated.impact.lookup(term)
        assert codes.dtype == (np.uint8 if values.size <= 256 else np.uint16)
        assert values[0] == 0.0
        assert values[codes].tolist() == dense(generated, term).tolist()
    assert generated.impact.lookup(int(np.argmin(np.diff(generated.weights.indptr)))) is None


def test_a_row_of_over_255_weights_gets_two_byte_codes():
    """`a` once in each of 400 documents of 400 different lengths: 400 distinct weights."""
    docs = [["a"] + [f"f{j % 30}" for j in range(i)] for i in range(400)]
    docs += [[f"g{i % 50}", "h"] for i in range(600)]
    bm25 = BM25.fit_tokens(docs)
    term = bm25.vocabulary["a"]
    values, codes = bm25.impact.lookup(term)
    assert values.size == 401 and codes.dtype == np.uint16
    assert values[codes].tolist() == dense(bm25, term).tolist()
    for query in (["a", "f3"], ["f7", "a", "a"], ["a", "h"]):
        for k in (1, 10, 150):
            assert pruned(bm25, query, k) == exhaustive(bm25, query, k), (query, k)


def test_the_scan_buffer_is_overwritten_whatever_it_held(generated, words):
    for query in (f"{words[1500]} {words[0]}", f"{words[0]} {words[1500]}", ""):
        ids = generated._query_ids(query)
        dirty = np.full(generated.n_docs, np.nan)
        got = scan_scores(generated.weights, generated.dense_rows, ids, dirty)
        assert got is dirty and got.tolist() == generated.scores(query).tolist()
    first = generated._query_ids(words[1500])[0]
    assert generated.dense_rows.row(int(first)) is None  # scattered first: zeros first


def test_a_concurrent_search_gets_its_own_buffers(generated, words):
    query = f"{words[0]} {words[2]} {words[9]}"
    want = {k: exhaustive(generated, query, k) for k in (1, 10, 150)}
    with generated.dense_rows.scratch() as (scores, seen):
        scores[:] = np.nan  # the held buffer, garbage to a second user
        for k in (1, 10, 150):
            assert pruned(generated, query, k) == want[k]
            assert generated.search(query, k)[1].tolist() == want[k][1]
        assert not seen.any()
    for k in (1, 10, 150):
        assert pruned(generated, query, k) == want[k]
    assert not generated.dense_rows._seen.any()


def test_marks_are_cleared_after_an_error(generated):
    with pytest.raises(RuntimeError):
        with generated.dense_rows.scratch() as (_, seen):
            seen[::7] = True
            raise RuntimeError("stop")
    assert not generated.dense_rows._seen.any()


def test_many_queries_leave_no_marks(generated):
    for query in gen_corpus.queries(40, size=2000):
        for k in (1, 10, 150):
            assert pruned(generated, query, k) == exhaustive(generated, query, k), (query, k)
    assert not generated.dense_rows._seen.any()
