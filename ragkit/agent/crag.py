"""Corrective RAG (CRAG): grade the retrieved passages, then refine, widen or replace them.

What it is, as the CRAG code does it (src: HuskyInSalt/CRAG `scripts/CRAG_Inference.py`,
`internal_knowledge_preparation.py`; arXiv 2401.15884):
- an *evaluator* scores each (question, passage): `score(question, passage) -> float`;
- per passage: ≥ upper → correct, ≥ lower → ambiguous, else incorrect; per query: **Correct**
  if any passage is correct, else **Ambiguous** if any is ambiguous, else **Incorrect**
  (`action`). A NaN score (a judge that could not decide) counts as incorrect;
- Correct → *knowledge refinement* by decompose-then-recompose: every passage is cut into
  strips of 3 sentences (`strips`), each strip scored, strips under 4 words score −1, the
  top `keep` (10, the code's "excerption" setting) kept;
- Incorrect → the passages are discarded and the question searched *elsewhere*: CRAG
  rewrites it to ≤ 3 keywords for a web search; here `keywords` of the question go to a
  `fallback` (query → passages), by default `GrepCorpus`, a plain grep over the raw corpus
  files; its passages are refined the same way (top 5, the code's web setting);
- Ambiguous → the refined internal strips and the refined fallback strips together.
Then one cited answer (`ragkit.answer.answer`) over the kept strips, best-scored first.

Evaluators (`ragkit.agent.crag_evaluators`, importable from here too): `OfflineEvaluator` —
max(IDF-weighted term overlap, MiniLM cosine), thresholds tuned on the dev split
(`tune_thresholds`; notebook 06); `ClaudeEvaluator` — a versioned judge prompt through
`ragkit.answer_judge.Judge` (cached, metered; malformed → NaN, counted).

What it is not: CRAG's fine-tuned T5 evaluator, nor a web search.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ragkit.agent.crag_evaluators import (LABELS, LOWER, RELEVANCE, UPPER,  # noqa: F401
                                          ClaudeEvaluator, Evaluator, OfflineEvaluator,
                                          score_all)
from ragkit.agent.grep_fallback import GrepCorpus  # noqa: F401 (the default fallback)
from ragkit.answer import Answer, answer
from ragkit.assemble import label
from ragkit.config import SearchConfig
from ragkit.documents import Chunk, Query, RagkitError
from ragkit.lexical import auto
from ragkit.text_stats import QUESTION_WORDS

CORRECT, AMBIGUOUS, INCORRECT = "Correct", "Ambiguous", "Incorrect"
STRIP_SENTENCES, MIN_STRIP_WORDS, GLUE_WORDS = 3, 4, 5
KEEP_INTERNAL, KEEP_EXTERNAL, MAX_KEYWORDS = 10, 5, 5

Fallback = Callable[[str], list[Chunk]]  # a query → passages found elsewhere, best first


def passage_text(chunk: Chunk) -> str:
    """What an evaluator reads: the chunk's `[Source | Section]` label line and its text."""
    title, section = label(chunk)
    return f"[Source: {title} | Section: {section}]\n{chunk.text}"


def grade(score: float, upper: float, lower: float) -> str:
    """One passage's grade; NaN (undecided) is incorrect."""
    if score >= upper:
        return CORRECT
    return AMBIGUOUS if score >= lower else INCORRECT


def action(scores: Sequence[float], upper: float, lower: float) -> str:
    """The query's action: Correct if any passage is, else Ambiguous if any is, else Incorrect."""
    grades = {grade(s, upper, lower) for s in scores}
    return next((g for g in (CORRECT, AMBIGUOUS) if g in grades), INCORRECT)


# --------------------------------------------------------------------------- decompose
def _pieces(text: str) -> list[str]:
    """Sentences (split at "?", ". " and line breaks — the corpus is Markdown); a piece of
    ≤ 5 words is glued to the one before it, as CRAG's excerption does."""
    out: list[str] = []
    for piece in re.split(r"(?<=\?)\s+|(?<=\.)\s+|\n+", text):
        piece = piece.strip()
        if not piece:
            continue
        if out and len(piece.split()) <= GLUE_WORDS:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def strips(text: str, size: int = STRIP_SENTENCES) -> list[str]:
    """`text` as strips of `size` consecutive sentences (the last may be shorter)."""
    pieces = _pieces(text)
    return [" ".join(pieces[i:i + size]) for i in range(0, len(pieces), size)]


def strip_chunks(chunk: Chunk, size: int = STRIP_SENTENCES) -> list[Chunk]:
    """A passage's strips as chunks `<id>#s<n>` that keep its document, title and section."""
    return [replace(chunk, id=f"{chunk.id}#s{n}", text=text, context="")
            for n, text in enumerate(strips(chunk.text, size), start=1)]


def refine(question: str, passages: Sequence[Chunk], evaluator: Evaluator, keep: int
           ) -> list[tuple[Chunk, float]]:
    """Decompose-then-recompose: the top `keep` strips of all passages by evaluator score
    (strips under 4 words score −1; NaN ranks last), best first."""
    pieces = [strip for chunk in passages for strip in strip_chunks(chunk)]
    graded = [p for p in pieces if len(p.text.split()) >= MIN_STRIP_WORDS]
    found = dict(zip((p.id for p in graded),
                     score_all(evaluator, question, [passage_text(p) for p in graded])))
    scored = []
    for strip in pieces:
        s = found.get(strip.id, -1.0)
        scored.append((strip, -math.inf if math.isnan(s) else s))
    scored.sort(key=lambda cs: -cs[1])
    return scored[:keep]


