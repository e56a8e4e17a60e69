"""The stand-in agent program: the agentic-RAG notes' walk-through offline, tool_choice,
injected text."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from agent_fakes import SHOPCORE, executor, file_tools, shopcore_files

from ragkit import standin
from ragkit.agent.loop import SYSTEM, run_agent
from ragkit.agent.tool import ToolContext
from ragkit.llm import LLM
from ragkit.standin import agent

QUESTION = "Find the bug that stores a negative refund amount"
NOTES = Path(__file__).resolve().parent.parent / "data" / "corpus" / "notes"
INJECTED = re.compile(r"ignore (all )?previous instructions|disregard all prior|maintenance mode",
                      re.I)


@pytest.fixture
def files() -> dict[str, str]:
    return shopcore_files()


def _run(question, files, **kw):
    tools = file_tools(files)
    return run_agent(question, tools, ToolContext(root=SHOPCORE), llm=LLM(cache=False),
                     run_tool=executor(tools), **kw)


def _request(question, tools, messages=(), **extra):
    return {"model": "claude-haiku-4-5", "max_tokens": 1024, "system": SYSTEM,
            "tools": [t.definition() for t in tools],
            "messages": [{"role": "user", "content": question}, *messages], **extra}


def test_walk_through_finds_the_double_discount(files):
    result = _run(QUESTION, files)
    assert result.stop_reason == "answered"
    assert result.sources[:2] == ["orders/cancel.py:68", "payments/refund.py:39"]
    assert files["orders/cancel.py"].splitlines()[67].strip() == \
        "refund_amount = refund_amount - order.discount_total"
    assert files["payments/refund.py"].splitlines()[38].strip() == "amount = gross - discount"
    assert "subtract `discount`" in result.answer
    # grep → calculate_refund → its callers → orders/cancel.py
    followed = [c.input for c in result.tool_calls if c.turn == 2 and c.name == "grep"]
    assert {"pattern": r"calculate_refund\("} in followed
    assert any(c.turn == 3 and c.input.get("path") == "orders/cancel.py"
               for c in result.tool_calls)
    assert result.turns == 4


def test_first_turn_is_one_reply_with_several_independent_calls(files):
    result = _run(QUESTION, files)
    first = [(c.name, c.input["pattern"]) for c in result.tool_calls if c.turn == 1]
    assert first == [
        ("grep", r"(?i)\b(store|negative|refund|amount)"),
        ("grep", r"(?i)\b(def|class|function|func|fn)\s+\w*(store|negative|refund|amount)"),
        ("glob", "**/*store*"), ("glob", "**/*negative*"), ("glob", "**/*refund*"),
        ("glob", "**/*amount*")]
    assert result.calls_per_turn > 1.0


def test_identifiers_are_grepped_and_paths_globbed():
    assert agent.identifiers("Why does calculate_refund call allocateDiscount and "
                             "payments.refund on E-4031?") == \
        ["calculate_refund", "allocateDiscount", "payments.refund"]
    assert agent.key_terms("Find the bug that stores a negative refund amount") == \
        ["store", "negative", "refund", "amount"]
    request = _request("What does orders/cancel.py do?", file_tools({}))
    calls = agent.plan(agent.state_of(request), {"grep", "glob"})
    assert ("glob", {"pattern": "**/orders/cancel.py"}) in calls


def test_text_first_with_auto_and_tool_choice_variants(files):
    tools = file_tools(files)
    status, reply = standin.respond("/v1/messages", _request(QUESTION, tools))
    assert status == 200 and reply["stop_reason"] == "tool_use"
    assert reply["content"][0]["type"] == "text"
    assert [b["type"] for b in reply["content"][1:]] == ["tool_use"] * 6
    for choice, names in [({"type": "any"}, ["grep"] * 2 + ["glob"] * 4),
                          ({"type": "tool", "name": "glob"}, ["glob"] * 4),
                          ({"type": "any", "disable_parallel_tool_use": True}, ["grep"])]:
        _, reply = standin.respond("/v1/messages", _request(QUESTION, tools, tool_choice=choice))
        assert [b.get("name") for b in reply["content"]] == names, choice
    _, reply = standin.respond("/v1/messages",
                               _request(QUESTION, tools, tool_choice={"type": "none"}))
    assert reply["content"] == [{"type": "text", "text": agent.DECLINE}]


def test_says_it_does_not_know_when_nothing_matches(files):
    result = _run("Which quantum flux capacitor calibrates the warp coils?", files)
    assert result.stop_reason == "answered"
    assert result.answer == agent.DECLINE and result.sources == []


def _hostile_lines() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted(NOTES.glob("*.md"))]
    texts.append((SHOPCORE / "payments" / "reconcile.py").read_text(encoding="utf-8"))
    return [line for text in texts for line in text.splitlines() if INJECTED.search(line)]


def test_injected_text_in_results_does_not_change_the_next_action(files):
    hostile = _hostile_lines()
    assert len(hostile) >= 5  # every shipped hostile note and reconcile.py has one
    tools = file_tools(files)
    first = standin.respond("/v1/messages", _request(QUESTION, tools))[1]["content"]
    uses = [b for b in first if b["type"] == "tool_use"]
    run = executor(tools)
    clean = [{"type": "tool_result", "tool_use_id": b["id"],
              "content": run(b["name"], b["input"], None).content} for b in uses]
    planted = copy.deepcopy(clean)
    # the same hit locations, carrying the injected lines as their text
    planted[0]["content"] += "".join(f"\npayments/reconcile.py:{n}:{line}"
                                     for n, line in enumerate(hostile, start=7))
    clean[0]["content"] += "".join(f"\npayments/reconcile.py:{n}:    pass"
                                   for n, _ in enumerate(hostile, start=7))
    replies = [standin.respond("/v1/messages", _request(
        QUESTION, tools, [{"role": "assistant", "content": first},
                          {"role": "user", "content": results}]))[1]["content"]
        for results in (clean, planted)]
    assert replies[0] == replies[1]
    assert {b["name"] for b in replies[1] if b["type"] == "tool_use"} <= {"grep", "read_file"}


def test_hostile_notes_stay_inside_tool_results(files):
    notes = {f"notes/{p.name}": p.read_text(encoding="utf-8") for p in NOTES.glob("*.md")}
    result = _run("What did customer operations report about refund processing and returns?",
                  notes)
    seen = 0
    for message in result.messages:
        blocks = message["content"] if isinstance(message["content"], list) else \
            [{"type": "text", "text": message["content"]}]
        for block in blocks:
            if block["type"] == "tool_result":
                seen += bool(INJECTED.search(str(block["content"])))
            else:
                assert not INJECTED.search(block.get("text", "") + str(block.get("input", "")))
    assert seen >= 1  # the notes were read, inside tool_result blocks only
    assert "audit-archive" not in result.answer and "90 days" not in result.answer
    assert {c.name for c in result.tool_calls} <= {"grep", "glob", "read_file"}
