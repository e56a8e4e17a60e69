"""What the stand-in agent reads from a request: the question's terms, its kind, the calls so far.

What it is: the question analysis of the stand-in agent program (`ragkit.standin.agent`) —
`key_terms`, `identifiers`, `paths`, `wants_note` / `task` (a trailing "and save a note …"
asks for `notes_save` and is not searched for), `question_kind` (code / aggregate / wording)
— and `State`, the conversation so far rebuilt from the request alone (the stand-in is a pure
function: it keeps nothing between requests).

The kinds, by fixed word rules (never a model's judgement):
- "aggregate": `reports_sql` is offered and `ragkit.standin.agent_sql.plan_query` finds an
  aggregation word, a year and a reports figure in the question;
- "wording": `docs_search` is offered and the question names no identifier, no path and no
  `CODE_WORDS` — a question about what documents say, in ordinary language;
- "code": anything else: the agentic-RAG notes' grep → glob → read → callers walk-through.

What it is not: a parser of tool results' prose. From results it keeps the text only so the
program can take locations and code lines out of it by fixed regexes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ragkit.lexical import ENGLISH_STOPWORDS, identifier_parts
from ragkit.standin.agent_sql import plan_query
from ragkit.text_stats import s_stem

META_WORDS = frozenset("find bug bugs error issue problem code function method file files "
                       "show explain tell where please look locate cause causes fix wrong "
                       "happen happens called call calls line lines start starting begin "
                       "beginning".split())
CODE_WORDS = frozenset("bug bugs code function functions method methods class classes module "
                       "modules variable exception traceback stack implement implemented "
                       "implementation caller callers test tests repository".split())
_IDENT = re.compile(r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
                    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z]{1,5}-\d{2,})\b")
_PATH = re.compile(r"[\w.-]*/[\w./*-]+|\b[\w-]+\.(?:py|md|txt|json|ya?ml|toml|ts|js|go|rs|"
                   r"java|sql|csv)\b")
_NOTE = re.compile(r"[,;]?\s*\b(?:and\s+|then\s+)?(?:please\s+)?(?:save|write|keep)\b"
                   r"[^.?!]*\bnotes?\b[^.?!]*", re.I)
MAX_IDENTS = 3


def _parts(text: str) -> list[str]:
    return [p for w in re.findall(r"[A-Za-z]\w*", text) for p in identifier_parts(w)]


def words(text: str) -> list[str]:
    """The text's words split at identifier boundaries, lower case, plural `s` off."""
    return [s_stem(p) for p in _parts(text)]


def key_terms(question: str) -> list[str]:
    """The question's content words: no stopwords or `META_WORDS` (checked before and after
    the plural `s` comes off, so "does" is not searched as "doe"), in order."""
    out = [s_stem(p) for p in _parts(question) if p not in ENGLISH_STOPWORDS]
    return list(dict.fromkeys(t for t in out if len(t) > 2 and t not in ENGLISH_STOPWORDS
                              and t not in META_WORDS))


def paths(question: str) -> list[str]:
    """Path-like terms of the question (`orders/cancel.py`, `refund.py`, `code/**/*.py`)."""
    return list(dict.fromkeys(_PATH.findall(question)))


def identifiers(question: str) -> list[str]:
    """Code names in the question (snake_case, CamelCase, dotted, codes like E-4031), ≤ 3;
    none that is part of a path the question names (`reconcile.py` of `payments/reconcile.py`)."""
    named = paths(question)
    return [i for i in dict.fromkeys(_IDENT.findall(question))
            if not any(i in p for p in named)][:MAX_IDENTS]


def wants_note(question: str) -> bool:
    """True when the question asks to save or write a note ("… and save a note with the fix")."""
    return bool(_NOTE.search(question))


def task(question: str) -> str:
    """The question without its request for a note: what is searched for."""
    return _NOTE.sub("", question).strip() or question.strip()


def question_kind(question: str, offered: set[str]) -> str:
    """"aggregate", "wording" or "code" (see the module docstring)."""
    if "reports_sql" in offered and plan_query(question) is not None:
        return "aggregate"
    plain = {w.lower() for w in re.findall(r"[A-Za-z]\w*", question)}
    if "docs_search" in offered and not identifiers(question) and not paths(question) \
            and not plain & CODE_WORDS:
        return "wording"
    return "code"


