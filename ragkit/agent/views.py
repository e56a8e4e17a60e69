"""Tables and figures of agent runs for notebooks: the tools, the calls, the cost of looping.

What it is:
- `tool_table(tools)`: each tool's name, whether it writes, the first sentence of its
  description, its parameters (required ones marked `*`) and its `input_examples`;
- `calls_table(result)`: one row per tool call of a run (turn, tool, input, error, executed);
- `gate_result(result, tool)`: what the approval gate did with a run's call of a writing tool
  (its result), or that the run never called it;
- `calls_per_turn_sentence(result)`: a run's tool calls per assistant turn in words, counting
  only the calls that ran (a turn stopped at the turn limit, and the calls a sequential batch
  skipped after a failure, are named, not averaged in);
  `agent_finding(result, saving, injection)`: notebook 05's closing finding, counting alike;
- `tool_choice(results)`: per question, the tools each turn called and the answer's start
  — how the agent chose between grep, SQL and search;
- `loop_vs_runner(manual, runner_text, runner_replies)`: the manual loop and the SDK Tool
  Runner side by side on one question (answer, model calls, tool calls, calls per turn);
- `caching_summary(runs, model)`: per run, the prompt tokens re-sent and the input dollars
  without and with the growing prefix read from the prompt cache, from
  `ragkit.agent.trace.caching_table` (measured when the API reported cache reads, else a
  projection at list prices);
- `caching_effect(percent)`, `caching_prose(summary)`: what caching did to the input cost, in
  words that follow the sign of `saving %` (a negative saving is a rise, never "less");
- `tokens_figure(runs, model)`: prompt tokens per turn for each run, with the model's
  minimum cacheable prefix drawn as a line (the agentic-RAG notes' last diagram: every call
  re-sends the whole conversation).

What it is not: a trace format (`ragkit.agent.trace`) or the loop (`ragkit.agent.loop`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ragkit.agent.result import AgentResult, calls_summary, not_run_note
from ragkit.agent.tool import Tool
from ragkit.agent.trace import caching_table, input_tokens_per_turn
from ragkit.figure_check import checked
from ragkit.money import dollars
from ragkit.pricing import price
from ragkit.text_stats import counted

_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s+[A-Z]|$)", re.S)


def first_sentence(text: str) -> str:
    """The text up to its first full stop followed by a capitalised word (or the end)."""
    text = " ".join(text.split())
    match = _SENTENCE.match(text)
    return match[1] if match else text


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def tool_table(tools: Sequence[Tool]) -> pd.DataFrame:
    """One row per tool: writes?, first sentence, parameters (* = required), examples.

    Made to be read in a table: the description's Markdown code marks are left out (the
    model reads them in the definition; the table showed "Python `re` syntax" with its
    backticks) and the examples are set apart by "; ", not a line break, which pandas'
    HTML shows as a literal "\\n"."""
    rows = []
    for tool in tools:
        required = set(tool.input_schema.get("required", ()))
        params = ", ".join(f"{n}{'*' if n in required else ''}"
                           for n in tool.input_schema.get("properties", {}))
        rows.append({"tool": tool.name, "writes": "yes" if tool.writes else "no",
                     "what it does": first_sentence(tool.description).replace("`", ""),
                     "parameters": params,
                     "input_examples": "; ".join(json.dumps(e, ensure_ascii=False)
                                                 for e in tool.input_examples)})
    return pd.DataFrame(rows).set_index("tool")


def calls_table(result: AgentResult, limit: int = 90) -> pd.DataFrame:
    """One row per tool call: turn, tool, its input (cut to `limit` characters), whether
    the result was an error and whether the call ran at all."""
    rows = [{"turn": c.turn, "tool": c.name, "input": _short(c.input, limit),
             "is_error": c.result.is_error, "executed": c.executed}
            for c in result.tool_calls]
    return pd.DataFrame(rows, columns=["turn", "tool", "input", "is_error", "executed"])


_STOPPED = {"max_turns": "the run stopped at its turn limit",
            "budget": "the run's token budget was used up"}


def gate_result(result: AgentResult, tool: str = "notes_save") -> str:
    """The result of the run's first call of `tool` as printed lines (whether it was an error,
    then its content), or one line saying the run never called it and why — an agent with
    nothing to save (another folder, another question) does not call the tool, and that is
    no error; one stopped by its turn limit or budget never got that far (with
    `max_turns=2` it was said to have had "no finding to save")."""
    call = next((c for c in result.tool_calls if c.name == tool), None)
    if call is None and result.stop_reason in _STOPPED:  # not "no finding": no answer at all
        return f"the agent did not call {tool}: {_STOPPED[result.stop_reason]} first"
    if call is None:
        return f"the agent did not call {tool} (it had no finding to save)"
    return f"result of {tool}: {{'is_error': {call.result.is_error}}}\n{call.result.content}"


def calls_per_turn_sentence(result: AgentResult) -> str:
    """How many tool calls each assistant turn made, over the turns whose calls ran, e.g.
    "14 tool calls over 3 tool turns: 4.67 calls per assistant turn (> 1.0: parallel calls
    work)". The calls of a last turn stopped by the turn limit or the token budget never ran:
    they are named after it (`not_run_note`), not counted (they made 10 calls over 2 turns
    "5.00" where the one turn that ran made 6)."""
    turns = len({c.turn for c in result.tool_calls if c.executed})
    per = result.calls_per_turn
    text = (f"{counted(result.calls_ran, 'tool call')} over {counted(turns, 'tool turn')}: "
            f"{per:.2f} calls per assistant turn "
            f"({'> 1.0: parallel calls work' if per > 1 else 'no parallel calls'})")
    note = not_run_note(result)
    return f"{text}; {note}" if note else text


def agent_finding(result: AgentResult, saving: float, injection: str) -> str:
    """Notebook 05's closing finding: how the refund-bug run stopped, after how many turns and
    tool calls (`calls_summary`: the calls that ran, a last turn's unrun calls named), what
    caching the growing prefix did to the six-tool run's input cost (`saving` %, as
    `caching_effect` words it) and what the planted instruction did (`injection`, from
    `injection_outcome`). Built here so the finding counts the calls as every other line
    does: it counted the unrun ones ("14 tool calls, 5.00 per tool turn" where 10 ran)."""
    return (f"The agent stopped ({result.stop_reason}) after {counted(result.turns, 'turn')} "
            f"and {calls_summary(result, 2)}; caching the growing prefix "
            f"{caching_effect(saving)} the input cost of the six-tool run, and the planted "
            f"instruction {injection}.")


def _per_turn(result: AgentResult) -> str:
    turns: dict[int, list[str]] = {}
    for call in result.tool_calls:
        turns.setdefault(call.turn, []).append(call.name)
    unrun = {c.turn for c in result.calls_not_run}
    return " → ".join("+".join(dict.fromkeys(names)) + (" (not run)" if turn in unrun else "")
                      for turn, names in sorted(turns.items()))


def tool_choice(results: Mapping[str, AgentResult]) -> pd.DataFrame:
    """Per question: the tools of each tool turn (`a+b → c`; a last turn whose calls never
    ran marked "(not run)"), the calls that ran, and the answer's start (on one line)."""
    rows = [{"question": q, "tools by turn": _per_turn(r) or "(none)",
             "tool calls": r.calls_ran, "turns": r.turns,
             "answer": _short(" ".join(r.answer.split()), 110)}
            for q, r in results.items()]
    return pd.DataFrame(rows).set_index("question")


