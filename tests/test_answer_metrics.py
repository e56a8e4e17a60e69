"""RAGAS-style metrics: ragas's formulas on hand-computed cases, exact golden variants,
named approximations, and the table against the thresholds of the 2026 RAG best-practice
notes."""
from __future__ import annotations

import json
import math

import pytest
from word_embedder import WordEmbedder

from ragkit import standin
from ragkit.answer_metrics import (answer_relevancy, answer_relevancy_cosine,
                                   average_precision, context_precision,
                                   context_precision_golden, context_recall,
                                   context_recall_golden, faithfulness, faithfulness_lexical,
                                   ragas_table, score_offline)
from ragkit.answer_judge import Judge
from ragkit.llm import LLM, UsageLog, make_client

CONTEXT = ["ETH2 has the fixed address 192.168.50.1/24.", "The RESET button is recessed."]
WORDS = WordEmbedder(["eth2", "address", "fixed", "reset", "button", "bacnet"])


def _judge(handler=standin.respond):
    client = make_client(max_retries=0, transport=standin.transport(handler))
    return Judge(LLM(client, cache=None, usage=UsageLog()))


def test_average_precision_is_ragas_with_relevant_retrieved_in_the_denominator():
    assert average_precision([1, 0, 1]) == pytest.approx((1 / 1 + 2 / 3) / 2)  # 0.8333
    assert average_precision([0, 1, 0]) == pytest.approx(1 / 2)  # not divided by 3
    assert average_precision([0, 0]) == 0.0
    assert math.isnan(average_precision([])) and math.isnan(average_precision([1, math.nan]))


def test_golden_context_precision_and_recall_are_exact():
    items = [frozenset({"a"}), frozenset({"b", "c"})]  # two golden items
    assert context_precision_golden(["a", "x", "b"], items) == pytest.approx(5 / 6)
    assert context_recall_golden(["a", "x", "b"], items) == 1.0
    assert context_precision_golden(["x", "c"], items) == pytest.approx(1 / 2)
    assert context_recall_golden(["x", "c"], items) == 0.5
    assert context_recall_golden(["x", "y"], items) == 0.0


def test_faithfulness_lexical_counts_covered_sentences():
    answer = "ETH2 has the fixed address 192.168.50.1/24. It also speaks BACnet."
    assert faithfulness_lexical(answer, CONTEXT) == 0.5
    assert faithfulness_lexical(answer, CONTEXT + ["The unit speaks BACnet too."]) == 1.0
    assert math.isnan(faithfulness_lexical("", CONTEXT))


def test_judged_faithfulness_offline_equals_the_lexical_approximation():
    answer = "ETH2 has the fixed address 192.168.50.1/24. The RESET button is large. BACnet."
    assert faithfulness(_judge(), "q", answer, CONTEXT) == \
        faithfulness_lexical(answer, CONTEXT) == pytest.approx(2 / 3)


def test_judged_context_precision_and_recall_on_hand_made_contexts():
    reference = "ETH2 has the fixed address 192.168.50.1/24. Hold RESET for 10 seconds."
    # The reference's content tokens: eth2 eth 2 fixed address 192 168 50 1 24 hold reset 10
    # seconds. Context 1 holds 10 of the 14 (useful), context 2 only "reset" (not useful).
    assert context_precision(_judge(), "q", CONTEXT, reference) == pytest.approx(1.0)
    assert context_precision(_judge(), "q", CONTEXT[::-1], reference) == pytest.approx(0.5)
    assert context_recall(_judge(), "q", CONTEXT, reference) == 0.5  # sentence 2 is not there


def test_answer_relevancy_offline_is_the_cosine_and_zero_when_noncommittal():
    question, answer = "What fixed address does ETH2 have?", "ETH2 has a fixed address."
    # words: question eth2, fixed, address; answer the same three → cosine ≈ 1
    assert answer_relevancy(_judge(), question, answer, WORDS) == pytest.approx(1.0, abs=1e-5)
    assert answer_relevancy_cosine("reset button", "reset", WORDS) == \
        pytest.approx(1 / math.sqrt(2), abs=1e-5)
    assert answer_relevancy_cosine(question, "I don't know the address.", WORDS) == 0.0


def test_noncommittal_rule_any_zeroes_on_one_sample_all_needs_every_sample():
    def one_evasive(path, request):  # only the second generated question says noncommittal
        status, body = standin.respond(path, request)
        obj = json.loads(body["content"][0]["text"])
        obj["noncommittal"] = int("sample 2" in request["messages"][0]["content"])
        body["content"][0]["text"] = json.dumps(obj)
        return status, body
    question, answer = "reset button", "reset button"
    assert answer_relevancy(_judge(one_evasive), question, answer, WORDS, noncommittal="any") == 0
    assert answer_relevancy(_judge(one_evasive), question, answer, WORDS,
                            noncommittal="all") == pytest.approx(1.0, abs=1e-5)


def test_score_offline_rows_and_the_table_against_seed_thresholds():
    rows = score_offline({"q1": "reset button", "q2": "bacnet"},
                         {"q1": "The RESET button is recessed.", "q2": "I don't know."},
                         {"q1": ["c2", "c1"], "q2": ["c1"]},
                         {"q1": CONTEXT[::-1], "q2": CONTEXT[:1]},
                         {"q1": [frozenset({"c2"})]}, WORDS)
    # q1: both answer words (reset, button) are the question's; c2 is the golden chunk, first.
    assert rows.loc["q1"].tolist() == pytest.approx([1.0, 1.0, 1.0, 1.0], abs=1e-5)
    assert rows.loc["q2", "faithfulness_lexical"] == 0.0  # "know" is not in the context
    assert rows.loc["q2", "answer_relevancy_cosine"] == 0.0  # noncommittal
    assert math.isnan(rows.loc["q2", "context_precision_golden"])  # no golden items
    table = ragas_table(rows)
    assert table.loc["faithfulness_lexical", ["mean", "result"]].tolist() == [0.5, "fail"]
    assert table.loc["context_precision_golden", "mean"] == pytest.approx(1.0)  # 1/(1+1e-10)
    assert table.loc["context_precision_golden", ["scored", "NaN", "threshold",
                                                  "result"]].tolist() == [1, 1, 0.75, "pass"]
    assert table.loc["answer_relevancy_cosine", "how"] == "approximation: embedder cosine"


def test_table_says_no_score_and_uses_seed_thresholds():
    table = ragas_table([{"faithfulness": 0.85, "context_recall": math.nan,
                          "answer_relevancy": 0.79}])
    assert table.loc["faithfulness", "how"] == "judged"
    # shown without the notebook's prose (the report), it names who judged
    named = ragas_table([{"faithfulness": 0.85, "faithfulness_lexical": 0.8}],
                        judge="the offline stand-in")
    assert named["how"].tolist() == ["judged by the offline stand-in",
                                     "approximation: word overlap"]
    assert table["threshold"].to_dict() == {"faithfulness": 0.85, "answer_relevancy": 0.8,
                                            "context_recall": 0.8}
    assert table["result"].to_dict() == {"faithfulness": "pass", "answer_relevancy": "fail",
                                         "context_recall": "no score"}
