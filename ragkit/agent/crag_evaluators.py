"""CRAG's retrieval evaluators: what scores a (question, passage), and its thresholds.

What it is: the `Evaluator` interface (`score`, `upper`, `lower`) that `ragkit.agent.crag`
grades passages with, `score_all` (one batch when the evaluator can), and two evaluators:
`OfflineEvaluator` — max(IDF-weighted term overlap, MiniLM cosine), no model call, its
thresholds tuned on the dev split — and `ClaudeEvaluator` — a versioned judge prompt through
`ragkit.answer_judge.Judge` (cached, metered; malformed → NaN, counted).

What it is not: CRAG's fine-tuned T5 evaluator (arXiv 2401.15884), whose weights are not
available offline.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ragkit.answer_judge import Judge, Malformed, Template
from ragkit.lexical import auto
from ragkit.support import weighted_share

# Offline thresholds, the defaults of an evaluator built without others: tuned once on the
# shipped dev split's top-5 hybrid hits by `tune_thresholds` (upper = best balanced accuracy
# of "score >= upper" for a passage satisfying a golden span; lower = the highest cut keeping
# 95 % of those passages). Notebook 06 tunes them again on its own index and runs CRAG on
# what it finds; these stay for callers that tune nothing.
UPPER, LOWER = 0.75, 0.25


class Evaluator(Protocol):
    """Scores how well a passage answers a question; `upper`/`lower` are its thresholds."""

    upper: float
    lower: float

    def score(self, question: str, passage: str) -> float: ...


def score_all(evaluator: Evaluator, question: str, passages: Sequence[str]) -> list[float]:
    """`evaluator.score` of each passage; in one batch when the evaluator has `score_many`."""
    many = getattr(evaluator, "score_many", None)
    if many is not None:
        return many(question, passages)
    return [evaluator.score(question, p) for p in passages]


class OfflineEvaluator:
    """max(lexical, dense): a documented relevance score in [0, 1], no model call.

    - lexical: the share of the question's IDF mass whose terms occur in the passage
      (BM25's Okapi IDF from `bm25`, the index's own tokenizer; a term the index has never
      seen weighs its highest IDF; without `bm25`, every term weighs 1);
    - dense: the cosine of MiniLM's query and passage vectors (the passage truncated to the
      model's 256 word pieces); skipped when `embedder` is None.
    Why the max: term overlap is sure of exact names and codes, the cosine of paraphrases.
    """

    name = "offline: max(IDF term overlap, MiniLM cosine)"

    def __init__(self, bm25=None, embedder=None, upper: float = UPPER, lower: float = LOWER
                 ) -> None:
        self.bm25, self.embedder, self.upper, self.lower = bm25, embedder, upper, lower
        self._queries: dict[str, np.ndarray] = {}

    def _terms(self, text: str) -> set[str]:
        if self.bm25 is not None:
            return set(self.bm25.tokenize(text))
        return set(auto(text))

    def lexical(self, question: str, passage: str) -> float:
        terms = self._terms(question)
        if not terms:
            return 0.0
        if self.bm25 is None:
            weights = dict.fromkeys(terms, 1.0)
        else:
            vocab, idf = self.bm25.vocabulary, self.bm25.idf
            top = float(idf.max()) if idf.size else 1.0
            weights = {t: max(float(idf[vocab[t]]), 0.0) if t in vocab else top for t in terms}
        return weighted_share(weights, self._terms(passage).__contains__)

    def dense(self, question: str, passage: str) -> float:
        return self.dense_many(question, [passage])[0] if self.embedder is not None else 0.0

    def dense_many(self, question: str, passages: Sequence[str]) -> list[float]:
        """Cosines of the question with each passage, the passages embedded in one call (the
        embedder then fills every core; one text a call runs on one)."""
        if self.embedder is None:
            return [0.0] * len(passages)
        if question not in self._queries:
            self._queries[question] = self.embedder.embed([question], input_type="query")[0]
        vectors = self.embedder.embed(list(passages), input_type="document")
        return [float(np.dot(self._queries[question], v)) for v in vectors]

    def score(self, question: str, passage: str) -> float:
        return self.score_many(question, [passage])[0]

    def score_many(self, question: str, passages: Sequence[str]) -> list[float]:
        """`score` of each passage, embedded together."""
        dense = self.dense_many(question, passages)
        return [max(self.lexical(question, p), d) for p, d in zip(passages, dense, strict=True)]


RELEVANCE = Template("crag_relevance", "v1", (
    "Grade how well the passage answers the question, as CRAG's retrieval evaluator does: "
    '"relevant" if it contains the answer, "partial" if it is on the topic but does not '
    'answer it fully, "irrelevant" otherwise. Judge only from the passage.\n'
    'Reply as {"reason": "...", "label": "relevant"}.'))
LABELS = {"relevant": 1.0, "partial": 0.5, "irrelevant": 0.0}


class ClaudeEvaluator:
    """Claude grades each passage (`RELEVANCE`): relevant 1.0, partial 0.5, irrelevant 0.0,
    the mean over the judge's n samples; all samples malformed → NaN (counted in
    `judge.failures`, with a warning). Thresholds: correct = relevant (1.0), ambiguous ≥
    partial (0.5) — fixed by the labels, not tuned."""

    name = "Claude judge"

    def __init__(self, judge: Judge | None = None, upper: float = 1.0, lower: float = 0.5
                 ) -> None:
        self.judge = judge if judge is not None else Judge()
        self.upper, self.lower = upper, lower

    def score(self, question: str, passage: str) -> float:
        def parse(obj: dict[str, Any]) -> float:
            value = str(obj.get("label", "")).strip().lower()
            if value not in LABELS:
                raise Malformed(f"label is {obj.get('label')!r}, not one of {', '.join(LABELS)}")
            return LABELS[value]
        votes = [self.judge.ask(RELEVANCE, parse, k, question=question, passage=passage)
                 for k in range(self.judge.n)]
        valid = [v for v in votes if v is not None]
        return sum(valid) / len(valid) if valid else float("nan")
