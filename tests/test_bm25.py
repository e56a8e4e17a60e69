"""Tests for ragkit.lexical.bm25: values computed by hand, candidates, ranking, persistence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ragkit.dense import top_k
from ragkit.documents import Document, RagkitError
from ragkit.lexical import BM25
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig

# ------------------------------------------------------------------ BM25 values by hand

# N = 4, lengths 2, 3, 4, 1, avgdl = 2.5; df: apple 2, banana 2, cherry 1, date 1, elder 1.
HAND = [["apple", "banana"], ["apple", "cherry", "cherry"],
        ["banana", "date", "date", "date"], ["elder"]]


def test_score_of_a_rare_term_by_hand():
    bm25 = BM25.fit_tokens(HAND)
    idf = math.log(4 - 1 + 0.5) - math.log(1 + 0.5)  # log(3.5 / 1.5)
    tf_part = 2 * 2.5 / (2 + 1.5 * (1 - 0.75 + 0.75 * 3 / 2.5))  # tf 2, |d| 3
    expected = np.array([0.0, idf * tf_part, 0.0, 0.0])
    assert np.array_equal(bm25.scores(["cherry"]), expected)
    assert idf * tf_part == pytest.approx(0.8472978603872037 * 5 / 3.725, rel=1e-15)


def test_term_in_exactly_half_the_documents_scores_zero():
    assert np.array_equal(BM25.fit_tokens(HAND).scores(["apple", "banana"]), np.zeros(4))


def test_negative_idf_is_floored_to_epsilon_times_mean_idf():
    # "x" is in 4 of 5 documents: raw idf log(1.5/4.5) = -log 3; a, b, c, d: +log 3 each.
    # mean raw idf = 3/5 log 3, so idf(x) = 0.25 * 3/5 * log 3 = 0.15 log 3.
    corpus = [["x", "a"], ["x", "b"], ["x", "c"], ["x"], ["d"]]  # avgdl 8/5
    bm25 = BM25.fit_tokens(corpus)
    assert bm25.idf[bm25.vocabulary["x"]] == pytest.approx(0.15 * math.log(3), rel=1e-14)
    expected_doc3 = 0.15 * math.log(3) * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 1 / 1.6))
    assert bm25.scores(["x"])[3] == pytest.approx(expected_doc3, rel=1e-14)


def test_repeated_query_terms_count_twice_and_unknown_terms_add_nothing():
    bm25 = BM25.fit_tokens(HAND)
    once = bm25.scores(["cherry"])
    assert np.array_equal(bm25.scores(["cherry", "cherry", "zebra"]), 2 * once)
    assert np.array_equal(bm25.scores(["zebra"]), np.zeros(4))
    assert np.array_equal(bm25.scores(""), np.zeros(4))


def test_fit_tokenizes_text_and_queries_alike():
    bm25 = BM25.fit(["The HTTPServer starts", "a client", "the end"], tokenizer="code")
    assert bm25.tokenizer_name == "code"
    assert list(bm25.vocabulary) == ["httpserver", "http", "server", "starts", "client", "end"]
    scores = bm25.scores("HTTP server")
    assert scores[0] > 0 and scores[1] == scores[2] == 0


def test_custom_tokenizer_function():
    bm25 = BM25.fit(["a-b c"], tokenizer=lambda text: text.split("-"))
    assert bm25.tokenizer_name is None and set(bm25.vocabulary) == {"a", "b c"}


def test_empty_corpus_and_bad_parameters_are_errors():
    with pytest.raises(RagkitError, match="corpus is empty"):
        BM25.fit([])
    with pytest.raises(ValueError, match="b must be in"):
        BM25(b=1.5)
    with pytest.raises(ValueError, match="k1 must be"):
        BM25(k1=-1)


def test_all_empty_documents_score_zero_and_match_nothing():
    bm25 = BM25.fit(["", "  ", "!!"])
    assert np.array_equal(bm25.scores("anything"), np.zeros(3))
    assert bm25.search("anything", 2)[0].tolist() == []


# ------------------------------------------------------------------ candidates


def test_one_document_corpus_returns_its_document_with_a_negative_score():
    # N = 1, df = 1: raw idf log(0.5 / 1.5) = -log 3 for both terms, so the floor is
    # 0.25 * mean(-log 3) = -0.25 log 3; |d| = avgdl = 2 makes the tf factor 2.5 / 2.5 = 1.
    bm25 = BM25.fit_tokens([["solo", "word"]])
    idx, vals = bm25.search(["solo"], k=5)
    assert idx.tolist() == [0]
    assert vals[0] == pytest.approx(-0.25 * math.log(3), rel=1e-14)
    assert bm25.search(["other"], k=5)[0].tolist() == []


def test_two_document_corpus_ranks_the_documents_sharing_a_term():
    # N = 2: idf(left) = idf(right) = log(1.5/1.5) = 0; raw idf(shared) = log(0.5/2.5)
    # = -log 5, floored to 0.25 * (-log 5 / 3). avgdl 2.5; tf factors for "shared":
    # doc 0 (|d| 2) 2.5 / 2.275, doc 1 (|d| 3) 2.5 / 2.725, so doc 1 is less negative.
    bm25 = BM25.fit_tokens([["shared", "left"], ["shared", "right", "right"]])
    idx, vals = bm25.search(["left"], k=5)
    assert idx.tolist() == [0] and vals.tolist() == [0.0]
    idx, vals = bm25.search(["right", "shared"], k=5)
    idf = -math.log(5) / 12
    assert idx.tolist() == [1, 0]
    assert vals == pytest.approx([idf * 2.5 / 2.725, idf * 2.5 / 2.275], rel=1e-14)
    assert bm25.search(["none"], k=5)[0].tolist() == []


def test_term_in_exactly_half_the_documents_is_still_a_match():
    bm25 = BM25.fit_tokens(HAND)  # apple is in documents 0 and 1 of 4: idf 0
    idx, vals = bm25.search(["apple"], k=4)
    assert idx.tolist() == [0, 1] and vals.tolist() == [0.0, 0.0]
    idx, vals = bm25.search(["apple", "cherry"], k=4)
    assert idx.tolist() == [1, 0] and vals[0] > vals[1] == 0.0
    assert bm25.candidates(["apple", "zebra", "apple"]).tolist() == [0, 1]
    assert bm25.search(["apple", "elder"], k=2)[0].tolist() == [3, 0]  # k cuts candidates


def test_candidates_survive_save_and_load(tmp_path):
    BM25.fit(["apple banana", "apple cherry", "banana date", "elder"]).save(tmp_path)
    loaded = BM25.load(tmp_path)
    assert loaded.search("apple", k=4)[0].tolist() == [0, 1]


def test_bm25_mode_returns_matching_chunks_of_a_two_document_corpus():
    docs = [Document("refund.md", "Refunds take seven days."),
            Document("ship.md", "Shipping to islands takes ten working days.")]
    pipeline = Pipeline.build(docs, IndexConfig(contextualizer="none", embedder=None),
                              progress=False)
    (refund,) = pipeline.search(["How long do refunds take?"], k=5, config=SearchConfig("bm25"))
    assert [ident for ident, _ in refund] == ["refund.md#0"]  # idf(refunds) = 0 with N = 2
    (days,) = pipeline.search(["days"], k=5, config=SearchConfig("bm25"))
    # idf(days) < 0 (in both documents): the longer ship.md's score is the nearer to 0
    assert [ident for ident, _ in days] == ["ship.md#0", "refund.md#0"]
    assert pipeline.search(["warranty"], k=5, config=SearchConfig("bm25")) == [[]]


# ------------------------------------------------------------------ ranking


def test_top_k_orders_by_score_then_lower_index():
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.0])
    assert top_k(scores, 2)[0].tolist() == [1, 2]
    assert top_k(scores, 4)[0].tolist() == [1, 2, 4, 3]
    idx, vals = top_k(scores, 10)
    assert idx.tolist() == [1, 2, 4, 3, 0, 5] and vals.tolist() == [3, 3, 3, 2, 1, 0]
    assert top_k(scores, 0)[0].size == 0


def test_top_k_many_ties_are_deterministic():
    scores = np.zeros(1000)
    scores[[500, 7]] = 1.0
    assert top_k(scores, 5)[0].tolist() == [7, 500, 0, 1, 2]


def test_search_and_search_many_agree():
    bm25 = BM25.fit_tokens(HAND)
    idx, vals = bm25.search(["date", "cherry"], k=2)
    assert idx.tolist() == [2, 1] and vals[0] > vals[1] > 0
    many = bm25.search_many([["date", "cherry"], ["elder"], []], k=2)
    assert [m[0].tolist() for m in many] == [[2, 1], [3], []]
    assert np.array_equal(many[0][1], vals)


# ------------------------------------------------------------------ persistence


def test_save_and_load_round_trip(tmp_path):
    texts = ["The HTTPServer starts", "a client calls the server", "청약철회는 7일 이내"]
    bm25 = BM25.fit(texts, tokenizer="auto", k1=1.2, b=0.5)
    bm25.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [
        "bm25.json", "data.npy", "doc_len.npy", "idf.npy", "indices.npy", "indptr.npy",
        "terms.bin", "terms.npy", "terms_hash.npy"]
    loaded = BM25.load(tmp_path / "idx")
    assert (loaded.k1, loaded.b, loaded.epsilon, loaded.tokenizer_name) == (1.2, 0.5, 0.25, "auto")
    for query in ["server", "청약 철회", "client http"]:
        assert np.array_equal(loaded.scores(query), bm25.scores(query))
    meta = json.loads((tmp_path / "idx" / "bm25.json").read_text(encoding="utf-8"))
    assert meta["vocabulary"] == list(bm25.vocabulary)


def test_save_refuses_custom_tokenizer_and_load_names_missing_file(tmp_path):
    with pytest.raises(ValueError, match="custom tokenizer"):
        BM25.fit(["a b"], tokenizer=str.split).save(tmp_path)
    with pytest.raises(RagkitError, match="bm25.json: missing"):
        BM25.load(tmp_path / "nowhere")


def test_load_rejects_bad_json_with_its_line(tmp_path):
    BM25.fit(["a b"]).save(tmp_path)
    (tmp_path / "bm25.json").write_text('{\n"format": "ragkit.bm25",\n oops}', encoding="utf-8")
    with pytest.raises(ValueError, match="bm25.json:3: malformed JSON"):
        BM25.load(tmp_path)
