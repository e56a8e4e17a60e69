"""Self-RAG: the score formula on hand-made label probabilities, the rules, the judge path."""
from __future__ import annotations

import math

import pytest

from ragkit.agent import self_rag as S
from ragkit.documents import Chunk, RagkitWarning
from ragkit.answer_judge import Judge
from ragkit.llm import LLM, make_client
from ragkit.standin import respond, transport


def test_score_formula_by_hand():
    p_rel = {"Relevant": 0.6, "Irrelevant": 0.2}           # s_rel = 0.6 / 0.8 = 0.75
    p_sup = {"Fully supported": 0.5, "Partially supported": 0.3,
             "No support / Contradictory": 0.2}            # s_sup = 0.5 + 0.5·0.3 = 0.65
    p_use = {"1": 0.1, "3": 0.2, "5": 0.7}                 # s_use = −0.1 + 0 + 0.7 = 0.6
    assert S.s_rel(p_rel) == pytest.approx(0.75)
    assert S.s_sup(p_sup) == pytest.approx(0.65)
    assert S.s_use(p_use) == pytest.approx(0.6)
    assert S.score(p_rel, p_sup, p_use) == pytest.approx(0.75 + 0.65 + 0.5 * 0.6)  # 1.70


def test_scores_are_normalised_by_the_label_mass():
    assert S.s_sup({"Fully supported": 0.2, "Partially supported": 0.2}) == pytest.approx(0.75)
    assert S.s_use({"2": 0.25, "4": 0.25}) == pytest.approx(0.0)  # (−0.5 + 0.5) / 2 · 0.25
    assert math.isnan(S.score({}, {"Fully supported": 1.0}, {"5": 1.0}))  # undecided


def test_offline_rules():
    assert S.retrieve_rule("Thanks!") == 0.0
    assert S.retrieve_rule("Hello, what is the refund window?") == 1.0
    passage = "Refunds are paid within 21 days of the return."
    assert S.issup_rule("Refunds are paid within 21 days. [1]", passage) == "Fully supported"
    assert S.issup_rule("Refunds are paid within 21 days. Pets fly free on Mondays.",
                        passage) == "Partially supported"
    assert S.issup_rule("I don't know: the sources do not answer this question.",
                        passage) == "No support / Contradictory"
    # 2 of the question's 3 content terms (refund, days; not "window"): 1 + round(4·2/3) = 4
    assert S.isuse_rule("refund window days", "Refunds: refund within 21 days") == "4"
    assert S.isuse_rule("refund window days", "I don't know.") == "1"


def _chunk(ident: str, text: str) -> Chunk:
    return Chunk(ident, "policies/en/refunds.md", text, metadata={"title": "Refunds"})


def test_self_rag_picks_the_best_supported_candidate():
    llm = LLM(make_client(transport=transport()), cache=False)
    passages = [_chunk("off", "Our shop opens at nine on weekdays."),
                _chunk("on", "The refund window is 21 days from delivery.")]
    result = S.self_rag("What is the refund window?", passages, S.OfflineReflector(),
                        llm=llm)
    assert [c.chunk_id for c in result.candidates] == ["off", "on"]
    best = max(result.candidates, key=lambda c: c.score)
    assert best.chunk_id == "on" and result.answer is best.answer
    assert "21 days" in result.answer.text


def test_no_retrieval_for_chit_chat_makes_one_plain_call():
    llm = LLM(make_client(transport=transport()), cache=False)
    result = S.self_rag("Thank you!", [_chunk("a", "text")], S.OfflineReflector(), llm=llm)
    assert result.p_retrieve == 0.0 and result.candidates == ()
    assert sum(r.requests for r in llm.usage.models.values()) >= 1


def test_claude_reflector_through_the_stand_in_and_malformed_votes():
    llm = LLM(make_client(transport=transport()), cache=False)
    judge = Judge(llm)
    reflector = S.ClaudeReflector(judge)
    assert reflector.retrieve("What is the refund window?") == 1.0
    assert reflector.isrel("refund window days", "refund window: 21 days") == {"Relevant": 1.0}
    assert reflector.isuse("refund window days", "I don't know.") == {"1": 1.0}

    def broken(path, body):
        status, reply = respond(path, body)
        reply["content"] = [{"type": "text", "text": '{"label": "Sort of"}'}]
        return status, reply
    bad = S.ClaudeReflector(Judge(LLM(make_client(max_retries=0, transport=transport(broken)),
                                      cache=False)))
    with pytest.warns(RagkitWarning, match="selfrag_isrel v1"):
        p = bad.isrel("q", "p")
    assert p == {} and math.isnan(S.s_rel(p)) and bad.judge.failures["selfrag_isrel"] == 1
