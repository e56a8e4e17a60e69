"""The two-pass BM25 scan (`bm25_scan`: float32 over every document, then exact float64
scores of the few that can make the cut) against the exhaustive path (`BM25.exhaustive`).

Equal means the same documents in the same order and the same scores compared with ==.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit.datasets import load_shipped
from ragkit.documents import Document
from ragkit.fusion import with_ties
from ragkit.lexical import BM25, bm25_batch, bm25_scan
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from tests.test_pipeline import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_corpus  # noqa: E402


@pytest.fixture(autouse=True)
def scan_long_queries(monkeypatch):
    """Long queries take the scan as `BM25.search` routes them in a large index: these
    corpora are small enough for the batched path (`bm25_batch`), which would skip it."""
    monkeypatch.setattr(bm25_batch, "LONG_POSTINGS", 0)


def search(bm25: BM25, query, k: int, exhaustive: bool, ties: bool = False):
    bm25.exhaustive = exhaustive
    try:
        return bm25.search(query, k, ties)
    finally:
        bm25.exhaustive = False


def assert_same(bm25: BM25, query, k: int, ties: bool = False) -> None:
    got, got_s = search(bm25, query, k, False, ties)
    want, want_s = search(bm25, query, k, True, ties)
    assert got.tolist() == want.tolist(), (query, k)
    assert got_s.tolist() == want_s.tolist(), (query, k)  # float == on every score


def scans(bm25: BM25, query) -> bool:
    ids = bm25._query_ids(query)
    return bool(bm25._long(ids) and (bm25.idf[ids] > 0).all())


@pytest.fixture(scope="module")
def generated() -> BM25:
    """3,000 documents over a 2,000-word Zipf vocabulary: the top words are in nearly all."""
    return BM25.fit([t for _, _, t in gen_corpus.documents(3000, size=2000)], tokenizer="auto")


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [w.lower() for w in gen_corpus.vocabulary(2000)]


def test_shipped_golden_queries_scan_to_the_exhaustive_result():
    """The shipped corpus indexed as `ragkit index` does, with the `code` tokenizer (`auto`
    adds Korean morphology, whose model takes seconds to load and changes nothing here)."""
    shipped = load_shipped(ROOT / "data")
    bm25 = Pipeline.build(shipped.documents, IndexConfig(embedder=None, tokenizer="code"),
                          progress=False).bm25
    scanned = 0
    for query in shipped.queries:
        for k in (1, 10, 150):
            assert_same(bm25, query.text, k)
            assert_same(bm25, query.text, k, ties=True)
        scanned += scans(bm25, query.text)
    assert scanned > len(shipped.queries) // 2  # the scan ran, not only the short path


def test_generated_queries_scan_to_the_exhaustive_result(generated, words):
    queries = gen_corpus.queries(60, size=2000) + [
        words[0], f"{words[0]} {words[1]}", f"{words[0]} {words[1]} {words[2]} {words[3]}",
        f"{words[0]} {words[0]} {words[0]}", f"{words[1500]} {words[0]} {words[1500]}",
        f"{words[2]} qqzzx {words[40]}", "qqzzx", ""]
    scanned = 0
    for query in queries:
        for k in (1, 10, 150, 2999, 5000):
            assert_same(generated, query, k)
            assert_same(generated, query, k, ties=True)
        scanned += scans(generated, query)
    assert scanned > 50
    assert any(generated.dense_rows.row(t) is not None for t in range(len(words)))


@pytest.mark.parametrize("stripes", [1, 7, 64, 3000, 16384])
def test_every_stripe_count_finds_the_exhaustive_result(generated, words, stripes,
                                                        monkeypatch):
    """The k-th largest stripe maximum bounds θ from below however the documents are
    striped: fewer stripes than k (every match is then looked at), stripes padded past the
    last document (3,000 = 428·7 + 4), one document a stripe, stripes mostly padding."""
    monkeypatch.setattr(bm25_scan, "STRIPES", stripes)
    for query in gen_corpus.queries(30, size=2000) + [words[0], f"{words[0]} {words[2]}"]:
        for k in (1, 10, 150, 428, 429, 1499, 2999):
            assert_same(generated, query, k)
            assert_same(generated, query, k, ties=True)


def test_the_candidates_are_those_within_the_bound_of_theta(generated, words):
    """Pass 1 hands pass 2 exactly the documents whose float32 score reaches θ·margin
    (the selection done here over all documents at once), and no more."""
    for query in (f"{words[0]} {words[2]}", f"{words[1]} {words[30]} {words[400]}"):
        ids = generated._query_ids(query)
        approx = bm25_scan._approximate(generated.weights, generated.dense_rows, ids,
                                        np.empty(generated.n_docs, dtype=np.float32))
        gamma = (ids.size + 2) * 2.0 ** -23
        for k in (1, 10, 150):
            theta = np.sort(approx)[::-1][k - 1]
            cut = theta * (1 - gamma) * (1 - bm25_scan.TIE) / (1 + gamma)
            want = np.flatnonzero(approx >= cut)
            got = bm25_scan._candidates(generated.weights, generated.dense_rows, ids, k)
            assert got.tolist() == want.tolist(), (query, k)
            assert k <= got.size < k + 40, got.size


def test_scores_closer_than_single_precision_rank_by_their_exact_value():
    """Five documents whose scores differ in the 12th digit: float32 sees one score, the
    exact pass orders them (and `ties` keeps them all: the tie rule sees them equal)."""
    bm25 = BM25.fit_tokens([["a", "x"]] * 5 + [["y", "z"]] * 20)
    row = bm25.vocabulary["a"]
    lo = bm25.weights.indptr[row]
    bm25.weights.data[lo:lo + 5] = 1.0 + np.array([3, 1, 4, 1, 5]) * 1e-12
    bm25._dense = None  # dense copies are built from the weights on first use
    assert scans(bm25, ["a"])
    assert len(set(np.float32(bm25.weights.data[lo:lo + 5]).tolist())) == 1
    idx, scores = bm25.search(["a"], 2)
    assert idx.tolist() == [4, 2] and scores[0] > scores[1]
    idx, _ = bm25.search(["a"], 2, ties=True)
    assert idx.tolist() == [4, 2, 0, 1, 3]  # exact order; 1 and 3 tie exactly: lower first
    assert_same(bm25, ["a"], 2, ties=True)


def test_ties_equal_deeper_fetches_of_the_tie_rule(generated, words):
    """`search(..., ties=True)` gives in one search what `with_ties` gets by fetching
    deeper: the top k and every further document tied with the k-th in single precision."""
    queries = [words[0], f"{words[0]} {words[3]}", f"{words[700]} {words[1]}",
               f"{words[0]} {words[0]} {words[9]}"]

    def fetch(texts, depth):
        return [[(int(i), float(s)) for i, s in zip(*generated.search(t, depth))]
                for t in texts]

    def tied(texts, n):
        return [[(int(i), float(s)) for i, s in zip(*generated.search(t, n, ties=True))]
                for t in texts]

    ranked = np.sort(generated.scores(words[0]).astype(np.float32))[::-1][:400]
    cuts = (np.flatnonzero(ranked[:-1] == ranked[1:]) + 1).tolist()  # k-th tied with next
    longer = 0
    for k in [1, 10, 37, 150] + cuts[:4]:
        want = with_ties(fetch, queries, k)
        assert tied(queries, k) == want
        longer += sum(len(r) > k for r in want)
    assert longer > 3  # ties past the cut happened


def test_a_stripe_floor_equal_to_the_kth_score_keeps_the_tie():
    """300 identical matching documents: the stripes' floor is the tied score itself."""
    bm25 = BM25.fit_tokens([["a", "x"]] * 300 + [["y", "z"]] * 700)
    for k in (1, 3, 150, 300, 301):
        got, scores = bm25.search(["a"], k)
        assert got.tolist() == list(range(min(k, 300))) and len(set(scores.tolist())) == 1
        assert bm25.search(["a"], k, ties=True)[0].tolist() == list(range(300))
        assert_same(bm25, ["a"], k)


