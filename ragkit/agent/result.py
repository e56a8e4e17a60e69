"""What an agent run gives back, and its tool calls in the words every summary of it uses
(`ragkit ask --agent`'s stderr line, notebook 05's lines and its closing finding).

What it is: `AgentResult` (the answer, its sources, the turns, each `ToolCall`, the usage and
why the run stopped) and `ToolCall`; `not_run_note(result)` names the calls that never ran:
a last turn's ("the 4 calls of turn 3 did not run because the turn limit was reached") and
those a sequential batch skipped after a failure ("turn 1's grep and glob calls were skipped
because the read_file call before them failed"), or "" when every call ran;
`calls_summary(result, digits)` is "14 tool calls, 4.7 per tool turn", counting the calls that
ran (`AgentResult.calls_ran`, `.calls_per_turn`), followed by that note.

Why: at the turn limit or the token budget the loop stops after the model's reply, before
that reply's calls run, and in a sequential batch (`parallel=False`) the calls after a failed
one are skipped; both stay in `AgentResult.tool_calls` (answered "Not executed", so the
conversation is valid for the API), and a count of that list said "10 tool calls, 6.0 per
tool turn" where 6 calls ran in 1 turn, or "3 tool calls" where 1 ran.

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
    def calls_skipped(self) -> list[ToolCall]:
        """The calls a sequential batch skipped because an earlier call of their turn failed
        (their turn ran calls, so they are not in `calls_not_run`); counts leave them out."""
        ran = {c.turn for c in self.tool_calls if c.executed}
        return [c for c in self.tool_calls if not c.executed and c.turn in ran]

    @property
    def calls_ran(self) -> int:
        """The tool calls that ran (neither in `calls_not_run` nor in `calls_skipped`)."""
        return sum(c.executed for c in self.tool_calls)

    @property
    def calls_per_turn(self) -> float:
        """Average tool calls per assistant turn whose calls ran (> 1.0: parallel calls)."""
        turns = {c.turn for c in self.tool_calls if c.executed}
        return self.calls_ran / len(turns) if turns else 0.0

    @property
    def total(self) -> Usage:
        return sum(self.usage, Usage())


STOPPED = {"max_turns": "the turn limit was reached", "budget": "the token budget was used up"}


def _names(names: list[str]) -> str:
    """"grep", "grep and glob", "grep, glob and read_file"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def skipped_note(result: AgentResult) -> str:
    """"turn 1's grep and glob calls were skipped because the read_file call before them
    failed" (one clause per turn, joined by "; "); "" when a sequential batch skipped none.
    The failed call is the last one of its turn that ran: the failure stopped the rest."""
    notes = []
    for turn in dict.fromkeys(c.turn for c in result.calls_skipped):
        calls = [c for c in result.tool_calls if c.turn == turn]
        failed = [c for c in calls if c.executed][-1].name
        names = [c.name for c in calls if not c.executed]
        notes.append(f"turn {turn}'s {_names(names)} call{'s were' if len(names) > 1 else ' was'}"
                     f" skipped because the {failed} call before "
                     f"{'them' if len(names) > 1 else 'it'} failed")
    return "; ".join(notes)


def not_run_note(result: AgentResult) -> str:
    """The calls that did not run, in words: a sequential batch's skipped calls
    (`skipped_note`), then a last turn's: "the 4 calls of turn 3 did not run because the turn
    limit was reached" (or "the token budget was used up"); "" when every call ran."""
    notes = [skipped_note(result)]
    stopped = result.calls_not_run
    if stopped:
        why = STOPPED.get(result.stop_reason, "the run stopped")
        notes.append(f"the {counted(len(stopped), 'call')} of turn {stopped[0].turn} did not "
                     f"run because {why}")
    return "; ".join(n for n in notes if n)


def calls_summary(result: AgentResult, digits: int | None = 1) -> str:
    """"14 tool calls, 4.7 per tool turn" (the average with `digits` decimals; None leaves it
    out), counting the calls that ran, then "; " and `not_run_note` when calls did not run:
    "6 tool calls, 6.0 per tool turn; the 4 calls of turn 2 did not run because the turn limit
    was reached"."""
    text = counted(result.calls_ran, "tool call")
    if digits is not None:
        text += f", {result.calls_per_turn:.{digits}f} per tool turn"
    note = not_run_note(result)
    return f"{text}; {note}" if note else text
