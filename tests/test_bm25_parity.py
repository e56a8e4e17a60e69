"""ragkit.lexical.BM25 against rank-bm25 0.2.2 BM25Okapi on the same tokens.

Single-query scores must be bit-identical (both add the query terms' contributions in query
order); the tests also check np.allclose at rtol 1e-12 so a failure says how far apart they
are. The cookbook corpus runs when its data is present (the `cookbook_dir` fixture of
conftest.py skips otherwise); a generated corpus always runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import rank_bm25  # a dev dependency (pyproject.toml): missing it is a broken setup, not a skip

from ragkit.dense import top_k
from ragkit.lexical import BM25, words


def assert_same_scores(corpus: list[list[str]], queries: list[list[str]], **params) -> None:
    ref = rank_bm25.BM25Okapi(corpus, **params)
    ours = BM25.fit_tokens(corpus, **params)
    for query in queries:
        expected, got = ref.get_scores(query), ours.scores(query)
        assert np.allclose(got, expected, rtol=1e-12, atol=0), query
        assert np.array_equal(got, expected), query


def generated_corpus(seed: int = 7) -> tuple[list[list[str]], list[list[str]]]:
    """200 documents over a Zipfian vocabulary of 400 terms; 5 empty documents."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 401) ** 1.1
    p /= p.sum()
    terms = [f"t{i}" for i in range(400)]
    corpus = [[terms[i] for i in rng.choice(400, size=rng.integers(1, 60), p=p)]
              for _ in range(195)]
    for pos in (0, 17, 60, 123, 199):
        corpus.insert(pos, [])
    queries = [[terms[i] for i in rng.choice(400, size=rng.integers(1, 8), p=p)]
               for _ in range(60)]
    queries += [["t0", "t0", "t3"], ["unseen"], [], ["t399", "unseen", "t5", "t5", "t5"]]
    return corpus, queries


def test_generated_corpus_matches_rank_bm25():
    corpus, queries = generated_corpus()
    ref = rank_bm25.BM25Okapi(corpus)
    assert any(v == ref.epsilon * ref.average_idf for v in ref.idf.values())  # floor used
    assert_same_scores(corpus, queries)


def test_other_parameters_match_rank_bm25():
    corpus, queries = generated_corpus(seed=11)
    assert_same_scores(corpus, queries[:20], k1=0.9, b=0.4, epsilon=0.5)


def test_idf_matches_rank_bm25_term_by_term():
    corpus, _ = generated_corpus()
    ref, ours = rank_bm25.BM25Okapi(corpus), BM25.fit_tokens(corpus)
    assert list(ours.vocabulary) == list(ref.idf)
    assert np.array_equal(ours.idf, np.array(list(ref.idf.values())))


def test_term_in_exactly_half_the_documents():
    corpus = [["half", "a"], ["half", "b"], ["c"], ["d", "d"]]
    assert_same_scores(corpus, [["half"], ["half", "a"], ["d"]])
    assert np.array_equal(BM25.fit_tokens(corpus).scores(["half"]), np.zeros(4))


def test_two_document_corpus():
    corpus = [["shared", "left"], ["shared", "right", "right"]]
    assert_same_scores(corpus, [["shared"], ["left"], ["right", "shared"], ["none"]])


def test_empty_document_query_terms_missing_and_repeated():
    corpus = [[], ["alpha", "beta"], ["beta", "gamma", "gamma"], ["delta"], []]
    assert_same_scores(corpus, [["gamma", "gamma"], ["zeta"], ["alpha", "zeta", "alpha"], []])


def test_cookbook_corpus_matches_rank_bm25(cookbook_dir: Path):
    docs = json.loads((cookbook_dir / "codebase_chunks.json").read_text(encoding="utf-8"))
    corpus = [words(chunk["content"]) for doc in docs for chunk in doc["chunks"]]
    lines = (cookbook_dir / "evaluation_set.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [words(json.loads(line)["query"]) for line in lines if line.strip()]
    assert (len(corpus), len(queries)) == (737, 248)
    assert_same_scores(corpus, queries)
    assert_same_ranking(corpus, queries, 20)


def assert_same_ranking(corpus: list[list[str]], queries: list[list[str]], k: int) -> None:
    """search_many's top k are the k best rank-bm25 scores among the documents sharing a
    query term (found here by set intersection), ties by lower index."""
    ref = rank_bm25.BM25Okapi(corpus)
    for query, (idx, vals) in zip(queries, BM25.fit_tokens(corpus).search_many(queries, k)):
        matching = np.array([i for i, doc in enumerate(corpus) if set(doc) & set(query)],
                            dtype=np.int64)
        best, expected_vals = top_k(ref.get_scores(query)[matching], k)
        assert idx.tolist() == matching[best].tolist(), query
        assert np.array_equal(vals, expected_vals), query


def test_generated_corpus_ranking_matches_rank_bm25():
    corpus, queries = generated_corpus()
    assert_same_ranking(corpus, queries, 10)
