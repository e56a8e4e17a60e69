"""The approval gate and `run_tool`, the one way a tool call is executed.

What it is: read tools run automatically; a write tool (`Tool.writes`) runs only when the
approval policy says yes (Anthropic's tool-use docs: "never execute irreversible actions
without human confirmation"; the two-tier read/write split is the framing of the 2026 RAG
best-practice notes).
Policies answer `approve(tool, arguments) -> (approved, reason)` and keep a `decisions` log:
- `DenyAll` — the default: no write ever runs unless the caller chose a policy;
- `AllowAll` — every write runs (for a trusted script);
- `Scripted(answers)` — yes/no answers fixed in advance, for notebooks, never `input()`:
  a list answers the write calls in order, a dict answers by tool name (a value may itself
  be a list, answering that tool's calls in order). Out of answers means no.

`run_tool(name, arguments, context)` never raises: an unknown tool, arguments that fail the
tool's JSON schema (checked with `jsonschema`: required keys, types, no extra keys; a whole
number sent as `5.0`, which the schema accepts as an integer, reaches the tool as 5), a
refused write, a `ToolError` or `RagkitError`, and any other exception all become an
`is_error` result whose text says what went wrong and what to try, so the loop continues
(platform.claude.com "Handle tool calls": write instructive error messages). A result over
`context.max_output` characters is cut, with guidance to search more narrowly.

What it is not: a sandbox (`ragkit.agent.sandbox`) or the loop (`ragkit.agent.loop`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.tool import Tool, ToolContext, ToolError, ToolResult, block_size
from ragkit.agent.tools import TOOLS
from ragkit.documents import RagkitError

_YES = {True: True, False: False, "yes": True, "no": False, "y": True, "n": False}


@dataclass
class Decision:
    """One approval question and its answer, for traces and notebooks."""

    tool: str
    arguments: dict[str, Any]
    approved: bool
    reason: str


@dataclass
class DenyAll:
    """Refuse every write (the default policy)."""

    decisions: list[Decision] = field(default_factory=list)

    def approve(self, tool: Tool, arguments: dict[str, Any]) -> tuple[bool, str]:
        return _log(self, tool, arguments, False, "writes are denied by default; the caller "
                                                  "must choose an approval policy to allow them")


@dataclass
class AllowAll:
    """Approve every write."""

    decisions: list[Decision] = field(default_factory=list)

    def approve(self, tool: Tool, arguments: dict[str, Any]) -> tuple[bool, str]:
        return _log(self, tool, arguments, True, "every write is allowed by this policy")


def _answer(value: Any) -> bool:
    key = value.strip().lower() if isinstance(value, str) else value
    if key not in _YES:
        raise RagkitError(f"scripted approval answer {value!r}: expected yes/no or true/false")
    return _YES[key]


class Scripted:
    """Answers fixed in advance: a list (write calls in order) or a dict by tool name, whose
    value is one answer for every call of that tool or a list for its calls in order."""

    def __init__(self, answers: Sequence[Any] | Mapping[str, Any]) -> None:
        self._in_order: list[bool] | None = None
        self._by_tool: dict[str, list[bool] | bool] = {}
        if isinstance(answers, Mapping):
            self._by_tool = {name: [_answer(v) for v in value]
                             if isinstance(value, (list, tuple)) else _answer(value)
                             for name, value in answers.items()}
        else:
            self._in_order = [_answer(v) for v in answers]
        self.decisions: list[Decision] = []

    def _next(self, name: str) -> bool | None:
        queue = self._in_order if self._in_order is not None else self._by_tool.get(name)
        if isinstance(queue, bool):
            return queue
        return queue.pop(0) if queue else None

    def approve(self, tool: Tool, arguments: dict[str, Any]) -> tuple[bool, str]:
        yes = self._next(tool.name)
        if yes is None:
            return _log(self, tool, arguments, False,
                        f"the script has no answer left for {tool.name}")
        return _log(self, tool, arguments, yes,
                    "approved by the script" if yes else "refused by the script")


def _log(policy: Any, tool: Tool, arguments: dict[str, Any], approved: bool,
         reason: str) -> tuple[bool, str]:
    policy.decisions.append(Decision(tool.name, dict(arguments), approved, reason))
    return approved, reason


# ---------------------------------------------------------------------------- run_tool
def schema_checker() -> Any:
    """jsonschema's Draft 2020-12 validator class, the arguments' checker, imported on first
    use: importing jsonschema builds an RFC 3987 grammar, 1 to 6 seconds once per process.
    `ragkit.agent.loop.run_agent` asks for it before its first turn, so that second is no
    tool call's (the first grep of notebook 05's timeline took 3.2 s and made every other
    bar a sliver). Not a warm-up of the tools themselves: they have nothing to load."""
    # deferred: importing jsonschema builds an RFC 3987 grammar; only tool calls need it
    from jsonschema import Draft202012Validator
    return Draft202012Validator


def check_arguments(tool: Tool, arguments: Any) -> str | None:
    """None if `arguments` fit the tool's schema, else a message naming each bad field."""
    if not isinstance(arguments, dict):
        return (f"invalid arguments for {tool.name}: expected a JSON object, got "
                f"{type(arguments).__name__}")
    errors = sorted(schema_checker()(tool.input_schema).iter_errors(arguments),
                    key=lambda e: list(map(str, e.path)))
    if not errors:
        return None
    problems = []
    for error in errors:
        where = ".".join(map(str, error.path))
        problems.append(f"field '{where}': {error.message}" if where else error.message)
    allowed = ", ".join(f"{name} ({spec.get('type', 'any')}"
                        f"{', required' if name in tool.input_schema.get('required', ()) else ''})"
                        for name, spec in tool.input_schema.get("properties", {}).items())
    return (f"invalid arguments for {tool.name}: {'; '.join(problems)}. Parameters: "
            f"{allowed}")


