"""What an agent run gives back, and its tool calls in the words every summary of it uses
(`ragkit ask --agent`'s stderr line, notebook 05's lines and its closing finding).

What it is: `AgentResult` (the answer, its sources, the turns, each `ToolCall`, the usage and
why the run stopped) and `ToolCall`; `not_run_note(result)` names the calls of a last turn that
never ran ("the 4 calls of turn 3 did not run because the turn limit was reached", or "" when
every turn's calls ran); `calls_summary(result, digits)` is "14 tool calls, 4.7 per tool turn",
counting the calls that ran (`AgentResult.calls_ran`, `.calls_per_turn`), followed by that note.

Why: at the turn limit or the token budget the loop stops after the model's reply, before
that reply's calls run; they stay in `AgentResult.tool_calls` (answered "Not executed", so
the conversation is valid for the API), and a count of that list said "10 tool calls, 6.0
per tool turn" where 6 calls ran in 1 turn.

What it is not: the loop (`ragkit.agent.loop`) or notebook tables (`ragkit.agent.views`); it
loads neither pandas nor the Anthropic SDK, so the command line imports it at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.tool import ToolResult
from ragkit.pricing import Usage
from ragkit.text_stats import counted

@dataclass
class ToolCall:
    """One `tool_use` block and what answered it."""

    turn: int
    id: str
    name: str
    input: dict[str, Any]
    result: ToolResult
    executed: bool
    seconds: float = 0.0


@dataclass
class AgentResult:
    """What a run gives back; `messages` is the whole conversation, valid for the API."""

    answer: str
    sources: list[str]
    turns: int
    tool_calls: list[ToolCall]
    usage: list[Usage]
    stop_reason: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def calls_not_run(self) -> list[ToolCall]:
        """The calls of a last turn the turn limit or the token budget stopped before any ran;
        every count of a run's calls (`calls_ran`, `calls_per_turn`) leaves them out."""
        ran = {c.turn for c in self.tool_calls if c.executed}
        return [c for c in self.tool_calls if c.turn not in ran]

    @property
    def calls_ran(self) -> int:
        """The tool calls of the turns whose calls ran (all but `calls_not_run`)."""
        return len(self.tool_calls) - len(self.calls_not_run)

    @property
    def calls_per_turn(self) -> float:
        """Average tool calls per assistant turn whose calls ran (> 1.0: parallel calls)."""
        turns = {c.turn for c in self.tool_calls if c.executed}
        return self.calls_ran / len(turns) if turns else 0.0

    @property
    def total(self) -> Usage:
        return sum(self.usage, Usage())


STOPPED = {"max_turns": "the turn limit was reached", "budget": "the token budget was used up"}


def not_run_note(result: AgentResult) -> str:
    """"the 4 calls of turn 3 did not run because the turn limit was reached" (or "the token
    budget was used up"); "" when every turn's calls ran."""
    stopped = result.calls_not_run
    if not stopped:
        return ""
    why = STOPPED.get(result.stop_reason, "the run stopped")
    return (f"the {counted(len(stopped), 'call')} of turn {stopped[0].turn} did not run "
            f"because {why}")


def calls_summary(result: AgentResult, digits: int | None = 1) -> str:
    """"14 tool calls, 4.7 per tool turn" (the average with `digits` decimals; None leaves it
    out), counting the calls that ran, then "; " and `not_run_note` when a turn's calls did
    not run: "6 tool calls, 6.0 per tool turn; the 4 calls of turn 2 did not run because the
    turn limit was reached"."""
    text = counted(result.calls_ran, "tool call")
    if digits is not None:
        text += f", {result.calls_per_turn:.{digits}f} per tool turn"
    note = not_run_note(result)
    return f"{text}; {note}" if note else text
