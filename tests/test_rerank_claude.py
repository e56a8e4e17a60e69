"""The claude reranker: RankGPT's messages and windows, permutation repair, cache, stand-in."""
from __future__ import annotations

import json
import re

import httpx2
import pytest

from ragkit import standin
from ragkit.cache import CallCache
from ragkit.documents import Chunk, RagkitError, RagkitWarning
from ragkit.llm import LLM, UsageLog, make_client
from ragkit.rerank import Candidate, get_reranker
from ragkit.rerank.claude import ClaudeReranker
from ragkit.rerank.listwise import apply_in_place, build_messages, parse_permutation, windows
from ragkit.standin.rerank import rule

SYSTEM = ("You are RankGPT, an intelligent assistant that can rank passages based on their "
          "relevancy to the query.")


def candidates(n: int) -> list[Candidate]:
    return [Candidate(Chunk(f"c{i}", "doc", f"passage {i}"), 1.0 - i / 100) for i in range(n)]


class Scripted:
    """A Messages API that records each request and answers with `answer(n_passages)`."""

    def __init__(self, answer=lambda n: " > ".join(f"[{i}]" for i in range(n, 0, -1))):
        self.answer, self.bodies = answer, []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.read())
        self.bodies.append(body)
        n = (len(body["messages"]) - 3) // 2
        return httpx2.Response(200, json={
            "id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": self.answer(n)}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}})

    def passages(self, i: int) -> list[str]:
        """The passage texts of request i, in the order they were sent."""
        turns = self.bodies[i]["messages"][2:-1:2]
        return [re.match(r"\[\d+\] (.*)", t["content"]).group(1) for t in turns]


def reranker(tmp_path, handler, **options) -> ClaudeReranker:
    client = make_client(max_retries=0, transport=httpx2.MockTransport(handler))
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    return ClaudeReranker(llm=llm, **options)


def test_one_window_sends_rankgpts_conversation_word_for_word(tmp_path):
    api = Scripted(lambda n: "[2] > [3] > [1]")
    cands = [Candidate(Chunk("a", "d", "Alpha  text\nhere"), 0.9),
             Candidate(Chunk("b", "d", "Beta", context="From the beta doc."), 0.8),
             Candidate(Chunk("c", "d", " ".join(f"w{i}" for i in range(305))), 0.7)]
    out = reranker(tmp_path, api).rerank("refund window?", cands, k=3)
    assert out == [("b", 1.0), ("c", 0.5), ("a", 1 / 3)]
    [body] = api.bodies
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("claude-haiku-4-5", 0, 256)
    assert body["system"] == SYSTEM
    assert body["messages"] == [
        {"role": "user", "content": "I will provide you with 3 passages, each indicated by "
         "number identifier []. \nRank the passages based on their relevance to query: "
         "refund window?."},
        {"role": "assistant", "content": "Okay, please provide the passages."},
        {"role": "user", "content": "[1] Alpha text here"},
        {"role": "assistant", "content": "Received passage [1]."},
        {"role": "user", "content": "[2] Beta Context: From the beta doc."},
        {"role": "assistant", "content": "Received passage [2]."},
        {"role": "user", "content": "[3] " + " ".join(f"w{i}" for i in range(300))},
        {"role": "assistant", "content": "Received passage [3]."},
        {"role": "user", "content": "Search Query: refund window?. \nRank the 3 passages above "
         "based on their relevance to the search query. The passages should be listed in "
         "descending order using identifiers. The most relevant passages should be listed "
         "first. The output format should be [] > [], e.g., [20] > [19]. Only response the "
         "ranking results, do not say any word or explain."}]


def test_windows_run_back_to_front_as_rankgpts():
    assert windows(100, 20, 10) == [(80, 100), (70, 90), (60, 80), (50, 70), (40, 60),
                                    (30, 50), (20, 40), (10, 30), (0, 20)]
    assert windows(25, 20, 10) == [(5, 25), (0, 15)]  # the head is clipped, not skipped
    assert windows(7, 20, 10) == [(0, 7)]
    assert windows(0, 20, 10) == []
    with pytest.raises(RagkitError, match="step"):
        windows(10, 5, 6)


def test_each_window_is_permuted_in_place_before_the_next_is_sent(tmp_path):
    api = Scripted()  # always answers the reverse order
    out = reranker(tmp_path, api).rerank("q", candidates(25), k=25)
    assert [len(b["messages"]) for b in api.bodies] == [3 + 2 * 20, 3 + 2 * 15]
    assert api.passages(0) == [f"passage {i}" for i in range(5, 25)]
    # window [5, 25) reversed puts c24..c15 at positions 5..14, which the second window sees
    assert api.passages(1) == [f"passage {i}" for i in [0, 1, 2, 3, 4, *range(24, 14, -1)]]
    order = [*range(15, 25), 4, 3, 2, 1, 0, *range(14, 4, -1)]
    assert out == [(f"c{i}", 1 / (p + 1)) for p, i in enumerate(order)]
    assert reranker(tmp_path, Scripted()).rerank("q", candidates(25), k=3) == [
        ("c15", 1.0), ("c16", 0.5), ("c17", 1 / 3)]