class Call(NamedTuple):
    """One tool call of the conversation and the text of its result."""

    name: str
    input: dict[str, Any]
    output: str
    is_error: bool = False
    content: Any = None  # the result as sent (search results stay blocks)


@dataclass
class State:
    """What the conversation so far tells the program (rebuilt on every request)."""

    question: str
    calls: list[Call] = field(default_factory=list)
    turns: int = 0  # assistant turns that called tools
    note: bool = False  # the question asks for a note

    def done(self, name: str, args: dict[str, Any]) -> bool:
        return any(c.name == name and c.input == args for c in self.calls)

    def called(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def hits(self) -> list[tuple[str, int, str, str]]:
        """(path, line, text, pattern) of every grep hit."""
        out = []
        for call in self.called("grep"):
            out += [(m[1], int(m[2]), m[3], call.input.get("pattern", ""))
                    for m in map(_HIT.match, call.output.splitlines()) if m]
        return out

    def read(self) -> dict[str, dict[int, str]]:
        """path → {line: text} of every read_file result."""
        out: dict[str, dict[int, str]] = {}
        for call in self.called("read_file"):
            if isinstance(call.input.get("path"), str):
                lines = out.setdefault(call.input["path"], {})
                lines.update({int(m[1]): m[2] for m in map(_NUMBERED.match,
                                                             call.output.splitlines()) if m})
        return out


_HIT = re.compile(r"^([^:\n]+):(\d+):(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)\s?\|\s?(.*)$")
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")
MAX_FOLLOW = 2


def is_test(path: str) -> bool:
    return any(p.startswith("test") for p in re.split(r"[/\\]", path)) or "/tests/" in path


def listed(call: Call) -> list[str]:
    """The paths a `glob` result lists, one a line, beside its bracketed notes
    (`[truncated: …]`, `[not followed: …]`, and `[no files match …]`, all a glob that
    matched nothing returns). None from an error. Only the result's form is read — a line
    is a path or a bracketed note — never its words, so a message is never taken for a
    path (the program would try to read it), however the tool words it."""
    lines = [line.strip() for line in call.output.splitlines()]
    if call.is_error:
        return []
    return [line for line in lines
            if line and not (line.startswith("[") and line.endswith("]"))]


def definitions(state: State) -> list[tuple[str, int, str]]:
    """(path, line, name) of definition hits worth following, best first: a question
    identifier first, then most key terms in the name, code before tests, a key term in the
    path; at most `MAX_FOLLOW`."""
    terms, idents = set(key_terms(state.question)), set(identifiers(state.question))
    found = {}
    for path, line, text, _ in state.hits():
        m = _DEF.match(text)
        if m:
            found.setdefault((path, m[1]), line)
    def rank(item):
        (path, name), line = item
        cover = len(set(words(name)) & terms)
        return (-(name in idents), is_test(path), -cover, not (set(words(path)) & terms),
                path, line)
    ranked = sorted(found.items(), key=rank)
    return [(p, line, n) for (p, n), line in ranked
            if n in idents or set(words(n)) & terms][:MAX_FOLLOW]


def result_text(content: Any) -> str:
    """The text of a message or tool result: strings and nested `text` / `content` fields."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            parts.append(block.get("text") or result_text(block.get("content")))
    return "\n".join(p for p in parts if p)


def state_of(request: dict[str, Any]) -> State:
    """The program's state from the request's messages (the first user turn is the question)."""
    messages = request.get("messages") or []
    first = messages[0].get("content") if messages else ""
    question = first if isinstance(first, str) else result_text(first)
    state = State(task(question), note=wants_note(question))
    results = {b.get("tool_use_id"): b
               for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            uses = [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
            state.turns += bool(uses)
            for b in uses:
                result = results.get(b.get("id"), {})
                state.calls.append(Call(b.get("name"), b.get("input") or {},
                                        result_text(result.get("content")),
                                        bool(result.get("is_error")), result.get("content")))
    return state
