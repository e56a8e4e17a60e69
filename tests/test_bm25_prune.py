"""Pruned BM25 top k (impact-ordered prefixes, `bm25_prune`) against the exhaustive scan.

Equal means the same documents in the same order and the same scores compared with ==.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit.datasets import load_shipped
from ragkit.documents import Document, RagkitError
from ragkit.lexical import BM25
from tests.test_pipeline import HashEmbedder
from ragkit.lexical.bm25_prune import pruned_top_k
from ragkit.lexical.bm25_scan import scan_top_k
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig, _with_ties

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_corpus  # noqa: E402


def both(bm25: BM25, query, k: int) -> tuple[tuple, tuple]:
    bm25.prune = True
    pruned = bm25.search(query, k)
    bm25.prune = False
    scanned = bm25.search(query, k)
    bm25.prune = True
    return pruned, scanned


def assert_same(bm25: BM25, query, k: int) -> None:
    (got, got_s), (want, want_s) = both(bm25, query, k)
    assert got.tolist() == want.tolist(), (query, k)
    assert got_s.tolist() == want_s.tolist(), (query, k)  # float == on every score


def was_pruned(bm25: BM25, query, k: int) -> bool:
    ids = bm25._query_ids(query)
    return bool(bm25._long(ids) and (bm25.idf[ids] > 0).all()
                and pruned_top_k(bm25.weights, bm25.impact, bm25.dense_rows, ids, k) is not None)


@pytest.fixture(scope="module")
def generated() -> BM25:
    """3,000 documents over a 2,000-word Zipf vocabulary: the top words are in nearly all."""
    return BM25.fit([t for _, _, t in gen_corpus.documents(3000, size=2000)], tokenizer="auto")


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [w.lower() for w in gen_corpus.vocabulary(2000)]


def test_shipped_golden_queries_prune_to_the_exhaustive_result():
    """The shipped corpus indexed as `ragkit index` does, with the `code` tokenizer (`auto`
    adds Korean morphology, whose model takes seconds to load and changes nothing here)."""
    shipped = load_shipped(ROOT / "data")
    bm25 = Pipeline.build(shipped.documents, IndexConfig(embedder=None, tokenizer="code"),
                          progress=False).bm25
    pruned = 0
    for query in shipped.queries:
        for k in (1, 10, 150):
            assert_same(bm25, query.text, k)
            pruned += was_pruned(bm25, query.text, k)
    assert pruned > len(shipped.queries)  # the pruned path ran, not only the old ones


def test_generated_queries_prune_to_the_exhaustive_result(generated, words):
    queries = gen_corpus.queries(60, size=2000) + [
        words[0], f"{words[0]} {words[1]}", f"{words[0]} {words[1]} {words[2]} {words[3]}",
        f"{words[0]} {words[0]} {words[0]}", f"{words[1500]} {words[0]} {words[1500]}",
        f"{words[2]} qqzzx {words[40]}", "qqzzx", ""]
    pruned = 0
    for query in queries:
        for k in (1, 10, 150):
            assert_same(generated, query, k)
            pruned += was_pruned(generated, query, k)
    assert pruned > 150


def test_common_words_only_are_pruned_exactly(generated, words):
    query = f"{words[0]} {words[1]} {words[4]}"
    assert (np.diff(generated.weights.indptr)[generated._query_ids(query)] > 1500).all()
    for k in (1, 10, 150, 1000):
        assert was_pruned(generated, query, k)
        assert_same(generated, query, k)


def test_the_full_scan_with_dense_rows_equals_the_exhaustive_path(generated, words):
    """The fallback when pruning does not pay: dense copies of the longest rows added in
    query order, the top k ranked above a sampled lower bound of the k-th score."""
    queries = gen_corpus.queries(40, size=2000) + [
        words[0], f"{words[0]} {words[0]} {words[7]}", f"{words[3]} {words[1999]} {words[1]}"]
    dense_used = 0
    for query in queries:
        ids = generated._query_ids(query)
        if not (generated._long(ids) and (generated.idf[ids] > 0).all()):
            continue
        for k in (1, 10, 150, 2999, 5000):
            got, got_s = scan_top_k(generated.weights, generated.dense_rows, ids, k)
            (want, want_s), _ = both(generated, query, k)[::-1]
            assert got.tolist() == want.tolist() and got_s.tolist() == want_s.tolist(), query
        dense_used += any(generated.dense_rows.row(t) is not None for t in ids.tolist())
    assert dense_used > 20


def test_a_sampled_floor_equal_to_the_kth_score_keeps_the_tie():
    """300 identical matching documents: every sample holds the tied score itself."""
    bm25 = BM25.fit_tokens([["a", "x"]] * 300 + [["y", "z"]] * 700)
    ids = bm25._query_ids(["a"])
    for k in (1, 3, 150, 300, 301):
        got, scores = scan_top_k(bm25.weights, bm25.dense_rows, ids, k)
        assert got.tolist() == list(range(min(k, 300))) and len(set(scores.tolist())) == 1
        assert_same(bm25, ["a"], k)


def tied_cuts(bm25: BM25, query: str, limit: int = 400) -> list[int]:
    """Every k <= limit whose k-th best score equals the (k+1)-th."""
    ranked = np.sort(bm25.scores(query))[::-1][:limit + 1]
    return [int(k) + 1 for k in np.flatnonzero(ranked[:-1] == ranked[1:])]


def test_a_tied_kth_score_keeps_the_lower_indices(generated, words):
    query = words[0]  # one row: its weights take few values, so ties are everywhere
    cuts = tied_cuts(generated, query)
    assert len(cuts) > 100
    for k in cuts[:40] + cuts[-10:]:
        assert was_pruned(generated, query, k)
        assert_same(generated, query, k)
    k = cuts[0]
    idx, values = generated.search(query, k)
    scores = generated.scores(query)
    tied = np.flatnonzero(scores == values[-1])
    assert tied.size > np.count_nonzero(values == values[-1])  # the tie is cut ...
    assert idx[values == values[-1]].tolist() == tied[:np.count_nonzero(values == values[-1])
                                                       ].tolist()  # ... lowest indices first


def test_a_document_tied_with_the_bound_is_not_left_out():
    """Two rows with equal idf, all documents of 4 tokens: O (a×3, b) and Z (a, b×3) score
    the same, f(3) + f(1). With k = 1 the first prefixes hold P (a×3, lower index than O)
    and Z; their bound f(3) + f(1) equals θ exactly, so only a strict test goes deeper and
    finds O, the tie's lower index."""
    corpus = [["a", "a", "a", "x"], ["a", "a", "a", "b"], ["a", "b", "b", "b"],
              ["b", "y", "y", "y"]] + [["y", "z", "z", "z"]] * 6
    bm25 = BM25.fit_tokens(corpus)
    scores = bm25.scores(["a", "b"])
    assert scores[1] == scores[2] > scores[0] > scores[3] > 0
    assert was_pruned(bm25, ["a", "b"], 1)
    assert bm25.search(["a", "b"], 1)[0].tolist() == [1]
    for k in (1, 2, 3, 4, 5):
        assert_same(bm25, ["a", "b"], k)


