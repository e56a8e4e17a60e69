"""Tests for ragkit.lexical.tokenizers: literal token lists, and what each tokenizer finds."""

from __future__ import annotations

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