def loop_vs_runner(manual: AgentResult, runner_text: str,
                   runner_replies: Sequence[Any]) -> pd.DataFrame:
    """The manual loop and the Tool Runner on one question: what each run produced (the tool
    calls that ran: the manual loop's last turn at its turn limit runs none, the Tool
    Runner's does)."""
    uses = [[b for b in reply.content if b.type == "tool_use"] for reply in runner_replies]
    calls = sum(map(len, uses))
    tool_turns = sum(bool(u) for u in uses)
    rows = {
        "turns": (manual.turns, len(runner_replies)),
        "tool calls": (manual.calls_ran, calls),
        "calls per tool turn": (round(manual.calls_per_turn, 2),
                                round(calls / tool_turns, 2) if tool_turns else 0.0),
        "same answer text": ("", runner_text == manual.answer),  # the runner's, vs the loop's
        "stop reason": (manual.stop_reason, getattr(runner_replies[-1], "stop_reason", "")
                        if runner_replies else ""),
    }
    return pd.DataFrame(rows, index=["manual loop", "Tool Runner"]).T


def caching_summary(runs: Mapping[str, list[dict[str, Any]]], model: str) -> pd.DataFrame:
    """Per run: turns, prompt tokens sent in all, tokens read from the cache, the input
    dollars without and with the cache, the saving in per cent, measured or projected."""
    rows = []
    for label, records in runs.items():
        table = caching_table(records, model)
        plain, cached = table["$ no cache"].sum(), table["$ with cache"].sum()
        rows.append({"run": label, "turns": len(table),
                     "prompt tokens": int(table["prompt tokens"].sum()),
                     "largest prompt": int(table["prompt tokens"].max()),
                     "read from cache": int(table["read from cache"].sum()),
                     "$ no cache": plain, "$ with cache": cached,
                     "saving %": round(100 * (1 - cached / plain), 1) if plain else 0.0,
                     "source": "measured" if (table["source"] == "measured").all()
                     else "projection"})
    return pd.DataFrame(rows).set_index("run")


