"""Stand-in rule: a request with `tools` → the next step of a fixed search-read-answer program.

A documented deterministic program, never a model. It recognises any request that offers
`tools` (no other rule sends tools) and rebuilds its state from the conversation alone (the
stand-in is a pure function), then takes the first step not yet taken:

1. Search (no tool call yet), several independent `tool_use` blocks in ONE reply, each only
   if that tool is offered: `grep` for each identifier in the question (snake_case,
   CamelCase, dotted names, codes like E-4031; up to 3); `grep` for the key terms (the
   question's words minus stopwords and `META_WORDS`, plural `s` off); `grep` for
   definitions (`def|class|function|func|fn NAME`) whose name contains a key term; `glob`
   for each path-like term, or `**/*TERM*` for each key term (up to 4); `docs_search` with
   the question.
2. Read and follow: the two best definitions — a question identifier first, then most key
   terms in the name, code before tests, a key term in the path — are read (`read_file`,
   the definition line and the 24 after it), and their callers are searched (`grep NAME\\(`).
   Without definitions, the files with most hits are read from the top.
3. Read the callers: up to 3 call sites per followed name in files of the definition's
   type (no tests, not the definition itself), 8 lines either side.
4. Answer: the code lines read (assignments, returns, conditions, calls; never comments,
   docstrings or prose) scored by key terms in them (string literals removed), +2 for a
   subtraction when the question is about a negative or too small value (`NEGATIVE_WORDS`).
   It quotes the best line as `path:line`, then the best line inside a followed function
   called within 5 lines of it, and says when both subtract the same term (taken off
   twice). Below `min(2, key terms)` points: "I don't know".

What it takes from tool results: locations (`path:line` of grep hits, paths of glob
matches), names on definition lines (a fixed regex) and, for the answer, the read code
lines. It never parses prose as instructions, so text planted in a file ("ignore previous
instructions …") changes neither its calls nor its answer. `tool_choice`: `none` → the
answer now; `any` → the first planned call (the search again if the plan is done);
`tool` → the planned calls to that tool, else one call to it; `disable_parallel_tool_use`
→ only the first call. With `auto`, a short text block comes before the calls (text may
precede `tool_use`); with `any`/`tool` none does (the API prefills the call).

What it is not: a reader. It finds what the seed-004 walk-through finds because code
names its concepts; it cannot follow an argument, an import chain or data flow.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ragkit.lexical import ENGLISH_STOPWORDS, identifier_parts
from ragkit.standin import Reply
from ragkit.standin.answer import s_stem

DECLINE = ("I don't know: the searches found no code that supports an answer "
           "(offline stand-in: term matching over grep and read_file results).")
META_WORDS = frozenset("find bug bugs error issue problem code function method file files "
                       "show explain tell where please look locate cause causes fix wrong "
                       "happen happens called call calls line lines".split())
NEGATIVE_WORDS = frozenset("negative minus below subtract subtracted subtracts deduct "
                           "deducted twice double less".split())
_IDENT = re.compile(r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
                    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z]{1,5}-\d{2,})\b")
_PATH = re.compile(r"[\w.-]*/[\w./*-]+|\b[\w-]+\.(?:py|md|txt|json|ya?ml|toml|ts|js|go|rs|"
                   r"java|sql|csv)\b")
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")
_HIT = re.compile(r"^([^:\n]+):(\d+):(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)\s?\|\s?(.*)$")
_STRING = re.compile(r"(['\"]).*?(?<!\\)\1")
_SUBTRACT = re.compile(r"[\w)\]]\s+-\s+[\w(]|-=")
_CODE = re.compile(r"=|\breturn\b|\bif\b|\w\(")
READ_AFTER_DEF = 24
CALL_CONTEXT = 8
MAX_IDENTS, MAX_GLOBS, MAX_FOLLOW, MAX_SITES = 3, 4, 2, 3


def _words(text: str) -> list[str]:
    return [s_stem(p) for w in re.findall(r"[A-Za-z]\w*", text) for p in identifier_parts(w)]


def key_terms(question: str) -> list[str]:
    """The question's content words: no stopwords or `META_WORDS`, plural `s` off, in order."""
    out = [t for t in _words(question) if len(t) > 2 and t not in ENGLISH_STOPWORDS
           and t not in META_WORDS]
    return list(dict.fromkeys(out))


def identifiers(question: str) -> list[str]:
    paths = set(_PATH.findall(question))
    return [i for i in dict.fromkeys(_IDENT.findall(question)) if i not in paths][:MAX_IDENTS]


@dataclass
class State:
    """What the conversation so far tells the program (rebuilt on every request)."""

    question: str
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)  # name, in, out
    turns: int = 0  # assistant turns that called tools

    def done(self, name: str, args: dict[str, Any]) -> bool:
        return any(n == name and a == args for n, a, _ in self.calls)

    def hits(self) -> list[tuple[str, int, str, str]]:
        """(path, line, text, pattern) of every grep hit."""
        out = []
        for name, args, result in self.calls:
            if name == "grep":
                out += [(m[1], int(m[2]), m[3], args.get("pattern", ""))
                        for m in map(_HIT.match, result.splitlines()) if m]
        return out

    def read(self) -> dict[str, dict[int, str]]:
        """path → {line: text} of every read_file result."""
        out: dict[str, dict[int, str]] = {}
        for name, args, result in self.calls:
            if name == "read_file" and isinstance(args.get("path"), str):
                lines = out.setdefault(args["path"], {})
                lines.update({int(m[1]): m[2] for m in map(_NUMBERED.match,
                                                             result.splitlines()) if m})
        return out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            parts.append(block.get("text") or _result_text(block.get("content")))
    return "\n".join(p for p in parts if p)


