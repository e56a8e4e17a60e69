"""Token estimates and question words: text rules the answering code and the offline stand-in
share, so both count and read a request the same way (no model, no tokenizer).

What it is:
- `estimate_tokens(text)`: one token per 4 UTF-8 bytes, rounded up (0 for empty text) — the
  usual rule of thumb for English; real tokenizers give more for code and Korean;
- `texts(value)`: every text in a part of a Messages API request (strings, `text` fields,
  nested `content`, tool definitions);
- `request_tokens(request)`: the estimated input tokens of a request body (its `system`,
  `messages` and `tools`);
- `QUESTION_WORDS`: words of how questions are asked, not of what they ask about, dropped
  from a question's terms (by the stand-in's answerer and CRAG's keyword query);
- `s_stem(term)`: plural endings off, so `refunds` in a question finds `refund` in a passage
  (the stand-in's answerer and the offline extractive answerer, `ragkit.extractive`);
- `reads_korean(text)`: whether a text reads as Korean — more of its words hold a Hangul
  syllable than hold Latin letters alone — for the language a generated question is labelled
  (`lang`) and the language the offline stand-in writes it in, one rule for both;
- `joined(names)`: "a", "a and b", "a, b and c" — a list in a sentence (findings, the
  stand-in's questions, notebook 07's "everything but …");
- `counted(n, noun)`: "1 document", "2 documents" — a count in a sentence;
- `fewer_failures(reduction)`, `too_few_failures(failed)`: a ladder's relative change of
  failures in words, and why it means little when the first rung failed few questions;
- `MAX_QUOTE_CHARS`: the longest quote an offline answerer makes (`ragkit.support.quotable`),
  also the length over which `ragkit.assemble.blocks` cuts a sentence at its clauses.

What it is not: a tokenizer. The numbers are estimates and are named as such wherever shown.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

# Words of how questions are asked, not of what they ask about (the NLTK stopwords the
# tokenizer drops already include what/which/how/does/...), and Korean interrogatives.
QUESTION_WORDS = frozenset("many much get gets mean means tell please happen happens kind "
                           "sort could would something anything someone see want need know "
                           "며칠 몇 얼마 어떻 어디 언제 누구 무엇 궁금하".split())

# a quote's length bound: a block runs to a sentence end or a line break, so a line without
# a full stop (a data dump, a token list) was quoted whole, a whole passage of it. Longest
# block: shipped and held-out texts 420, the cookbook set 664 (but a data literal's 3,898)
MAX_QUOTE_CHARS = 1_000
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")


def estimate_tokens(text: str) -> int:
    """One token per 4 UTF-8 bytes, rounded up (0 for empty text)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def texts(value: Any) -> Iterator[str]:
    """Every text in a request part: strings, `text` fields, nested `content`, tool specs."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)
    elif isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        if "content" in value:
            yield from texts(value["content"])
        for key in ("name", "description", "input_schema"):  # tool definitions
            if key in value:
                yield value[key] if isinstance(value[key], str) else json.dumps(value[key])


def request_tokens(request: dict[str, Any]) -> int:
    """The estimated input tokens of a request (system, messages and tools)."""
    parts = [request.get("system", ""), request.get("messages", []), request.get("tools", [])]
    return sum(estimate_tokens(text) for part in parts for text in texts(part))


def s_stem(term: str) -> str:
    """Harman's (1991) S-stemmer: plural endings off (`refunds` → refund, `policies` →
    policy, `boxes` → boxe); other terms unchanged."""
    if len(term) <= 3 or not term.isalpha():
        return term
    if term.endswith("ies") and not term.endswith(("eies", "aies")):
        return term[:-3] + "y"
    if term.endswith("es") and not term.endswith(("aes", "ees", "oes")):
        return term[:-1]
    if term.endswith("s") and not term.endswith(("us", "ss")):
        return term[:-1]
    return term


def reads_korean(text: str) -> bool:
    """Whether `text` reads as Korean: more of its words (runs of non-space) hold a Hangul
    syllable than hold Latin letters and no Hangul. Not any Hangul at all: a Korean passage
    keeps its code names and English terms, an English one may quote a Korean word."""
    words = text.split()
    hangul = sum(bool(_HANGUL.search(w)) for w in words)
    return hangul > sum(bool(_LATIN.search(w)) and not _HANGUL.search(w) for w in words)


def joined(names: Sequence[str], code: bool = False) -> str:
    """"a", "a and b", "a, b and c"; names that hold a comma are set in backticks, so
    "bm25, `hybrid, no context` and hybrid" does not read as four names — with `code`,
    every name is (notebook 08's finding set one configuration's name as code of four)."""
    names = [f"`{n}`" if code or "," in n else n for n in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` (thousands separated: "8,931 chunks") and `noun`, plural unless n is 1 ("1 chunk",
    "0 chunks"): `plural` when given ("1 query", "2 queries"), else `noun` + "s"."""
    return f"{n} {noun}" if n == 1 else f"{n:,} {plural or noun + 's'}"


# Failed questions a first rung needs before a relative reduction from it reads as a rate:
# under 10, one question more or less moves the reduction by more than 10 points.
FEW_FAILURES = 10


def too_few_failures(failed: int) -> str:
    """Why a relative reduction of failures from a first rung that failed `failed` questions
    means little, or "" from `FEW_FAILURES` up: "the first rung fails 1 question, too few for
    a relative reduction to mean anything: one question more or less moves it by 100 %" (a
    ladder read "-200.0 %" where 1 failed question became 3)."""
    if failed >= FEW_FAILURES:
        return ""
    if failed == 0:
        return "the first rung fails no question, so there is no failure to reduce"
    return (f"the first rung fails {counted(failed, 'question')}, too few for a relative "
            f"reduction to mean anything: one question more or less moves it by "
            f"{100 / failed:.0f} %")


def fewer_failures(reduction: float, digits: int = 0) -> str:
    """A relative change of failures in words that follow its sign: 30 → "30 % fewer
    failures", -200 → "200 % more failures" (not "-200 % fewer"), 0 → "no fewer failures",
    NaN (no failures to reduce) → "no change measured"."""
    if reduction != reduction:
        return "no change measured"
    shown = f"{abs(reduction):.{digits}f}"
    if float(shown) == 0:
        return "no fewer failures"
    return f"{shown} % {'fewer' if reduction > 0 else 'more'} failures"


def anchor(span: str, passage: str) -> str | None:
    """`span` as it occurs in `passage`: verbatim, else the passage's own text of it where
    only white space differs (a span re-wrapped, or typed with one space where a man page
    has several); None when it is not there even so."""
    span = span.strip()
    if not span:
        return None
    if span in passage:
        return span
    words = span.split()
    pattern = r"\s+".join(re.escape(w) for w in words)
    found = re.search(pattern, passage)
    return found.group(0) if found else None
