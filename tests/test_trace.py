"""Agent traces: exact requests on disk, tables with hand-computed numbers, OTel spans."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from agent_fakes import SHOPCORE
from cli_errors import one_error_line
from test_agent_loop import Script, run, use

from ragkit.agent.trace import (caching_table, input_tokens_per_turn, read_trace, timeline,
                                to_otel, trace_table)
from ragkit.documents import RagkitError


@pytest.fixture
def traced(tmp_path):
    script = Script([{"type": "text", "text": "Searching."}, use("a", "grep", pattern="refund"),
                     use("b", "nope")], usage=(2500, 40))
    path = tmp_path / "run.jsonl"
    result = run(script, trace=path)
    return script, result, read_trace(path), path


def test_each_turn_records_the_exact_request_and_its_calls(traced):
    script, result, records, _ = traced
    assert [r["turn"] for r in records] == [1, 2]
    for record, sent in zip(records, script.requests):
        assert record["request"]["messages"] == sent["messages"]
        assert record["request"]["system"] == sent["system"]
    calls = records[0]["tool_calls"]
    assert [(c["name"], c["is_error"], c["executed"]) for c in calls] == \
        [("grep", False, True), ("nope", True, True)]
    assert records[0]["reply"]["content"][0] == {"type": "text", "text": "Searching."}
    assert records[1]["tool_calls"] == [] and records[1]["usage"]["input_tokens"] == 5000


def test_tables_per_turn(traced):
    _, _, records, _ = traced
    table = trace_table(records)
    assert "not run" not in table.columns  # every call ran: no column of zeros
    assert table["tool calls"].tolist() == ["grep, nope", "(answer)"]
    assert table["errors"].tolist() == [1, 0]
    assert table["in"].tolist() == [2500, 5000] and table["out"].tolist() == [40, 40]
    assert input_tokens_per_turn(records)["prompt tokens"].tolist() == [2500, 5000]


def test_caching_estimate_by_hand(traced):
    _, _, records, _ = traced
    records[0]["usage"]["input_tokens"] = 5000
    records[1]["usage"]["input_tokens"] = 6000
    table = caching_table(records, "claude-haiku-4-5")  # $1 in, $1.25 write, $0.10 read
    assert table["read from cache"].tolist() == [0, 5000]
    assert table["written to cache"].tolist() == [5000, 1000]
    assert table["$ no cache"].tolist() == pytest.approx([0.005, 0.006])
    assert table["$ with cache"].tolist() == pytest.approx([0.00625, 0.00175])
    assert set(table["source"]) == {"estimated"}
    records[1]["usage"].update(cache_read_input_tokens=4000, cache_creation_input_tokens=0)
    assert caching_table(records, "claude-haiku-4-5")["read from cache"].tolist() == [0, 4000]


def test_timeline_has_a_bar_per_call(traced):
    _, _, records, _ = traced
    fig = timeline(records)
    assert len(fig.axes[0].patches) == 4  # 2 model calls, 2 tool calls
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == \
        ["turn 1", "grep", "nope", "turn 2"]
    assert "red: is_error" in fig.axes[0].get_xlabel()  # "nope" failed


def test_a_call_far_shorter_than_the_run_still_shows_with_its_duration():
    """Notebook 05's run: one cold grep of 2.4 s, then calls of a few milliseconds, drew
    seventeen of eighteen rows without a visible bar, and promised red for errors it had not."""
    records = [{"turn": 1, "started_at": 100.0, "model_seconds": 0.0005, "usage": {},
                "tool_calls": [{"name": "grep", "seconds": 2.4, "is_error": False}]},
               {"turn": 2, "started_at": 102.401, "model_seconds": 0.035, "usage": {},
                "tool_calls": [{"name": "read_file", "seconds": 0.002, "is_error": False}]}]
    ax = timeline(records).axes[0]
    total = 102.401 + 0.035 + 0.002 - 100.0
    assert min(p.get_width() for p in ax.patches) == pytest.approx(total / 200)
    assert [t.get_text() for t in ax.texts] == [" <1 ms", " 2.4 s", " 35 ms", " 2 ms"]
    assert ax.get_xlabel() == "seconds since the first call"
    # a run whose durations were all recorded as 0 still draws (it raised UnreadableFigure)
    still = [{"turn": 1, "started_at": 5.0, "model_seconds": 0.0, "usage": {}, "tool_calls": []}]
    assert [t.get_text() for t in timeline(still).axes[0].texts] == [" <1 ms"]


def test_a_file_that_is_not_a_trace_is_refused(tmp_path, traced):
    other = tmp_path / "notes.jsonl"
    other.write_text('{"mine": 1}\n')
    with pytest.raises(RagkitError, match="not a ragkit trace"):
        run(Script(), trace=other)
    assert other.read_text() == '{"mine": 1}\n'
    run(Script(), trace=traced[3])  # an old trace may be replaced
    assert len(read_trace(traced[3])) == 1
    with pytest.raises(RagkitError, match=r"notes.jsonl:1: format"):
        read_trace(other)


def test_opentelemetry_spans_with_genai_attributes(traced):
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    to_otel(traced[2], provider)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert sorted(spans) == ["chat claude-haiku-4-5", "execute_tool grep", "execute_tool nope",
                             "invoke_agent ragkit-agent"]
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert [s.attributes["gen_ai.usage.input_tokens"] for s in chats] == [2500, 5000]
    assert chats[0].attributes["gen_ai.operation.name"] == "chat"
    assert chats[0].attributes["gen_ai.request.model"] == "claude-haiku-4-5"
    assert chats[0].attributes["gen_ai.usage.output_tokens"] == 40
    tool = spans["execute_tool nope"]
    assert tool.attributes["gen_ai.tool.name"] == "nope"
    assert tool.attributes["gen_ai.tool.call.id"] == "b"
    assert tool.status.status_code.name == "ERROR"
    assert tool.attributes["error.type"] == "tool_error"
    root = spans["invoke_agent ragkit-agent"]
    assert all(s.parent.span_id == root.context.span_id for s in chats)
    json.dumps(dict(root.attributes))
    for call in traced[2][0]["tool_calls"]:  # a trace written before calls said if they ran
        del call["executed"]
    exporter.clear()
    to_otel(traced[2], provider)  # raised KeyError: 'executed'
    assert len(exporter.get_finished_spans()) == 5  # two chats, two tools, the run


def _ask_agent(tmp_path, trace, **env_extra):
    """`ragkit ask --agent` in a new process, writing its trace to `trace`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    env.update(RAGKIT_HOME=str(tmp_path / "home"), **env_extra)
    return subprocess.run([sys.executable, "-m", "ragkit.cli", "ask", "--agent", "--root",
                           str(SHOPCORE), "--trace", str(trace), "--api-retries", "0",
                           "Find the bug that stores a negative refund amount"],
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_run_failing_on_its_first_turn_keeps_the_previous_trace(tmp_path):
    trace = tmp_path / "traces" / "run.jsonl"
    trace.parent.mkdir()
    assert _ask_agent(tmp_path, trace).returncode == 0  # the offline stand-in: 4 turns
    before = trace.read_bytes()
    assert len(before.splitlines()) == 4
    with socket.socket() as closed:  # a port nothing listens on: the first request fails
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    failed = _ask_agent(tmp_path, trace, ANTHROPIC_API_KEY="x", ANTHROPIC_BASE_URL=url)
    assert one_error_line(failed).startswith(
        f"ragkit: error: cannot reach the Anthropic API at {url} (")
    assert trace.read_bytes() == before
    assert sorted(p.name for p in trace.parent.iterdir()) == ["run.jsonl"]


def test_calls_the_turn_limit_left_unrun_are_not_errors_in_the_table_or_the_timeline(tmp_path):
    """Notebook 05 with `-p max_turns=3` and another question: the last turn's call, answered
    "Not executed", was counted under `errors` and drawn as a red "<1 ms" bar, as if it had
    run and failed."""
    script = Script(*[[use(f"t{i}", "grep", pattern="refund")] for i in range(3)])
    path = tmp_path / "run.jsonl"
    result = run(script, trace=path, max_turns=2)
    assert result.stop_reason == "max_turns"
    table = trace_table(read_trace(path))
    assert table[["tool calls", "errors", "not run"]].to_dict("list") == {
        "tool calls": ["grep", "grep"], "errors": [0, 0], "not run": [0, 1]}
    ax = timeline(read_trace(path)).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["turn 1", "grep", "turn 2", "grep"]
    assert ax.texts[-1].get_text() == " not run"
    assert ax.patches[-1].get_facecolor()[:3] != ax.patches[1].get_facecolor()[:3]
    assert ax.get_xlabel() == "seconds since the first call (grey: not run)"
