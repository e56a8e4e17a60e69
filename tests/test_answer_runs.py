"""Answers for a question set: who answered, who cited the golden chunk, tokens and dollars."""
from __future__ import annotations

import math

import pytest

from ragkit import standin
from ragkit.answer_runs import answer_rows, answer_run, cites_golden, sweep_answer_k
from ragkit.documents import Chunk, Golden, Query
from ragkit.llm import LLM, make_client
from ragkit.pricing import cost
from tests.word_embedder import WordEmbedder

REFUND = Chunk("refund#0", "refund", "Refunds are accepted within 21 days of delivery. Keep "
               "the receipt.", metadata={"title": "Refund policy", "section": ["Refunds"]})
SHIP = Chunk("ship#0", "ship", "Parcels to Denmark go by road. Shipping takes 3 days.",
             metadata={"title": "Shipping policy", "section": []})
QUERIES = [Query("refund", "Within how many days are refunds accepted?",
                 golden=(Golden("refund", "accepted within 21 days"),)),
           Query("norway", "Which carrier delivers parcels to Norway?")]
JUDGMENTS = {"refund": [frozenset({"refund#0"})]}
# the refund chunk ranks second for the refund question: k = 1 hands over only the ship chunk
HITS = {"refund": [("ship#0", 2.0), ("refund#0", 1.0)],
        "norway": [("ship#0", 2.0), ("refund#0", 1.0)]}


@pytest.fixture
def llm():
    return LLM(make_client(max_retries=0, transport=standin.transport(standin.respond)),
               cache=False)


def test_answers_cite_the_golden_chunk_only_when_it_was_handed_over(llm):
    answers = answer_run(QUERIES, HITS, [REFUND, SHIP], k=2, llm=llm)
    assert answers["refund"].text == "Refunds are accepted within 21 days of delivery. [1]"
    assert cites_golden(answers["refund"], JUDGMENTS["refund"])
    assert answers["norway"].declined
    one = answer_run(QUERIES, HITS, [REFUND, SHIP], k=1, llm=llm)
    assert [p.chunk_id for p in one["refund"].passages] == ["ship#0"]
    assert not cites_golden(one["refund"], JUDGMENTS["refund"])


def test_a_run_of_chunk_ids_is_answered_as_its_rankings_are(llm):
    """`answer_run(queries, pipeline.run(queries), chunks)` was "too many values to unpack":
    `Pipeline.run` gives chunk ids, `Pipeline.search` (id, score) pairs."""
    run = {qid: [ident for ident, _ in ranking] for qid, ranking in HITS.items()}
    by_ids = answer_run(QUERIES, run, [REFUND, SHIP], k=2, llm=llm)
    by_pairs = answer_run(QUERIES, HITS, [REFUND, SHIP], k=2, llm=llm)
    assert {q: a.text for q, a in by_ids.items()} == {q: a.text for q, a in by_pairs.items()}
    assert by_ids["refund"].text == "Refunds are accepted within 21 days of delivery. [1]"


def test_answer_rows_score_and_price_each_answer(llm):
    answers = answer_run(QUERIES, HITS, [REFUND, SHIP], k=2, llm=llm)
    rows = answer_rows(QUERIES, answers, JUDGMENTS, WordEmbedder(["refunds", "days"]))
    assert rows.loc["refund", ["answered", "cites golden"]].tolist() == [1.0, 1.0]
    assert rows.loc["norway", "answered"] == 0.0 and math.isnan(rows.loc["norway", "cites golden"])
    # ranked ship#0 then refund#0: AP = (1/2) / 1 = 0.5; the one golden item is found
    assert rows.loc["refund", "context_precision_golden"] == pytest.approx(0.5)
    assert rows.loc["refund", "context_recall_golden"] == 1.0
    usage = answers["refund"].usage
    assert rows.loc["refund", "prompt tokens"] == usage.prompt_tokens > 0
    assert rows.loc["refund", "$"] == pytest.approx(cost(usage, "claude-haiku-4-5"))


def test_the_k_sweep_has_one_row_per_k_with_pass_at_k_and_shares(llm):
    table, per_k = sweep_answer_k(QUERIES, HITS, [REFUND, SHIP], JUDGMENTS, [1, 2],
                                  WordEmbedder(["refunds"]), llm=llm)
    assert table["Pass@k"].tolist() == [0.0, 100.0]
    assert table["cites golden %"].tolist() == [0.0, 100.0]
    assert table.loc[2, "answered %"] == 50.0  # the Norway question is declined
    assert table.loc[1, "prompt tokens (est.)"] < table.loc[2, "prompt tokens (est.)"]
    assert set(per_k) == {1, 2}
