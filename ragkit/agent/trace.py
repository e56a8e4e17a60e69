"""Traces of agent runs: JSONL on disk, tables and timelines for notebooks, OpenTelemetry spans.

What it is:
- `TraceWriter(path)` (`ragkit.agent.trace_file`, re-exported here): one JSON record per
  turn, appended and flushed (and fsync'ed) as each turn ends, so a crash keeps every
  finished turn. Each record holds the exact request
  sent (`system`, `tools`, `tool_choice` and the `messages` list with its cache
  breakpoint), the reply, every tool call with its result, the four usage counters and
  timings. A file is replaced only if it is empty or already a ragkit trace.
- `read_trace(path)`, `trace_table(records)` (turn, tool calls, tokens in / out / cache,
  seconds), `input_tokens_per_turn(records)` (what each call re-sends: the agentic-RAG
  notes' last diagram), `caching_table(records, model)` (dollars with and without the growing prefix
  read from the prompt cache), `timeline(records)` (a matplotlib figure);
- `to_otel(records, tracer_provider)`: one span per run, model call and tool call with the
  OpenTelemetry GenAI semantic-convention attributes (`gen_ai.operation.name`,
  `gen_ai.request.model`, `gen_ai.usage.input_tokens`, `gen_ai.tool.name`, …). Needs
  `opentelemetry-sdk` (the `otel` extra); without it, a clear error.

What it is not: a tracing backend. Export spans with your own provider and exporter.
Conventions: opentelemetry.io/docs/specs/semconv/gen-ai/ (gen-ai-spans, version 1.37).
"""
from __future__ import annotations

import time
from typing import Any

import pandas as pd

# FORMAT, TraceWriter, is_trace, read_trace, turn_record: importable from here too, as before
from ragkit.agent.trace_file import FORMAT, TraceWriter, is_trace, read_trace, turn_record
from ragkit.documents import RagkitError
from ragkit.figure_check import checked
from ragkit.memory import out_of_memory
from ragkit.pricing import Usage, price


def _names(calls: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for call in calls:
        counts[call["name"]] = counts.get(call["name"], 0) + 1
    return ", ".join(f"{n}×{k}" if k > 1 else n for n, k in counts.items()) or "(answer)"


def _ran(call: dict[str, Any]) -> bool:
    """Whether a traced call ran: a turn limit or a failed call before it in a sequential
    batch leaves it answered "Not executed" (an error result it never produced)."""
    return call.get("executed", True)


def trace_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per turn: its calls, the errors of those that ran, the four token counters
    and the seconds spent; a column `not run` when calls did not run (they were counted as
    errors: a turn limit read as a failed grep)."""
    rows = [{"turn": r["turn"], "tool calls": _names(r["tool_calls"]),
             "errors": sum(c["is_error"] and _ran(c) for c in r["tool_calls"]),
             "not run": sum(not _ran(c) for c in r["tool_calls"]),
             "in": r["usage"]["input_tokens"], "out": r["usage"]["output_tokens"],
             "cache write": r["usage"]["cache_creation_input_tokens"],
             "cache read": r["usage"]["cache_read_input_tokens"],
             "model s": round(r["model_seconds"], 3),
             "tools s": round(sum(c["seconds"] for c in r["tool_calls"]), 3)}
            for r in records]
    table = pd.DataFrame(rows).set_index("turn")
    return table if table["not run"].any() else table.drop(columns="not run")


def input_tokens_per_turn(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Prompt tokens each call sent (uncached, written, read): the whole conversation again."""
    rows = []
    for r in records:
        u = Usage.of(r["usage"])
        rows.append({"turn": r["turn"], "uncached": u.input, "cache write": u.cache_write,
                     "cache read": u.cache_read, "prompt tokens": u.prompt_tokens})
    return pd.DataFrame(rows).set_index("turn")


def caching_table(records: list[dict[str, Any]], model: str) -> pd.DataFrame:
    """Per turn: prompt tokens, the prefix a cache breakpoint on the last block lets the next
    call read (measured when the API reports cache reads; else estimated as the previous
    call's whole prompt, when it reaches the model's minimum cacheable length), and the
    input dollars without and with that cache (writes at the 5-minute price)."""
    row = price(model)
    measured = any(r["usage"]["cache_read_input_tokens"] for r in records)
    rows, previous = [], 0
    for r in records:
        u = Usage.of(r["usage"])
        total = u.prompt_tokens
        if measured:
            read, write = u.cache_read, u.cache_write
        else:
            read = previous if previous >= row.min_cacheable else 0
            write = total - read if total >= row.min_cacheable else 0
        plain = total * row.input / 1e6
        cached = (read * row.read + write * row.write_5m + (total - read - write) * row.input) / 1e6
        rows.append({"turn": r["turn"], "prompt tokens": total, "read from cache": read,
                     "written to cache": write, "$ no cache": plain, "$ with cache": cached,
                     "source": "measured" if measured else "estimated"})
        previous = total
    return pd.DataFrame(rows).set_index("turn")


def _spans(records: list[dict[str, Any]]) -> list[tuple[str, str, float, float, bool]]:
    """(kind, label, start, end, is_error) in seconds from the first call; tools run after
    their model call, one after another. A call that did not run is of kind "not run"."""
    origin = records[0]["started_at"] if records else 0.0
    out = []
    for r in records:
        start = r["started_at"] - origin
        end = start + r["model_seconds"]
        out.append(("model", f"turn {r['turn']}", start, end, False))
        for call in r["tool_calls"]:
            kind, error = ("tool", call["is_error"]) if _ran(call) else ("not run", False)
            out.append((kind, call["name"], end, end + call["seconds"], error))
            end += call["seconds"]
    return out


@checked
def timeline(records: list[dict[str, Any]]):
    """A matplotlib figure: one bar per model turn and per tool call, on the time axis, each
    labelled with its duration; a call that did not run is a grey bar labelled so (it was a
    red "<1 ms", an error that never happened). A bar is drawn at least 1/200 of the run
    wide: one cold grep of 2.4 s left the other seventeen calls of a run invisible slivers."""
    import matplotlib.pyplot as plt
    spans = _spans(records)
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(spans) + 1.2))
    colours = {"model": "tab:blue", "tool": "tab:orange", "not run": "lightgray"}
    total = max((end for _, _, _, end, _ in spans), default=0.0)
    for row, (kind, label, start, end, error) in enumerate(spans):
        width = max(end - start, total / 200, 1e-6)
        ax.barh(row, width, left=start, color="tab:red" if error else colours[kind])
        said = "not run" if kind == "not run" else _duration(end - start)
        ax.text(start + width, row, f" {said}", va="center", fontsize=8)
    ax.set_yticks(range(len(spans)), [s[1] for s in spans])
    if total > 0:  # durations all recorded as 0: matplotlib's own range
        ax.set_xlim(0, total * 1.15)  # room for the last bar's label
    ax.invert_yaxis()
    keys = [key for key, shown in (("red: is_error", any(s[4] for s in spans)),
                                   ("grey: not run", any(s[0] == "not run" for s in spans)))
            if shown]
    ax.set_xlabel("seconds since the first call" + (f" ({'; '.join(keys)})" if keys else ""))
    ax.set_title("Agent run: turns (blue) and tool calls (orange)")
    fig.tight_layout()
    return fig