def test_dense_rows_stay_within_their_budget(generated, words, monkeypatch):
    n = generated.n_docs
    monkeypatch.setattr(bm25_scan, "DENSE_BYTES", 3 * 4 * n)
    rows = bm25_scan.DenseRows(generated.weights)
    rows.row(0)
    assert rows.rows is not None and len(rows.rows) == 3
    df = np.diff(generated.weights.indptr)
    assert sorted(rows.rows) == sorted(np.argsort(-df, kind="stable")[:3].tolist())
    generated._dense = rows  # the other long rows are scattered: still exact
    try:
        for query in gen_corpus.queries(20, size=2000) + [f"{words[0]} {words[5]}"]:
            for k in (1, 10, 150):
                assert_same(generated, query, k)
    finally:
        generated._dense = None


def test_pipeline_bm25_and_hybrid_modes_agree(words):
    docs = [Document(f"d{i}", t) for i, (_, _, t) in
            enumerate(gen_corpus.documents(600, size=300))]
    pipeline = Pipeline.build(docs, IndexConfig(embedder="hash-test"), progress=False,
                              embedder=HashEmbedder())
    small = [w.lower() for w in gen_corpus.vocabulary(300)]
    queries = [small[0], f"{small[0]} {small[1]}", f"{small[2]} {small[100]} {small[2]}"]
    for mode in ("bm25", "hybrid"):
        runs = []
        for exhaustive in (False, True):
            pipeline.bm25.exhaustive = exhaustive
            runs.append(pipeline.search(queries, 10, SearchConfig(mode=mode)))
        pipeline.bm25.exhaustive = False
        assert runs[0] == runs[1], mode


def test_older_folders_with_impact_files_load_and_search_the_same(generated, words, tmp_path):
    generated.save(tmp_path / "idx")
    for name in ("impact.npy", "impact_terms.npy"):  # what earlier versions also wrote
        np.save(tmp_path / "idx" / name, np.zeros(3, dtype=np.int32))
    loaded = BM25.load(tmp_path / "idx")
    query = f"{words[0]} {words[5]} {words[9]}"
    for k in (1, 10, 150):
        want, got = generated.search(query, k), loaded.search(query, k)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