# --------------------------------------------------------------------------- elsewhere
def keywords(question: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """The rewritten query: the question's first `limit` distinct content terms (ragkit's
    `auto` tokenizer, minus how-questions-are-asked words). CRAG asks an LLM for ≤ 3."""
    terms = [t for t in dict.fromkeys(auto(question)) if t not in QUESTION_WORDS and len(t) > 1]
    return terms[:limit]


# --------------------------------------------------------------------------- the method
@dataclass(frozen=True)
class CragResult:
    """One question through CRAG: the scores of the retrieved passages, the action, the
    strips kept (chunk, score), the fallback query (if searched) and the answer."""

    question: str
    scores: tuple[float, ...]
    action: str
    kept: tuple[tuple[Chunk, float], ...]
    fallback_query: str | None
    answer: Answer


def crag(question: str, passages: Sequence[Chunk], evaluator: Evaluator,
         fallback: Fallback | None = None, *, llm=None, keep_internal: int = KEEP_INTERNAL,
         keep_external: int = KEEP_EXTERNAL, **answer_args: Any) -> CragResult:
    """CRAG on the retrieved `passages` (best first); see the module docstring.

    Without a `fallback`, Incorrect answers from nothing (the decline, no call) and
    Ambiguous from the internal strips alone.
    """
    scores = tuple(score_all(evaluator, question, [passage_text(c) for c in passages]))
    act = action(scores, evaluator.upper, evaluator.lower)
    kept: list[tuple[Chunk, float]] = []
    if act in (CORRECT, AMBIGUOUS):
        kept += refine(question, passages, evaluator, keep_internal)
    query = None
    if act in (AMBIGUOUS, INCORRECT) and fallback is not None:
        query = " ".join(keywords(question))
        kept += refine(question, fallback(query), evaluator, keep_external)
    kept.sort(key=lambda cs: -cs[1])
    unique: dict[str, tuple[Chunk, float]] = {}
    for chunk, score in kept:  # a strip the fallback found again (grep reading the same file)
        unique.setdefault(" ".join(chunk.text.split()), (chunk, score))  # once, at its best
    kept = list(unique.values())
    hits = [(c.id, s) for c, s in kept]
    reply = answer(question, hits, {c.id: c for c, _ in kept}, llm=llm, **answer_args)
    return CragResult(question, scores, act, tuple(kept), query, reply)


# --------------------------------------------------------------------------- tuning
def passage_scores(pipeline, queries: Sequence[Query], judgments: Mapping[str, Any],
                   evaluator: Evaluator, k: int = 5, config=None) -> pd.DataFrame:
    """One row per (question, top-k passage): its score and whether it satisfies a golden
    item (`ragkit.evaluate.judge` judgments); unanswerable questions' passages are never
    relevant."""
    by_id = {c.id: c for c in pipeline.chunks}
    hits = pipeline.search([q.text for q in queries], k, config or SearchConfig())
    rows = []
    for query, ranking in zip(queries, hits):
        relevant = frozenset().union(*judgments.get(query.id, [frozenset()]))
        idents = [ident for ident, _ in ranking[:k]]
        scores = score_all(evaluator, query.text, [passage_text(by_id[i]) for i in idents])
        rows += [{"query": query.id, "chunk": ident, "relevant": ident in relevant,
                  "score": score} for ident, score in zip(idents, scores, strict=True)]
    return pd.DataFrame(rows)


def tune_thresholds(rows: pd.DataFrame, keep: float = 0.95) -> tuple[float, float, pd.DataFrame]:
    """(upper, lower, sweep) from `passage_scores` rows: upper maximises balanced accuracy of
    "score ≥ upper" as a relevance test (ties → the higher cut); lower is the highest cut
    (0.05 steps) that keeps `keep` of the relevant passages at or above it. Rows without a
    relevant passage, or without an irrelevant one, cannot tune either: a `RagkitError` says
    which (it returned nan, nan)."""
    cuts = np.round(np.arange(0.05, 1.0, 0.05), 2)
    rel, scores = rows["relevant"].to_numpy(bool), rows["score"].to_numpy(float)
    for lacking, absent in (("relevant", not rel.any()), ("irrelevant", rel.all())):
        if absent:
            raise RagkitError(f"cannot tune CRAG's thresholds: none of the {len(rel)} scored "
                              f"passages is {lacking} (a cut must separate the two kinds)")
    sweep = pd.DataFrame({
        "cut": cuts,
        "relevant kept": [(scores[rel] >= c).mean() for c in cuts],
        "irrelevant rejected": [(scores[~rel] < c).mean() for c in cuts]})
    sweep["balanced accuracy"] = (sweep["relevant kept"] + sweep["irrelevant rejected"]) / 2
    best = sweep["balanced accuracy"].max()
    upper = float(sweep.loc[np.isclose(sweep["balanced accuracy"], best), "cut"].max())
    lower = float(sweep.loc[sweep["relevant kept"] >= keep, "cut"].max())
    return upper, min(lower, upper), sweep.set_index("cut")
