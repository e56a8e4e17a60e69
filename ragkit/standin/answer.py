"""Stand-in rule: a question over `search_result` blocks → an extractive answer with citations.

Recognises a request without tools whose user turns hold `search_result` blocks (top level
or inside tool results) and whose last user turn ends with question text. It answers the
way a careful reader with a highlighter would, by a fixed rule:

1. Terms: the question's and each block's tokens by ragkit's `auto` tokenizer (`code`
   tokens; Korean morphemes for Hangul), minus `QUESTION_WORDS` (`ragkit.text_stats`),
   plural endings removed (`s_stem`).
2. Weights: a BM25-style IDF over the request's blocks,
   idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)), N blocks, n_t of them containing t — so
   a question term no source mentions weighs the most.
3. Support of a block (a sentence or line; Markdown heading lines, whole or cut after a
   section number, text inside an HTML comment, `ragkit.support.hidden_blocks`, and blocks over
   `ragkit.support.MAX_QUOTE_CHARS` are never quoted, and a clause of a longer sentence,
   `ragkit.assemble.clause_blocks`, only when it holds a question term that is no bare
   number, `ragkit.support.clause_terms`): the share of the
   question's IDF mass found in the block or in its search result's title (the
   `[Source | Section]` tag, which carries the document and heading path).
4. If the best support is below `THRESHOLD`, the reply is `DECLINE` without citations.
   Otherwise it quotes the best block, then up to two more, best first, that reach the
   threshold and add a question term the quoted ones lack, never a data-like clause
   (`ragkit.support.data_like`: "sensor2 reading 15,"); ties go to the later search
   result (the most relevant comes last). Each quote is a text block with one
   `search_result_location` citation of exactly that block; a clause is shown without the
   ", " / "; " / " - " it was cut after (`ragkit.assemble.clause_shown`).

THRESHOLD (0.8) maximised balanced accuracy (mean of the shares of answerable questions
answered and unanswerable ones declined) on the shipped dev split, top-5 hybrid hits
(`benchmarks/bench_answers.py`): dev 31/73 answered, 6/8 declined; test 41/111 answered,
8/10 declined (README, "Cited answers"). Term overlap separates the two poorly here — the
unanswerable questions reuse the corpus's own names (another quarter, an absent field) — so
offline answers are conservative; Claude decides for itself.

What it is not: a reader. It cannot combine facts, compute, or notice that a passage about
2024 does not answer a question about 2023 unless the question's terms say so.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ragkit.answer import DECLINE, quote_location, result_sources
from ragkit.assemble import blocks, clause_blocks, clause_shown
from ragkit.standin.base import Reply
from ragkit.support import question_terms as _terms
from ragkit.file_kinds import is_code_name
from ragkit.support import (clause_terms, data_like, hidden_blocks, quotable, request_idf,
                            weighted_share)

THRESHOLD = 0.8
MAX_QUOTES = 3
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)", re.M)  # an ATX heading line opens so


@dataclass(frozen=True)
class Unit:
    """One content block of one search result, with its terms."""

    result: int  # search_result_index
    block: int  # index in the result's content
    text: str
    terms: frozenset[str]
    title_terms: frozenset[str]
    quotable: bool
    clause: bool = False  # a clause of a sentence over MAX_QUOTE_CHARS


def _question(request: dict[str, Any]) -> str:
    """The text blocks of the last user turn (the question follows the search results)."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or []
                     if isinstance(b, dict) and b.get("type") == "text")


def _units(results: list[dict[str, Any]]) -> list[Unit]:
    units = []
    for r, result in enumerate(results):
        title = _terms(str(result.get("title", "")))
        texts = [block.get("text", "") if isinstance(block, dict) else ""
                 for block in result.get("content") or []]
        # the clauses of a long sentence, known when these are the blocks `ragkit.answer`
        # cuts a passage into (another client's blocks are taken as they come)
        whole = "".join(t for t in texts if isinstance(t, str))
        clauses = clause_blocks(whole) if blocks(whole) == texts else frozenset()
        starts = [0, *itertools.accumulate(len(t) if isinstance(t, str) else 0 for t in texts)]
        code = is_code_name(str(result.get("source", "")))  # '#' a comment, not a heading
        hidden = frozenset() if code else hidden_blocks(
            [t if isinstance(t, str) else "" for t in texts])
        units += [Unit(r, b, text, _terms(text), title, quotable(text) and b not in hidden
                       and (code or not _on_heading(whole, starts[b])), b in clauses)
                  for b, text in enumerate(texts)]
    return units


def _on_heading(whole: str, start: int) -> bool:
    """Whether the block at `start` of `whole` lies on a Markdown heading line: "## 2.
    Cooling-off period" is cut into the blocks "## 2. " and "Cooling-off period" after its
    number, and the second was quoted as a whole answer."""
    return bool(_HEADING.match(whole, whole.rfind("\n", 0, start) + 1))


def support(unit: Unit, idf: dict[str, float]) -> float:
    """The share of the question's IDF mass found in the unit or its result's title."""
    return weighted_share(idf, lambda t: t in unit.terms or t in unit.title_terms)


def ranked(question: str, results: list[dict[str, Any]]) -> list[tuple[Unit, float]]:
    """Every quotable unit with its support, best first (ties: later result, earlier block)."""
    terms = _terms(question)
    units = _units(results)
    if not terms or not units:
        return []
    idf = request_idf([u.terms for u in units], terms)
    named = clause_terms(question)  # a clause is quoted for a term that is no bare number
    return sorted(((u, support(u, idf)) for u in units
                   if u.quotable and (u.terms & named or not u.clause)),
                  key=lambda us: (-us[1], -us[0].result, us[0].block))


def choose(question: str, results: list[dict[str, Any]],
           threshold: float = THRESHOLD) -> list[tuple[Unit, float]]:
    """The quoted units with their support, best first; empty when the evidence is weak."""
    scored = ranked(question, results)
    if not scored or scored[0][1] < threshold:
        return []
    terms = _terms(question)
    chosen = [scored[0]]
    covered = set(terms & (scored[0][0].terms | scored[0][0].title_terms))
    for unit, score in scored[1:]:
        if len(chosen) == MAX_QUOTES or score < threshold:
            break
        new = (terms & (unit.terms | unit.title_terms)) - covered
        if new and not (unit.clause and data_like(unit.text)):
            chosen.append((unit, score))
            covered |= new
    return chosen


def rule(request: dict[str, Any]) -> Reply | None:
    """A question over search results → quotes with citations, or DECLINE; else None."""
    if request.get("tools"):
        return None
    results = result_sources(request.get("messages", []))
    question = _question(request)
    if not results or not question.strip():
        return None
    chosen = choose(question, results)
    if not chosen:
        return Reply.text(DECLINE)
    return Reply([{"type": "text", "text": (" " if n else "") + shown(unit),
                   "citations": [quote_location(results, unit.result, unit.block,
                                                unit.text)]}
                  for n, (unit, _) in enumerate(chosen)])


def shown(unit: Unit) -> str:
    """A quote as a reply shows it: stripped, a clause without the ", " it was cut after
    (`ragkit.assemble.clause_shown`); a citation's `cited_text` keeps the exact block. The
    rule of every stand-in quote: this reply's, the agent's and the long-context reply's."""
    return clause_shown(unit.text) if unit.clause else unit.text.strip()