def caching_effect(percent: float) -> str:
    """What a `saving %` did to the input cost, as a verb phrase before "the input cost":
    "saves 52.3 % of", "adds 16.8 % to", or "does not change" when it rounds to 0.0."""
    shown = round(float(percent), 1)
    if shown > 0:
        return f"saves {shown:.1f} % of"
    return f"adds {-shown:.1f} % to" if shown < 0 else "does not change"


def caching_prose(summary: pd.DataFrame) -> str:
    """Notebook 05's sentences on `caching_summary`'s two runs (the short run first): the
    short run's change in input cost in `caching_effect`'s words ("adds 9.4 % to", "does not
    change": with two turns it read "changes the input cost by +0.0 % (a rise is …)"), then
    how the long run's cost moves with the cache — "falls … % less" only when the saving is
    positive (with two turns it rose, and the sentence said "falls from $0.0064 to $0.0075,
    -16.8 % less")."""
    narrow, wide = summary.iloc[0], summary.iloc[1]
    effect = caching_effect(narrow["saving %"])  # "adds 9.4 % to", never "by +0.0 %"
    why = " (the write surcharge: a cost, not a saving)" if effect.startswith("adds") else ""
    saving = round(float(wide["saving %"]), 1)
    before, after = dollars(wide["$ no cache"]), dollars(wide["$ with cache"])
    if saving > 0:
        moves = f"falls from {before} to {after}, **{saving:.1f} % less**"
    elif saving < 0:
        moves = f"rises from {before} to {after}, **{-saving:.1f} % more**"
    else:
        moves = f"stays at {before}"
    return (f"With three file tools the largest prompt is {int(narrow['largest prompt']):,} "
            f"tokens and {int(narrow['read from cache']):,} tokens are read back from the "
            f"cache, so caching {effect} the input cost{why}. With six tools and search, "
            f"{int(wide['read from cache']):,} tokens are read from the cache in all, and the "
            f"projected input cost {moves}.")


@checked
def tokens_figure(runs: Mapping[str, list[dict[str, Any]]], model: str):
    """Prompt tokens per turn, one line per run, and the minimum cacheable prefix."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.4), layout="constrained")
    for label, records in runs.items():
        tokens = input_tokens_per_turn(records)["prompt tokens"]
        ax.plot(tokens.index, tokens.values, marker="o", label=label)
    minimum = price(model).min_cacheable
    ax.axhline(minimum, color="grey", linestyle="--",
               label=f"{model}: shortest cacheable prefix ({minimum:,} tokens)")
    ax.xaxis.get_major_locator().set_params(integer=True)    # turns are whole numbers
    ax.set_xlabel("turn")
    ax.set_ylabel("prompt tokens sent")
    ax.set_title("Every call re-sends the whole conversation")
    # below the axes: inside, "best" can still sit on the prefix line when the prompts are
    # short (another folder, fewer turns)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=1)
    return fig