def _duration(seconds: float) -> str:
    """"2.4 s", "35 ms", "<1 ms": a bar's label."""
    if seconds >= 1:
        return f"{seconds:.1f} s"
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.001 else "<1 ms"


def to_otel(records: list[dict[str, Any]], tracer_provider: Any, name: str = "ragkit-agent"):
    """Emit the run as OpenTelemetry spans on `tracer_provider`: `invoke_agent` around one
    `chat MODEL` span per call and one `execute_tool NAME` span per tool call."""
    try:
        from opentelemetry.trace import Status, StatusCode, set_span_in_context
    except ImportError as exc:
        if out_of_memory(exc):  # installed, but out of memory: not advice to pip install
            raise
        raise RagkitError("OpenTelemetry export needs opentelemetry-sdk: "
                          "pip install 'ragkit[otel]'") from None
    tracer = tracer_provider.get_tracer("ragkit.agent")
    ns = 1_000_000_000
    origin = records[0]["started_at"] if records else time.time()
    spans = _spans(records)
    end = origin + (max(s[3] for s in spans) if spans else 0.0)
    root = tracer.start_span(f"invoke_agent {name}", start_time=int(origin * ns), attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
        "gen_ai.provider.name": "anthropic"})
    context = set_span_in_context(root)
    for r in records:
        _model_span(tracer, context, r, ns)
        start = r["started_at"] + r["model_seconds"]
        for call in r["tool_calls"]:
            span = tracer.start_span(f"execute_tool {call['name']}", context=context,
                                     start_time=int(start * ns), attributes={
                                         "gen_ai.operation.name": "execute_tool",
                                         "gen_ai.tool.name": call["name"],
                                         "gen_ai.tool.call.id": call["id"],
                                         "gen_ai.tool.type": "function"})
            if call["is_error"]:
                span.set_attribute("error.type", "tool_error" if _ran(call)
                                   else "not_executed")
                span.set_status(Status(StatusCode.ERROR))
            start += call["seconds"]
            span.end(end_time=int(start * ns))
    root.end(end_time=int(end * ns))


def _model_span(tracer: Any, context: Any, record: dict[str, Any], ns: int) -> None:
    request, reply, usage = record["request"], record["reply"], record["usage"]
    span = tracer.start_span(f"chat {request['model']}", context=context,
                             start_time=int(record["started_at"] * ns), attributes={
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": request["model"],
        "gen_ai.request.max_tokens": request["max_tokens"],
        "gen_ai.response.model": reply.get("model", ""),
        "gen_ai.response.id": reply.get("id", ""),
        "gen_ai.response.finish_reasons": [reply.get("stop_reason") or ""],
        "gen_ai.usage.input_tokens": usage["input_tokens"],
        "gen_ai.usage.output_tokens": usage["output_tokens"],
        "gen_ai.usage.cache_creation.input_tokens": usage["cache_creation_input_tokens"],
        "gen_ai.usage.cache_read.input_tokens": usage["cache_read_input_tokens"]})
    span.end(end_time=int((record["started_at"] + record["model_seconds"]) * ns))