@pytest.mark.parametrize("reply, n, order, valid", [
    ("[3] > [1] > [3] > [9]", 4, [2, 0, 1, 3], True),
    ("[2] > [1]", 3, [1, 0, 2], True),
    ("Ranking: 2, then [1]; 3 last.", 3, [1, 0, 2], True),
    ("[0] > [2]", 2, [1, 0], True),
    ("", 3, [0, 1, 2], False),
    ("I cannot rank these passages.", 3, [0, 1, 2], False),
    ("[7] > [0]", 3, [0, 1, 2], False),
])
def test_permutation_parsing_and_repair(reply, n, order, valid):
    parsed = parse_permutation(reply, n)
    assert (parsed.order, parsed.valid) == (order, valid)


def test_repair_counts_what_it_fixed():
    parsed = parse_permutation("[3] > [1] > [3] > [9]", 4)
    assert (parsed.unknown, parsed.repeated, parsed.missing, parsed.clean) == (1, 1, 2, False)
    assert parse_permutation("[2] > [1]", 2).clean


def test_apply_in_place_moves_only_the_window():
    items = list("abcdef")
    apply_in_place(items, 2, [2, 0, 1])
    assert items == list("abecdf")


def test_garbage_reply_keeps_the_window_order_with_a_counted_warning(tmp_path):
    ranker = reranker(tmp_path, Scripted(lambda n: "Sorry, I can't help with that."))
    with pytest.warns(RagkitWarning, match="1 named no passage"):
        out = ranker.rerank("q", candidates(4), k=2)
    assert out == [("c0", 1.0), ("c1", 0.5)]
    assert (ranker.fallbacks, ranker.repaired, ranker.replies) == (1, 0, 1)


def test_repaired_reply_is_applied_and_warned(tmp_path):
    ranker = reranker(tmp_path, Scripted(lambda n: "[3] > [1] > [3] > [9]"))
    with pytest.warns(RagkitWarning, match="unknown or repeated.*left passages out"):
        out = ranker.rerank("q", candidates(4), k=4)
    assert [cid for cid, _ in out] == ["c2", "c0", "c1", "c3"]
    assert (ranker.fallbacks, ranker.repaired) == (0, 1)


def test_second_run_is_served_from_the_cache(tmp_path):
    first, second = Scripted(), Scripted()
    out = reranker(tmp_path, first).rerank("q", candidates(25), k=5)
    ranker = reranker(tmp_path, second)
    assert ranker.rerank("q", candidates(25), k=5) == out
    assert (len(first.bodies), len(second.bodies)) == (2, 0)
    assert ranker.llm.usage.models["claude-haiku-4-5"].cache_hits == 2


def test_a_single_candidate_costs_no_call(tmp_path):
    api = Scripted()
    assert reranker(tmp_path, api).rerank("q", candidates(1), k=5) == [("c0", 1.0)]
    assert reranker(tmp_path, api).rerank("q", [], k=5) == []
    assert api.bodies == []


def test_standin_rule_orders_by_query_terms_then_position():
    system, messages = build_messages("How long is the refund window for widgets?", [
        "Cats sleep all day.", "Refund policy for widgets.", "Widgets ship fast.",
        "The refund window is seven days."])
    reply = rule({"model": "claude-haiku-4-5", "system": system, "messages": messages})
    # terms {long, refund, window, widgets}: overlaps 0, 2, 1, 2 → [2], [4], [3], [1]
    assert reply.content == [{"type": "text", "text": "[2] > [4] > [3] > [1]"}]
    assert rule({"model": "claude-haiku-4-5", "messages": messages}) is None
    assert rule({"model": "claude-haiku-4-5", "system": "Be brief.",
                 "messages": [{"role": "user", "content": "hi"}]}) is None


def test_standin_answers_rankgpt_before_the_contextualization_rule():
    system, messages = build_messages("chunk tags", [
        "<document>a</document> <chunk>a</chunk>", "chunk tags explained"])
    status, body = standin.respond("/v1/messages", {"model": "claude-haiku-4-5",
                                                    "max_tokens": 256, "system": system,
                                                    "messages": messages})
    assert status == 200 and body["content"][0]["text"] == "[2] > [1]"


def test_get_reranker_claude_runs_offline_through_the_sdk(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    ranker = get_reranker("claude")
    assert ranker.llm.offline
    cands = [Candidate(Chunk(f"c{i}", "d", t), 1.0) for i, t in enumerate([
        "Cats sleep all day.", "Refund policy for widgets.", "Widgets ship fast.",
        "The refund window is seven days."])]
    out = ranker.rerank("How long is the refund window for widgets?", cands, k=3)
    assert out == [("c1", 1.0), ("c3", 0.5), ("c2", 1 / 3)]
    assert (tmp_path / "cache" / "calls.sqlite").is_file()


def test_unknown_model_fails_before_any_call(tmp_path):
    with pytest.raises(RagkitError, match="unknown model 'claude-nope'"):
        reranker(tmp_path, Scripted(), model="claude-nope")


def test_api_failure_is_one_line_and_says_the_cache_keeps_answered_windows(tmp_path):
    def busy(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(529, json={"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}})
    with pytest.raises(RagkitError, match="claude reranker: .*529.*rerun to continue"):
        reranker(tmp_path, busy).rerank("q", candidates(3), k=3)
