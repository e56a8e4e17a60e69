"""Tests for ragkit.lexical: tokenizers, BM25 values computed by hand, ranking, persistence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ragkit.documents import RagkitError
from ragkit.lexical import (
    BM25,
    TOKENIZERS,
    auto,
    code,
    english,
    get_tokenizer,
    identifier_parts,
    korean,
    top_k,
    words,
)

# ------------------------------------------------------------------ tokenizers


def test_registry_names_and_lookup():
    assert TOKENIZERS == ("words", "english", "code", "korean", "auto")
    assert get_tokenizer("words") is words
    assert get_tokenizer("code") is code


def test_unknown_tokenizer_lists_known_names():
    known = "words, english, code, korean, auto"
    with pytest.raises(RagkitError, match=f"unknown tokenizer 'porter'.*{known}"):
        get_tokenizer("porter")
    with pytest.raises(ValueError, match="known tokenizers"):
        BM25(tokenizer="nope")


def test_words_is_lowercase_word_runs():
    assert words("Hello, World! get_user_name x2") == ["hello", "world", "get_user_name", "x2"]


def test_english_drops_stopwords_only():
    assert english("What is the purpose of the DiffExecutor struct?") == [
        "purpose", "diffexecutor", "struct"]
    assert english("Don't stop") == ["stop"]  # "don" and "t" are both stopwords


@pytest.mark.parametrize("word, parts", [
    ("HTTPServer", ["http", "server"]),
    ("get_user_name", ["get", "user", "name"]),
    ("getHTTPResponse2", ["get", "http", "response", "2"]),
    ("parseJSON", ["parse", "json"]),
    ("x86_64", ["x", "86", "64"]),
    ("plain", ["plain"]),
])
def test_identifier_parts(word, parts):
    assert identifier_parts(word) == parts


def test_code_keeps_identifier_and_parts():
    assert code("get_user_name") == ["get_user_name", "get", "user", "name"]
    assert code("HTTPServer") == ["httpserver", "http", "server"]
    assert code("a/b/c.py") == ["a", "b", "c", "py"]
    assert code("foo.bar") == ["foo", "bar"]
    assert code("utf8 v2") == ["utf8", "utf", "8", "v2", "v", "2"]
    assert code("def __init__(self)") == ["def", "__init__", "init", "self"]


def test_code_drops_stopwords_only_as_plain_words():
    assert code("What is the lock for?") == ["lock"]
    # inside identifiers and paths every part stays
    assert code("is_valid for/each") == ["is_valid", "is", "valid", "for", "each"]


def test_korean_content_morphemes_without_particles():
    tokens = korean("청약철회는 구매일로부터 7일 이내에 가능합니다.")
    for expected in ["청약", "철회", "구매", "7", "이내", "가능"]:
        assert expected in tokens
    for particle_or_ending in ["는", "로부터", "에", "합니다", "ᆸ니다", "하", "."]:
        assert particle_or_ending not in tokens
    assert tokens.index("청약") < tokens.index("구매") < tokens.index("이내")  # text order


def test_korean_tokenizes_latin_and_code_words_like_code():
    tokens = korean("get_user_name 함수는 HTTPServer를 반환합니다")
    assert tokens == ["get_user_name", "get", "user", "name", "함수",
                      "httpserver", "http", "server", "반환"]


def test_auto_picks_korean_only_for_hangul():
    assert auto("HTTPServer the lock") == code("HTTPServer the lock")
    assert auto("청약철회는 가능합니다") == korean("청약철회는 가능합니다")
    assert auto("청약철회는 가능합니다") == auto("청약철회는 가능합니다")


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


def test_all_empty_documents_score_zero():
    bm25 = BM25.fit(["", "  ", "!!"])
    assert np.array_equal(bm25.scores("anything"), np.zeros(3))
    assert bm25.search("anything", 2)[0].tolist() == [0, 1]


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
    assert [m[0].tolist() for m in many] == [[2, 1], [3, 0], [0, 1]]
    assert np.array_equal(many[0][1], vals)


# ------------------------------------------------------------------ persistence


def test_save_and_load_round_trip(tmp_path):
    texts = ["The HTTPServer starts", "a client calls the server", "청약철회는 7일 이내"]
    bm25 = BM25.fit(texts, tokenizer="auto", k1=1.2, b=0.5)
    bm25.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["bm25.json", "bm25.npz"]
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
    with pytest.raises(ValueError, match="bm25.json, line 3: invalid JSON"):
        BM25.load(tmp_path)


# ------------------------------------------------------------------ Korean retrieval


def test_korean_tokenizer_finds_agglutinated_words_where_words_fails():
    docs = [
        "배송은 주문 후 3일 이내에 시작됩니다.",
        "회원 탈퇴는 마이페이지에서 신청할 수 있습니다.",
        "청약철회는 구매일로부터 7일 이내에 가능합니다.",
        "포인트는 결제 금액의 1%가 적립됩니다.",
    ]
    query = "청약 철회 기간"  # the document only has "청약철회는"
    assert BM25.fit(docs, tokenizer="words").scores(query).max() == 0.0
    idx, vals = BM25.fit(docs, tokenizer="korean").search(query, k=1)
    assert idx.tolist() == [2] and vals[0] > 0
    idx, _ = BM25.fit(docs, tokenizer="auto").search("포인트 적립", k=1)
    assert idx.tolist() == [3]
