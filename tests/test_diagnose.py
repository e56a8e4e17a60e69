"""Failure attribution: each failing question blamed on the first stage that lost it."""
from __future__ import annotations

import pandas as pd

from ragkit.diagnose import Outcome, attribute, diagnose, span_coverage, stage_counts
from ragkit.documents import Chunk, Document, Golden, Query

DOC = Document("d", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN")  # 40 distinct characters
CHUNKS = [Chunk("d#0", "d", DOC.text[0:20], start=0, end=20),
          Chunk("d#1", "d", DOC.text[16:36], start=16, end=36)]
G = frozenset({"g"})
ANSWERED = Outcome(False, frozenset({"g"}))


def test_span_coverage_is_the_largest_share_of_the_span_inside_one_chunk():
    queries = [Query("whole", "?", golden=(Golden("d", DOC.text[2:12]),)),      # in d#0
               Query("split", "?", golden=(Golden("d", DOC.text[10:30]),)),     # 10 | 14 of 20
               Query("chunk", "?", golden=(Golden("d", chunk_id="d#1"),)),
               Query("none", "?")]
    assert span_coverage(queries, [DOC], CHUNKS) == {"whole": [1.0], "split": [0.7],
                                                     "chunk": [1.0]}


def test_each_stage_in_pipeline_order():
    first, top = ["x", "g"], ["g", "y"]
    assert attribute([G], [1.0], first, top, ANSWERED, k=1) is None
    assert attribute([G], [0.4], [], [], ANSWERED) == (
        "chunking", "no chunk holds half of golden span 1 (the best holds 40 %)")
    assert attribute([G], [0.7], first, ["y"], ANSWERED)[0] == "chunking"
    assert attribute([G], [1.0], ["x"], ["x"], ANSWERED) == (
        "retrieval", "golden item 1 is not in the first-stage top 1")
    assert attribute([G], [1.0], first, ["y", "g"], ANSWERED, k=1) == (
        "reranking", "golden item 1 is at first-stage rank 2, not in the top 1 after reranking")
    assert attribute([G], [1.0], first, top, Outcome(True, frozenset()), k=1) == (
        "generation", "declined with golden item 1 at rank 1")
    assert attribute([G], [1.0], first, top, Outcome(False, frozenset({"y"})), k=2) == (
        "generation", "cited other chunks, not golden item 1 (at rank 1)")
    assert attribute([G], [1.0], first, top, None, k=1) is None  # retrieval only


def test_a_question_takes_the_earliest_stage_among_its_lost_items():
    h = frozenset({"h"})
    # item 1 lost at generation (not cited), item 2 lost at reranking: reranking is earlier
    found = attribute([G, h], [1.0, 1.0], ["g", "h"], ["g", "x"], Outcome(False, frozenset()),
                      k=2)
    assert found == ("reranking", "golden item 2 is at first-stage rank 2, not in the top 2 "
                                  "after reranking")


def test_diagnose_lists_failing_questions_and_an_answered_unanswerable_one():
    queries = [Query("ok", "q1", kind="lexical"), Query("lost", "q2", kind="paraphrase"),
               Query("none", "q3"), Query("none2", "q4")]
    judgments = {"ok": [G], "lost": [G]}
    first = {"ok": ["g"], "lost": ["x", "y", "g"], "none": ["x"], "none2": ["x"]}
    top = {"ok": ["g"], "lost": ["x", "y"], "none": ["x"], "none2": ["x"]}
    outcomes = {"ok": ANSWERED, "lost": Outcome(True, frozenset()),
                "none": Outcome(False, frozenset({"x"})), "none2": Outcome(True, frozenset())}
    table = diagnose(queries, judgments, {}, first, top, outcomes, k=2)
    assert table.index.tolist() == ["lost", "none"]
    assert table["stage"].tolist() == ["reranking", "generation"]
    assert table.loc["none", "reason"] == "answered a question the corpus does not answer"
    assert table.loc["lost", "first-stage rank"] == 3
    assert pd.isna(table.loc["lost", "reranked rank"])
    assert table.loc["lost", "answer"] == "declined"
    counts = stage_counts(table, questions=4)
    assert counts["questions"].tolist() == [0, 0, 1, 1, 2]
    assert counts.loc["total", "% of asked"] == 50.0
    # the share of the questions diagnosed, named as such: here 4 answerable of more asked
    answerable = stage_counts(table, questions=4, of="answerable")
    assert answerable.columns.tolist() == ["questions", "% of answerable"]
    assert answerable.loc["total"].tolist() == [2, 50.0]