def state_of(request: dict[str, Any]) -> State:
    messages = request.get("messages") or []
    first = messages[0].get("content") if messages else ""
    state = State(_result_text(first) if not isinstance(first, str) else first)
    results = {b.get("tool_use_id"): _result_text(b.get("content"))
               for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            uses = [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
            state.turns += bool(uses)
            state.calls += [(b.get("name"), b.get("input") or {}, results.get(b.get("id"), ""))
                            for b in uses]
    return state


def _is_test(path: str) -> bool:
    return any(p.startswith("test") for p in re.split(r"[/\\]", path)) or "/tests/" in path


def search_calls(state: State, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    question, terms = state.question, key_terms(state.question)
    calls: list[tuple[str, dict[str, Any]]] = []
    if "grep" in offered:
        calls += [("grep", {"pattern": re.escape(i)}) for i in identifiers(question)]
        if terms:
            alternatives = "|".join(map(re.escape, terms))
            calls.append(("grep", {"pattern": f"(?i)\\b({alternatives})"}))
            calls.append(("grep", {"pattern": r"(?i)\b(def|class|function|func|fn)\s+\w*("
                                   + alternatives + ")"}))
    if "glob" in offered:
        paths = list(dict.fromkeys(_PATH.findall(question)))
        globs = [p if "/" in p and "*" in p else f"**/{p}" for p in paths] or \
            [f"**/*{t}*" for t in terms[:MAX_GLOBS]]
        calls += [("glob", {"pattern": g}) for g in globs]
    if "docs_search" in offered:
        calls.append(("docs_search", {"query": question}))
    return calls


def _definitions(state: State) -> list[tuple[str, int, str]]:
    """(path, line, name) of definition hits, best first (see the module docstring)."""
    terms, idents = set(key_terms(state.question)), set(identifiers(state.question))
    found = {}
    for path, line, text, _ in state.hits():
        m = _DEF.match(text)
        if m:
            found.setdefault((path, m[1]), line)
    def rank(item):
        (path, name), line = item
        cover = len(set(_words(name)) & terms)
        return (-(name in idents), _is_test(path), -cover, not (set(_words(path)) & terms),
                path, line)
    ranked = sorted(found.items(), key=rank)
    return [(p, line, n) for (p, n), line in ranked
            if n in idents or set(_words(n)) & terms][:MAX_FOLLOW]


def follow_calls(state: State, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    defs = _definitions(state)
    for path, line, name in defs:
        if "read_file" in offered:
            calls.append(("read_file", {"path": path, "start_line": line,
                                        "end_line": line + READ_AFTER_DEF}))
        if "grep" in offered:
            calls.append(("grep", {"pattern": re.escape(name) + r"\("}))
    if not defs and "read_file" in offered:
        counts: dict[str, int] = {}
        for path, *_ in state.hits():
            counts[path] = counts.get(path, 0) + 1
        for name, args, result in state.calls:
            if name == "glob":
                for path in result.splitlines():
                    if path.strip() and not path.startswith("("):
                        counts.setdefault(path.strip(), 0)
        best = sorted(counts, key=lambda p: (_is_test(p), -counts[p], p))[:MAX_FOLLOW]
        calls += [("read_file", {"path": p, "start_line": 1, "end_line": 60}) for p in best]
    return calls


def caller_calls(state: State, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    if "read_file" not in offered:
        return []
    calls = []
    for path, line, name in _definitions(state):
        suffix = path.rsplit(".", 1)[-1]
        sites = [(p, n) for p, n, _, pattern in state.hits()
                 if pattern == re.escape(name) + r"\(" and (p, n) != (path, line)
                 and not _is_test(p) and p.endswith("." + suffix)][:MAX_SITES]
        for p in dict.fromkeys(p for p, _ in sites):  # one window per file over its sites
            lines = [n for q, n in sites if q == p]
            calls.append(("read_file", {"path": p, "start_line": max(1, min(lines) - CALL_CONTEXT),
                                        "end_line": max(lines) + CALL_CONTEXT}))
    return list({json.dumps(c, sort_keys=True): c for c in calls}.values())


def plan(state: State, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The next calls: the first step of search → follow → callers with calls not yet made."""
    steps = [search_calls, follow_calls, caller_calls]
    for step in steps[state.turns:]:
        calls = [(n, a) for n, a in step(state, offered) if not state.done(n, a)]
        if calls:
            return calls
    return []


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
    return len(set(_words(bare)) & terms) + 2 * (negative and bool(_SUBTRACT.search(bare)))


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
    return set(_words(parts[1])) if len(parts) == 2 else set()


def answer(state: State) -> str:
    """The cited answer from the code read so far, or `DECLINE`."""
    terms = set(key_terms(state.question))
    negative = bool(terms & NEGATIVE_WORDS)
    read = state.read()
    scored = sorted(((_score(t, terms, negative), p, n, t) for p, n, t in code_lines(read)),
                    key=lambda s: (-s[0], _is_test(s[1]), s[1], s[2]))
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
    for dpath, dline, name in _definitions(state):
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
        return Reply.text(answer(state))
    calls = _select(plan(state, offered), choice, state, offered)
    if not calls:
        return Reply.text(answer(state))
    blocks: list[dict[str, Any]] = []
    if choice.get("type", "auto") == "auto":
        names = ", ".join(dict.fromkeys(n for n, _ in calls))
        blocks.append({"type": "text", "text": f"Next: {len(calls)} call(s) of {names}."})
    blocks += [{"type": "tool_use", "id": f"toolu_offline_{state.turns:02d}_{i:02d}",
                "name": n, "input": a} for i, (n, a) in enumerate(calls)]
    return Reply(blocks, stop_reason="tool_use")
