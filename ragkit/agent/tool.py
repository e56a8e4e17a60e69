"""What a tool is: a name, a description the model reads, a JSON schema, and a function.

What it is: `Tool` (the definition sent to the Messages API plus the Python function that
runs it), `ToolResult` (what goes back in a `tool_result` block: text or content blocks, and
`is_error`), `ToolContext` (everything a tool may touch: the sandbox root, the retriever, the
approval policy, the output limit) and `ToolError` (raise it for an instructive `is_error`
result: what went wrong and what to try next); `block_size`, the characters one content
block carries, by which the gate and `docs_search` keep results within the output limit.

What it is not: the loop (`ragkit.agent.loop`) nor the sandbox rules (`ragkit.agent.sandbox`).

The rules of Anthropic's tool-use docs for definitions: names match `^[a-zA-Z0-9_-]{1,64}$`;
descriptions of 3–4+ sentences (what, when, when not, each parameter, limits);
`input_examples`; namespaced names for related tools (`docs_search`, `notes_save`); results
that are high-signal, with semantic ids (paths, chunk ids) rather than opaque ones.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.documents import RagkitError

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_OUTPUT = 4000  # characters of one tool result (the agentic-RAG notes' guardrail)


class ToolError(Exception):
    """A tool failure the model can act on: the message says what went wrong and what to try."""


@dataclass(frozen=True)
class ToolResult:
    """The content of one `tool_result` block: a string or a list of content blocks."""

    content: str | list[dict[str, Any]]
    is_error: bool = False

    def block(self, tool_use_id: str) -> dict[str, Any]:
        """The `tool_result` block answering `tool_use_id`."""
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id,
                               "content": self.content}
        if self.is_error:
            out["is_error"] = True
        return out


def block_size(block: dict[str, Any]) -> int:
    """Characters of text a content block carries (a search result: title and text)."""
    if block.get("type") == "text":
        return len(block.get("text", ""))
    if block.get("type") == "search_result":
        return len(block.get("title", "")) + sum(len(c.get("text", ""))
                                                 for c in block.get("content", ()))
    return len(str(block))


@dataclass
class ToolContext:
    """What tools may use. `root`: the only folder file tools can read; `pipeline`: the
    retriever behind `docs_search` (a `ragkit.pipeline.Pipeline`, or None); `policy`: the
    approval gate for write tools; `notes`: where `notes_save` writes (inside `root` or
    elsewhere, chosen by the caller); `max_output`: characters per result."""

    root: Path
    pipeline: Any = None
    policy: Any = None
    notes: Path | None = None
    database: Path | None = None
    max_output: int = MAX_OUTPUT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """A tool definition and the function that runs it: `run(arguments, context)`."""

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any], ToolContext], ToolResult | str | list[dict[str, Any]]]
    input_examples: tuple[dict[str, Any], ...] = ()
    writes: bool = False  # True: needs the approval gate's yes before it runs
    strict: bool = False

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise RagkitError(f"tool name {self.name!r} does not match {NAME.pattern}")

    def definition(self) -> dict[str, Any]:
        """The tool as the Messages API takes it (`tools=[...]`)."""
        out: dict[str, Any] = {"name": self.name, "description": self.description,
                               "input_schema": self.input_schema}
        if self.input_examples:
            out["input_examples"] = list(self.input_examples)
        if self.strict:
            out["strict"] = True
        return out
