"""The SDK's Tool Runner beside the manual loop: the same tools, the SDK drives the turns.

What it is: `runner_tools(tools, context, run_tool)` wraps each `Tool` as a `@beta_tool`
function tool (`anthropic.lib.tools.BetaFunctionTool`: our name, description and JSON
schema; the call goes through the same executor as the manual loop, so the approval gate
and argument checks still apply; an `is_error` result is raised as the SDK's `ToolError`,
which the runner sends back with `is_error: true`). `run_with_tool_runner(question, tools,
context, client=..., max_iterations=...)` runs `client.beta.messages.tool_runner(...,
thread=False)` — `thread=False` sends the whole conversation each turn, which any local
endpoint (the offline stand-in) needs — and returns the last reply's text and the messages.

What each gives you: the Tool Runner writes the loop, formats results and retries for you;
the manual loop (`ragkit.agent.loop`) is needed for what the runner does not expose:
custom batching (sequential batches with "not executed" results), turn and token
guardrails with a clear stop, a per-turn JSONL trace of the exact requests, the paid-call
cache, and a cache breakpoint moved forward each turn.
Source: anthropic 2.14 `lib/tools/_beta_functions.py`, `_beta_runner.py`.

What it is not: cached or metered through `ragkit.llm` (the runner calls the client itself).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic.lib.tools import BetaFunctionTool
from anthropic.lib.tools import ToolError as SDKToolError

from ragkit.agent.loop import MAX_TOKENS, SYSTEM, Executor, _default_executor, execute
from ragkit.agent.tool import Tool, ToolContext
from ragkit.documents import RagkitError
from ragkit.llm import explain, make_client


def runner_tools(tools: Sequence[Tool], context: ToolContext,
                 run_tool: Executor | None = None) -> list[BetaFunctionTool]:
    """Each tool as a Tool Runner function tool with its own definition."""
    executor = run_tool or _default_executor()
    by_name = {t.name: t for t in tools}

    def wrap(tool: Tool) -> BetaFunctionTool:
        def call(**arguments: Any) -> Any:
            result = execute(tool.name, arguments, by_name, context, executor)
            if result.is_error:
                raise SDKToolError(result.content)
            return result.content
        call.__name__ = tool.name
        return BetaFunctionTool(call, name=tool.name, description=tool.description,
                                input_schema=tool.input_schema,
                                input_examples=list(tool.input_examples) or None,
                                strict=tool.strict or None)
    return [wrap(t) for t in tools]


def run_with_tool_runner(question: str, tools: Sequence[Tool], context: ToolContext, *,
                         client: anthropic.Anthropic | None = None,
                         model: str = "claude-haiku-4-5", max_iterations: int = 8,
                         run_tool: Executor | None = None,
                         system: str = SYSTEM) -> tuple[str, list[Any]]:
    """(answer text, the assistant messages) of a Tool Runner run over the same tools."""
    client = client or make_client()
    runner = client.beta.messages.tool_runner(
        model=model, max_tokens=MAX_TOKENS, system=system,
        messages=[{"role": "user", "content": question}],
        tools=runner_tools(tools, context, run_tool), max_iterations=max_iterations,
        thread=False)
    try:
        replies = list(runner)
    except anthropic.APIError as exc:  # one line, key masked, as every other Claude call
        raise RagkitError(explain(exc, model, client)) from None
    last = replies[-1] if replies else None
    text = "".join(b.text for b in last.content if b.type == "text").strip() if last else ""
    return text, replies
