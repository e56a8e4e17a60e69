"""How the stand-in agent writes its answer: from code read, search results or a SQL table.

What it is: `answer(state)` — the final text of the stand-in agent program
(`ragkit.standin.agent`), by the question's kind (`ragkit.standin.agent_state.question_kind`):
- code: the code lines read (assignments, returns, conditions, calls; never comments,
  docstrings or prose) scored by key terms in them (string literals removed), +2 for a
  subtraction when the question is about a negative or too small value (`NEGATIVE_WORDS`).
  It quotes the best line as `path:line`, then the best line inside a followed function
  called within 5 lines of it, and says when both subtract the same term (taken off twice).
  Below `min(2, key terms)` points: the wording answer from the `docs_search` results the
  search step asked for (grep cannot read a PDF or Word file; "What is the maximum towing
  load of the EG-400?" is answered from the manual's PDF), and `DECLINE` only when that
  declines too;
- wording: the sentences of the `docs_search` results chosen by the stand-in's extractive
  answer rule (`ragkit.standin.answer.choose`: IDF-weighted term support ≥ 0.8), each with
  its source (`<document path>#<n>`), a clause of a long line without the ", " it was cut
  after (`ragkit.standin.answer.shown`); weak support: `DECLINE_SEARCH`;
- aggregate: one sentence from the `reports_sql` table (`ragkit.standin.agent_sql.answer`);
- a note was asked for: the answer, then one line saying whether `notes_save` ran — taken
  from the result's `is_error` flag, never from its text.

What it is not: a reader. It quotes what term matching finds; it cannot follow an argument,
an import chain or data flow, and it never takes instructions from what it quotes.
"""
from __future__ import annotations

import re

from ragkit.answer import result_sources
from ragkit.standin import agent_sql
from ragkit.standin.agent_state import (State, definitions, is_test, key_terms, question_kind,
                                        words)
from ragkit.standin.answer import choose, shown

DECLINE = ("I don't know: the searches found no code that supports an answer "
           "(offline stand-in: term matching over grep and read_file results).")
DECLINE_SEARCH = ("I don't know: the passages found do not support an answer (offline "
                  "stand-in: term matching over docs_search results).")
DECLINE_SQL = "I don't know: the reports_sql query returned no rows to answer from."
NEGATIVE_WORDS = frozenset("negative minus below subtract subtracted subtracts deduct "
                           "deducted twice double less".split())
NOTE_SAVED = "The note was saved with notes_save."
NOTE_REFUSED = ("The note was not saved: notes_save came back as an error (a write runs only "
                "with the user's approval); the note's text is the answer above.")
_STRING = re.compile(r"(['\"]).*?(?<!\\)\1")
_SUBTRACT = re.compile(r"[\w)\]]\s+-\s+[\w(]|-=")
_CODE = re.compile(r"=|\breturn\b|\bif\b|\w\(")


def code_lines(read: dict[str, dict[int, str]]) -> list[tuple[str, int, str]]:
    """(path, line, text) of read lines that are code, not comments, docstrings or prose."""
    out = []
    for path, lines in read.items():
        in_doc, previous = False, None
        for n in sorted(lines):
            text = lines[n]
            if previous is not None and n != previous + 1:
                in_doc = False
            previous = n
            quotes = text.count('"""') + text.count("'''")
            stripped = text.strip()
            if in_doc or quotes:
                in_doc = in_doc != (quotes % 2 == 1)
                continue
            if stripped and not stripped.startswith(("#", "//", "*", "/*")) \
                    and _CODE.search(_STRING.sub("", stripped)):
                out.append((path, n, text))
    return out


def _score(text: str, terms: set[str], negative: bool) -> int:
    bare = _STRING.sub("", text)
    return len(set(words(bare)) & terms) + 2 * (negative and bool(_SUBTRACT.search(bare)))