def test_tie_extended_fetches_agree(generated, words):
    queries = [words[0], f"{words[0]} {words[3]}", f"{words[700]} {words[1]}"]

    def fetch(prune):
        def run(texts, depth):
            generated.prune = prune
            out = [[(int(i), float(s)) for i, s in zip(*generated.search(t, depth))]
                   for t in texts]
            generated.prune = True
            return out
        return run

    for k in (1, 10, 150):
        assert _with_ties(fetch(True), queries, k) == _with_ties(fetch(False), queries, k)


def test_pipeline_bm25_and_hybrid_modes_agree(words):
    docs = [Document(f"d{i}", t) for i, (_, _, t) in
            enumerate(gen_corpus.documents(600, size=300))]
    pipeline = Pipeline.build(docs, IndexConfig(embedder="hash-test"), progress=False,
                              embedder=HashEmbedder())
    small = [w.lower() for w in gen_corpus.vocabulary(300)]
    queries = [small[0], f"{small[0]} {small[1]}", f"{small[2]} {small[100]} {small[2]}"]
    for mode in ("bm25", "hybrid"):
        runs = []
        for prune in (True, False):
            pipeline.bm25.prune = prune
            runs.append(pipeline.search(queries, 10, SearchConfig(mode=mode)))
        pipeline.bm25.prune = True
        assert runs[0] == runs[1], mode


def test_saved_order_loads_and_older_folders_compute_it(generated, words, tmp_path):
    generated.save(tmp_path / "new")
    loaded = BM25.load(tmp_path / "new")
    assert loaded._impact is not None and loaded._impact.rows  # read, not recomputed
    generated.save(tmp_path / "old")
    for name in ("impact.npy", "impact_terms.npy"):
        (tmp_path / "old" / name).unlink()
    older = BM25.load(tmp_path / "old")
    query = f"{words[0]} {words[5]} {words[9]}"
    for k in (1, 10, 150):
        want = generated.search(query, k)
        for model in (loaded, older):
            got = model.search(query, k)
            assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert older._impact.rows  # computed on first use


def test_a_mismatched_impact_order_is_a_named_error(generated, tmp_path):
    generated.save(tmp_path / "idx")
    np.save(tmp_path / "idx" / "impact.npy", np.zeros(3, dtype=np.int32))
    with pytest.raises(RagkitError, match=r"impact\.npy: does not match the index"):
        BM25.load(tmp_path / "idx")
