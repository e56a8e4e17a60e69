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
    ("naïveBayes", ["naïve", "bayes"]),
    ("Größe", ["größe"]),
    ("ÉcoleNormale2", ["école", "normale", "2"]),
    ("ПриветМир", ["привет", "мир"]),
    ("XMLÜbersetzer", ["xml", "übersetzer"]),
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


@pytest.mark.parametrize("word", ["HTTPServer2_new", "getHTTPResponse2", "parseJSON", "x86_64",
                                  "__init__", "ABC", "aB", "IOError", "v2Beta3XYZ", "_"])
def test_ascii_and_unicode_identifier_splitting_agree(word):
    # an ASCII word takes a fast path; "_ß" sends the same word through the Unicode one
    assert identifier_parts(word + "_ß") == identifier_parts(word) + ["ß"]


def test_code_keeps_non_ascii_words_whole():
    assert code("café Größe naïveBayes") == ["café", "größe", "naïvebayes", "naïve", "bayes"]
    assert code("Ünïcode_Straße") == ["ünïcode_straße", "ünïcode", "straße"]


def test_code_normalizes_width_and_accents():
    assert code("cafe\u0301") == ["café"]  # e + combining acute: one word, precomposed
    assert code("ＨＴＴＰＳｅｒｖｅｒ") == ["httpserver", "http", "server"]  # full-width Latin
    assert code("ｶﾞｷﾞ") == ["ガギ"]  # half-width Katakana and voiced marks


def test_code_writes_han_and_kana_as_overlapping_bigrams():
    assert code("東京都の天気") == ["東京", "京都", "都の", "の天", "天気"]
    assert code("北京大学的图书馆") == ["北京", "京大", "大学", "学的", "的图", "图书", "书馆"]
    assert code("猫") == ["猫"]  # a lone character stays a unigram
    assert code("東京/大阪") == ["東京", "大阪"]  # runs end at punctuation
    assert code("ジョン・スミス") == ["ジョ", "ョン", "スミ", "ミス"]  # and at the middle dot
    assert code("Python3で東京 the lock") == ["python3", "python", "3", "で東", "東京", "lock"]


def test_auto_uses_code_without_hangul_and_korean_with_it():
    assert auto("HTTPServer the lock") == ["httpserver", "http", "server", "lock"]
    assert auto("東京都の天気") == ["東京", "京都", "都の", "の天", "天気"]
    assert auto("청약철회는 가능합니다") == ["청약", "철회", "가능"]
    assert auto("라멘은 ラーメン") == ["라멘", "ラー", "ーメ", "メン"]  # Kana in Korean text


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


def test_bigrams_find_japanese_words_where_words_fails():
    docs = ["東京都の天気は晴れです。", "大阪の天気は雨です。", "京都の観光案内。"]
    assert BM25.fit(docs, tokenizer="words").search("観光", k=3)[0].tolist() == []
    idx, _ = BM25.fit(docs, tokenizer="auto").search("京都の観光", k=3)
    assert idx.tolist() == [2, 0]  # 東京都 holds the bigram 京都: a weaker match


def test_korean_remembers_a_text_and_hands_out_fresh_lists(monkeypatch):
    from ragkit.lexical import tokenizers

    sentence = "환불은 7일 이내에 가능합니다 (memo test)"
    expected = korean(sentence)
    calls = []
    real = tokenizers._kiwi()

    class Counting:
        def tokenize(self, text):
            calls.append(text)
            return real.tokenize(text)

    monkeypatch.setattr(tokenizers, "_kiwi", lambda: Counting())
    first = korean(sentence)
    first.append("changed")  # a caller's edit never reaches the next caller
    assert korean(sentence) == expected
    assert calls == []  # both served from memory: Kiwi saw it only before the patch
    assert korean(sentence + "!") == expected and len(calls) == 1  # a new text is analysed


def test_code_remembers_a_text_and_hands_out_fresh_lists():
    first = code("getUserName(memo_test)")
    first.clear()
    assert code("getUserName(memo_test)") == ["getusername", "get", "user", "name",
                                             "memo_test", "memo", "test"]


def test_ascii_units_expand_to_the_code_tokens():
    """The index builder's units (runs of word and joiner characters, edges included)
    expand to exactly `code`'s tokens, on 3,000 seeded random ASCII strings built from
    words, identifiers, joiners, punctuation and white space, and on the edge cases."""
    import random

    from ragkit.lexical.tokenizers import ascii_units, code, compound_tokens
    rng = random.Random(7)
    pieces = ["the", "a", "getUserName", "HTTPServer2", "__init__", "x9", "end", "Größe",
              ".", "..", "/", "\\", ":", "::", "-", "--", ",", ";", "!", "(", ")", "'",
              '"', "#", "%", "@", "+", "=", " ", "  ", "\t", "\n", "\x1f", "\x00", "_"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
             for _ in range(3000)]
    texts += ["", " ", "-", "a-", "-a", "a--b", ".a.", "a/b.py", "std::vector",
              "os.path.join(a, b).", "x- -y", "a\\\\b", "end. Next"]
    checked = 0
    for text in texts:
        units = ascii_units(text)
        if units is None:
            assert not text.isascii()
            continue
        assert [t for u in units for t in compound_tokens(u)] == code(text), repr(text)
        checked += 1
    assert checked > 2000