def _body(lines: dict[int, str], start: int) -> set[int]:
    """Line numbers of the definition starting at `start`: until the indentation returns."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = {start}
    for n in sorted(k for k in lines if k > start):
        text = lines[n]
        if n != max(body) + 1 or text.strip() and len(text) - len(text.lstrip()) <= indent \
                and not text.strip().startswith(")"):
            break
        body.add(n)
    return body


def _subtracted(text: str) -> set[str]:
    parts = re.split(r"\s-=?\s", _STRING.sub("", text), maxsplit=1)
    return set(words(parts[1])) if len(parts) == 2 else set()


def code_answer(state: State) -> str:
    """The cited answer from the code read so far, or `DECLINE`."""
    terms = set(key_terms(state.question))
    negative = bool(terms & NEGATIVE_WORDS)
    read = state.read()
    scored = sorted(((_score(t, terms, negative), p, n, t) for p, n, t in code_lines(read)),
                    key=lambda s: (-s[0], is_test(s[1]), s[1], s[2]))
    if not scored or scored[0][0] < min(2, len(terms)) or scored[0][0] == 0:
        return DECLINE
    score, path, line, text = scored[0]
    quotes = [f"{path}:{line} `{text.strip()}`"]
    callee = _callee_line(state, read, path, line, terms, negative)
    if callee is None:
        return "Found in the code read:\n" + "\n".join(f"- {q}" for q in quotes)
    name, call_at, (cpath, cline, ctext) = callee
    quotes.append(f"{cpath}:{cline} `{ctext.strip()}` (in `{name}`, called at "
                  f"{path}:{call_at})")
    out = "Found in the code read:\n" + "\n".join(f"- {q}" for q in quotes)
    shared = sorted(_subtracted(text) & _subtracted(ctext))
    if shared:
        out += (f"\nBoth lines subtract `{'_'.join(shared)}`: {path}:{line} takes it off "
                f"again from what `{name}` returns, which already took it off at "
                f"{cpath}:{cline}.")
        if negative:
            out += " Subtracted twice, the amount can go below zero."
    return out


def _callee_line(state, read, path, line, terms, negative):
    """(name, call line, best line in its body) of a followed function called near `line`."""
    near = {n: t for n, t in read.get(path, {}).items() if abs(n - line) <= 5}
    best = None
    for dpath, dline, name in definitions(state):
        calls = [n for n, t in sorted(near.items()) if re.search(re.escape(name) + r"\(", t)]
        lines = read.get(dpath, {})
        if not calls or dline not in lines or (dpath, dline) == (path, line):
            continue
        body = _body(lines, dline)
        code = [(p, n, t) for p, n, t in code_lines({dpath: lines}) if n in body and n != dline]
        for p, n, t in code:
            s = _score(t, terms, negative)
            if s and (best is None or s > best[0]):
                best = (s, name, calls[0], (p, n, t))
    return None if best is None else best[1:]


def search_answer(state: State) -> str:
    """Quotes from the docs_search results with their sources, or `DECLINE_SEARCH`."""
    blocks = [{"role": "user", "content": [{"type": "tool_result", "content": c.content}]}
              for c in state.called("docs_search") if isinstance(c.content, list)]
    results = result_sources(blocks)
    chosen = choose(state.question, results)
    if not chosen:
        return DECLINE_SEARCH
    quotes = [f"- “{' '.join(shown(unit).split())}” [{results[unit.result].get('source', '')}]"
              for unit, _ in chosen]
    return "From the documents found:\n" + "\n".join(quotes)


def sql_answer(state: State) -> str:
    """The sentence from the reports_sql table of the planned query, or `DECLINE_SQL`."""
    query = agent_sql.plan_query(state.question)
    runs = [c for c in state.called("reports_sql") if query and c.input.get("query") == query.sql]
    if not runs or runs[-1].is_error:
        return DECLINE_SQL
    return agent_sql.answer(state.question, query, runs[-1].output) or DECLINE_SQL


def answer(state: State, offered: set[str]) -> str:
    """The program's final text for the question's kind, with the note's fate if one was
    asked for (see the module docstring)."""
    kind = question_kind(state.question, offered)
    text = {"aggregate": sql_answer, "wording": search_answer}.get(kind, code_answer)(state)
    if text == DECLINE and state.called("docs_search"):
        found = search_answer(state)  # the documents grep cannot read: PDF, Word
        text = text if declined(found) else found
    notes = state.called("notes_save")
    if notes:
        text += "\n\n" + (NOTE_REFUSED if notes[-1].is_error else NOTE_SAVED)
    return text


def declined(text: str) -> bool:
    """True for any of the program's "I don't know" answers."""
    return text.startswith("I don't know")
