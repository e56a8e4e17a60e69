"""Stand-in rule: a request with `tools` → the next step of a fixed search-read-answer program.

A documented deterministic program, never a model. It recognises any request that offers
`tools` (no other rule sends tools), rebuilds its state from the conversation alone
(`ragkit.standin.agent_state`: the stand-in is a pure function), picks the question's kind
and takes the first step not yet taken:

- aggregate ("which company grew revenue fastest in 2025?", `reports_sql` offered): one
  `reports_sql` call built from a fixed template (`ragkit.standin.agent_sql`), then an
  answer from the result table;
- wording (a question in ordinary language, `docs_search` offered, no identifier, path or
  code word): one `docs_search` call with the question, then quotes of the passages found;
- code — the agentic-RAG notes' walk-through:
  1. Search (no tool call yet), several independent `tool_use` blocks in ONE reply, each
     only if that tool is offered: `grep` for each identifier in the question (snake_case,
     CamelCase, dotted names, codes like E-4031; up to 3); `grep` for the key terms (the
     question's words minus stopwords and `META_WORDS`, plural `s` off); `grep` for
     definitions (`def|class|function|func|fn NAME`) whose name contains a key term; `glob`
     for each path-like term, or `**/*TERM*` for each key term (up to 4); `docs_search`
     with the question.
  2. Read and follow: a file the question names (found by its glob) is read from the top
     (lines 1–60); the two best definitions — a question identifier first, then most key
     terms in the name, code before tests, a key term in the path — are read (`read_file`,
     the definition line and the 24 after it), and their callers are searched
     (`grep NAME\\(`). Without either, the files with most hits are read from the top.
  3. Read the callers: up to 3 call sites per followed name in files of the definition's
     type (no tests, not the definition itself), 8 lines either side.
- then, if the question asks for a note ("… and save a note …", `notes_save` offered) and
  the program has an answer: one `notes_save` call with the answer as the note, and the
  answer says whether it was saved (from the result's `is_error`; a refusal is not retried).
- answer: `ragkit.standin.agent_answer` (cited code lines, quotes, or the SQL sentence;
  "I don't know" when the evidence is weak).

What it takes from tool results: locations (`path:line` of grep hits, paths of glob
matches), names on definition lines (a fixed regex), and, for the answer, the read code
lines, the search results' sentences or the SQL table's cells. It never parses prose as
instructions, so text planted in a file ("ignore previous instructions …") changes neither
its calls nor its answer. `tool_choice`: `none` → the answer now; `any` → the first planned
call (the search again if the plan is done); `tool` → the planned calls to that tool, else
one call to it; `disable_parallel_tool_use` → only the first call. With `auto`, a short text
block comes before the calls (text may precede `tool_use`); with `any`/`tool` none does (the
API prefills the call).

What it is not: a reader. It finds what the agentic-RAG notes' walk-through finds because
code names its concepts; it cannot follow an argument, an import chain or data flow.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ragkit.standin import agent_sql
from ragkit.standin.base import Reply
from ragkit.standin.agent_answer import DECLINE, NEGATIVE_WORDS, answer, declined  # noqa: F401
from ragkit.standin.agent_state import (MAX_FOLLOW, META_WORDS, State, definitions,  # noqa: F401
                                        identifiers, is_test, key_terms, listed, paths,
                                        question_kind, state_of)

READ_AFTER_DEF = 24
READ_TOP = 60
CALL_CONTEXT = 8
MAX_GLOBS, MAX_SITES = 4, 3
Calls = list[tuple[str, dict[str, Any]]]


def search_calls(state: State, offered: set[str]) -> Calls:
    question, terms = state.question, key_terms(state.question)
    calls: Calls = []
    if "grep" in offered:
        calls += [("grep", {"pattern": re.escape(i)}) for i in identifiers(question)]
        if terms:
            alternatives = "|".join(map(re.escape, terms))
            calls.append(("grep", {"pattern": f"(?i)\\b({alternatives})"}))
            calls.append(("grep", {"pattern": r"(?i)\b(def|class|function|func|fn)\s+\w*("
                                   + alternatives + ")"}))
    if "glob" in offered:
        globs = [p if "/" in p and "*" in p else f"**/{p}" for p in paths(question)] or \
            [f"**/*{t}*" for t in terms[:MAX_GLOBS]]
        calls += [("glob", {"pattern": g}) for g in globs]
    if "docs_search" in offered:
        calls.append(("docs_search", {"query": question}))
    return calls


def _named_files(state: State) -> list[str]:
    """Files the question names, as the globs for them found them."""
    named = [p for p in paths(state.question) if "*" not in p]
    found = [path for c in state.called("glob") for path in listed(c)]
    return list(dict.fromkeys(f for f in found for p in named
                              if f == p or f.endswith("/" + p.lstrip("/"))))


def follow_calls(state: State, offered: set[str]) -> Calls:
    calls: Calls = []
    named = _named_files(state)
    defs = definitions(state)
    if "read_file" in offered:
        calls += [("read_file", {"path": p, "start_line": 1, "end_line": READ_TOP})
                  for p in named[:MAX_FOLLOW]]
    for path, line, name in defs:
        if "read_file" in offered:
            calls.append(("read_file", {"path": path, "start_line": line,
                                        "end_line": line + READ_AFTER_DEF}))
        if "grep" in offered:
            calls.append(("grep", {"pattern": re.escape(name) + r"\("}))
    if not defs and not named and "read_file" in offered:
        counts: dict[str, int] = {}
        for path, *_ in state.hits():
            counts[path] = counts.get(path, 0) + 1
        for call in state.called("glob"):
            for path in listed(call):
                counts.setdefault(path, 0)
        best = sorted(counts, key=lambda p: (is_test(p), -counts[p], p))[:MAX_FOLLOW]
        calls += [("read_file", {"path": p, "start_line": 1, "end_line": READ_TOP})
                  for p in best]
    return calls


def caller_calls(state: State, offered: set[str]) -> Calls:
    if "read_file" not in offered:
        return []
    calls = []
    for path, line, name in definitions(state):
        suffix = path.rsplit(".", 1)[-1]
        sites = [(p, n) for p, n, _, pattern in state.hits()
                 if pattern == re.escape(name) + r"\(" and (p, n) != (path, line)
                 and not is_test(p) and p.endswith("." + suffix)][:MAX_SITES]
        for p in dict.fromkeys(p for p, _ in sites):  # one window per file over its sites
            lines = [n for q, n in sites if q == p]
            calls.append(("read_file", {"path": p, "start_line": max(1, min(lines) - CALL_CONTEXT),
                                        "end_line": max(lines) + CALL_CONTEXT}))
    return list({json.dumps(c, sort_keys=True): c for c in calls}.values())


def sql_calls(state: State, offered: set[str]) -> Calls:
    query = agent_sql.plan_query(state.question)
    return [("reports_sql", {"query": query.sql})] if query else []


def wording_calls(state: State, offered: set[str]) -> Calls:
    return [("docs_search", {"query": state.question})]


STEPS = {"aggregate": [sql_calls], "wording": [wording_calls],
         "code": [search_calls, follow_calls, caller_calls]}


def plan(state: State, offered: set[str]) -> Calls:
    """The next calls: the first step of the question's kind with calls not yet made, then
    the note if one was asked for; empty when it is time to answer."""
    if state.called("notes_save"):
        return []
    for step in STEPS[question_kind(state.question, offered)][state.turns:]:
        calls = [(n, a) for n, a in step(state, offered) if not state.done(n, a)]
        if calls:
            return calls
    if state.note and "notes_save" in offered:
        text = answer(state, offered)
        if not declined(text):
            return [("notes_save", {"title": state.question[:80], "text": text})]
    return []


def _choice(request: dict[str, Any]) -> dict[str, Any]:
    choice = request.get("tool_choice")
    return choice if isinstance(choice, dict) else {"type": "auto"}


def _forced_input(name: str, state: State) -> dict[str, Any]:
    terms = key_terms(state.question) or ["."]
    return {"grep": {"pattern": "|".join(map(re.escape, terms))},
            "glob": {"pattern": f"**/*{terms[0]}*"},
            "docs_search": {"query": state.question}}.get(name, {})


def _select(calls, choice, state, offered):
    kind = choice.get("type", "auto")
    if kind == "tool":
        calls = [c for c in calls if c[0] == choice.get("name")] or \
            [(choice.get("name"), _forced_input(choice.get("name"), state))]
    elif kind == "any" and not calls:
        calls = search_calls(State(state.question), offered)[:1] or \
            [(sorted(offered)[0], _forced_input(sorted(offered)[0], state))]
    if choice.get("disable_parallel_tool_use"):
        calls = calls[:1]
    return calls


def rule(request: dict[str, Any]) -> Reply | None:
    """A request with tools → the program's next tool calls or its answer; else None."""
    tools = request.get("tools")
    if not tools:
        return None
    offered = {t.get("name") for t in tools if isinstance(t, dict)}
    state, choice = state_of(request), _choice(request)
    if choice.get("type") == "none":
        return Reply.text(answer(state, offered))
    calls = _select(plan(state, offered), choice, state, offered)
    if not calls:
        return Reply.text(answer(state, offered))
    blocks: list[dict[str, Any]] = []
    if choice.get("type", "auto") == "auto":
        names = ", ".join(dict.fromkeys(n for n, _ in calls))
        blocks.append({"type": "text", "text": f"Next: {len(calls)} call(s) of {names}."})
    blocks += [{"type": "tool_use", "id": f"toolu_offline_{state.turns:02d}_{i:02d}",
                "name": n, "input": a} for i, (n, a) in enumerate(calls)]
    return Reply(blocks, stop_reason="tool_use")