def whole_numbers(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with each integer field given as a whole float (`5.0`, which JSON Schema
    counts as an integer) turned into an int, so the tool can index and slice with it."""
    properties = tool.input_schema.get("properties", {})
    return {name: int(value) if isinstance(value, float) and value.is_integer()
            and properties.get(name, {}).get("type") == "integer" else value
            for name, value in arguments.items()}


def truncate(result: ToolResult, limit: int) -> ToolResult:
    """`result` within `limit` characters of text, with guidance when something was cut."""
    note = (f"\n[truncated at {limit} characters; ask for less — a more specific pattern, a "
            f"narrower path_glob, a line range, or a smaller k]")
    if isinstance(result.content, str):
        if len(result.content) <= limit:
            return result
        return ToolResult(result.content[:max(0, limit - len(note))] + note, result.is_error)
    kept, used = [], 0
    for block in result.content:
        size = block_size(block)
        if kept and used + size > limit:
            kept.append({"type": "text", "text": note.strip()})
            break
        kept.append(block)
        used += size
    return ToolResult(kept, result.is_error)


def _execute(tool: Tool, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    if tool.writes:
        policy = context.policy if context.policy is not None else DenyAll()
        approved, reason = policy.approve(tool, arguments)
        if not approved:
            return ToolResult(f"not executed: the user did not approve {tool.name} ({reason}). "
                              f"Do not call it again for this; tell the user what you wanted "
                              f"to save instead.", is_error=True)
    out = tool.run(arguments, context)
    return out if isinstance(out, ToolResult) else ToolResult(out)


def run_tool(name: str, arguments: Any, context: ToolContext,
             tools: Mapping[str, Tool] | None = None) -> ToolResult:
    """Run one tool call through the schema check and the approval gate; never raises.

    `tools`: the registry to look `name` up in (default: every tool, `ragkit.agent.tools`)."""
    if tools is None:
        tools = TOOLS
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        return ToolResult(f"unknown tool {name!r}; the available tools are: "
                          f"{', '.join(tools)}", is_error=True)
    problem = check_arguments(tool, arguments)
    if problem:
        return ToolResult(problem, is_error=True)
    arguments = whole_numbers(tool, arguments)
    try:
        result = _execute(tool, arguments, context)
    except (ToolError, RagkitError) as exc:
        result = ToolResult(f"{name}: {exc}", is_error=True)
    except Exception as exc:  # noqa: BLE001 — the loop must go on; the model sees the cause
        result = ToolResult(f"internal error in tool {name}: {type(exc).__name__}: {exc}",
                            is_error=True)
    return truncate(result, context.max_output)
