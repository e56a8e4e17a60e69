"""Semantic cache: cosine threshold, the number guard, replayed hit rates and false hits."""
from __future__ import annotations

from pathlib import Path

import pytest
from word_embedder import WordEmbedder

from ragkit.datasets import load_shipped
from ragkit.documents import Golden, Query, RagkitError
from ragkit.semantic_cache import (SemanticCache, golden_label, load_paraphrases, numbers,
                                   replay_log, sweep)

DATA = Path(__file__).resolve().parent.parent / "data"
WORDS = WordEmbedder(["revenue", "margin", "solvara", "reset", "button", "gateway"])


def test_lookup_hits_at_or_above_the_threshold_only():
    cache = SemanticCache(WORDS, threshold=0.8)
    cache.add("gateway reset button", "hold it 10 s")
    hit = cache.lookup("reset button")  # cosine 2 / (√2·√3) = 0.8165
    assert hit.answer == "hold it 10 s" and hit.similarity == pytest.approx(0.8165, abs=1e-4)
    assert cache.lookup("reset") is None  # 1 / √3 = 0.577
    assert SemanticCache(WORDS, 0.82).lookup("x") is None  # empty cache


def test_numbers_must_match_so_other_quarters_never_hit():
    assert numbers("Solvara revenue in Q3 2024, NX-220 and €60?") == \
        {"q3", "2024", "nx-220", "60"}
    guarded, plain = SemanticCache(WORDS, 0.9), SemanticCache(WORDS, 0.9, match_numbers=False)
    for cache in (guarded, plain):
        cache.add("Solvara revenue Q3 2024", "A")
    assert guarded.lookup("Solvara revenue Q2 2025") is None  # cosine 1, other quarter
    assert plain.lookup("Solvara revenue Q2 2025").answer == "A"
    assert guarded.lookup("revenue of Solvara, Q3 2024").answer == "A"


def test_hit_rate_replays_a_log_counting_false_hits():
    log = [("solvara revenue", "r"), ("revenue solvara", "r"), ("reset button", "b"),
           ("solvara revenue!", "other"), ("gateway", "g")]
    stats = SemanticCache(WORDS, 0.99).hit_rate(log)
    # miss, hit (same words), miss, hit on a question labelled differently, miss
    assert (stats.lookups, stats.hits, stats.false_hits) == (5, 2, 1)
    assert stats.hit_rate == 0.4 and stats.false_hit_rate == 0.2


def test_sweep_embeds_once_and_rises_with_a_lower_threshold():
    words = WordEmbedder(["revenue", "margin", "solvara"])
    log = [("solvara revenue", 1), ("solvara revenue margin", 1), ("margin", 2),
           ("solvara margin", 3)]
    table = sweep(log, words, [0.99, 0.8, 0.5])
    assert words.calls == 1
    # cosines to stored queries: "s r m"-"s r" 2/√6 = 0.816 (same label); "m" is orthogonal
    # to "s r"; "s m"-"m" 1/√2 = 0.707 (another label), "s m"-"s r" 0.5. A hit is not stored.
    assert table["hits"].tolist() == [0, 1, 2] and table["false hits"].tolist() == [0, 0, 1]
    assert table["hit rate %"].tolist() == [0.0, 25.0, 50.0]  # of 4 lookups, in percent


def test_replay_log_is_every_query_plus_paraphrases_shuffled_by_seed():
    queries = [Query("a", "first", golden=(Golden("d", span="x"),)), Query("u", "unknown")]
    log = replay_log(queries, [("a", "the first")], seed=0)
    assert sorted(text for text, _ in log) == ["first", "the first", "unknown"]
    assert dict(log)["the first"] == dict(log)["first"] == frozenset({("d", "x", "")})
    assert golden_label(queries[1]) == ("unanswerable", "u")
    assert replay_log(queries, [("a", "the first")], seed=0) == log


def test_paraphrase_file_errors_name_the_line_and_field(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"of": "a", "text": "ok"}\n{"of": "zz", "text": "x"}\n')
    with pytest.raises(RagkitError, match=r"p.jsonl:2: field 'of': no golden question 'zz'"):
        load_paraphrases(path, [Query("a", "first")])


def test_shipped_paraphrases_point_at_test_split_questions():
    queries = load_shipped(DATA).queries
    pairs = load_paraphrases(DATA / "replay" / "paraphrases.jsonl", queries)
    split = {q.id: q.split for q in queries}
    assert len(pairs) == 41 and {split[of] for of, _ in pairs} == {"test"}
