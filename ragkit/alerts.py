"""Zero-result alerting: how many queries find nothing, and a warning when too many do.

What it is: `zero_results(pipeline, queries, floor)` checks each query two ways and calls it a
*zero result* when either holds:
- no lexical hit: BM25 has no candidate, i.e. no query term is in the index vocabulary with
  a positive weight (the same rule as `Pipeline.search`, which drops BM25 scores of 0);
- a weak top score: the best score of `signal` is under `floor`.
The report's `share` is the zero-result fraction; above `ALERT_SHARE` (5 %, the 2026 RAG
best-practice notes: "zero-result alerting (>5 % no-result = a coverage gap)") a
`RagkitWarning` says so.

Which score: `signal="dense"` (default with dense vectors) is the top cosine of the query
to a chunk, comparable across queries; `"bm25"` is the raw top BM25 score; `"fused"` is the
top score of the search config's fusion. The default fusion min-max normalises each list,
so its top says whether the lists agree on their best chunk, not how well the query matches
(a query with a single BM25 candidate gets 0 from BM25; RRF's top depends only on ranks):
a floor on it says little, which is why it is not the default.

The default floor belongs to the index's embedder (`DENSE_FLOORS`; cosines of different
models have different scales), each measured on the shipped index (default pipeline) against
the ten hand-written off-topic queries of `OFF_TOPIC_EXAMPLES` (the capital of France,
sourdough bread, a German refund question, "xqzv plorf", …):
- e5-small, 0.82: the 173 test questions' top cosines run from 0.825 (5 % quantile 0.844;
  Korean from 0.880), the off-topic ones from 0.766 to 0.830 — e5-small puts any text fairly
  close to any other. At 0.82 no test question and 8 of the 10 off-topic queries are
  flagged; at 0.85, all ten and 8.7 % of the test questions.
- MiniLM (`minilm`, `auto`), 0.3: the test questions from 0.40 (5 % quantile 0.47; Korean
  0.44), the off-topic ones 0.17 to 0.25; at 0.3 none of the former and all of the latter.
Another embedder has no default: give `floor`.

What it is not: an answerability check. A question about a company the corpus lacks still
matches that topic's chunks well; this catches queries in a vocabulary or language the
index does not cover.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ragkit.documents import Query, RagkitError, RagkitWarning
from ragkit.pipeline import Pipeline, SearchConfig

ALERT_SHARE = 0.05
# top dense cosine under which a query found nothing, per index embedder (module docstring)
DENSE_FLOORS = {"e5-small": 0.82, "minilm": 0.3, "auto": 0.3}
SIGNALS = ("dense", "bm25", "fused")
# Queries no shipped document is about, in the shipped corpus's languages and beyond: what a
# zero-result alert should catch (the module docstring's measurement used ten like these).
OFF_TOPIC_EXAMPLES = (
    "What is the capital of France?",
    "How do I bake sourdough bread at home?",
    "Wie beantrage ich eine Rückerstattung für meine Konzertkarten?",
    "xqzv plorf",
    "Who won the football world cup in 1974?",
    "What is the boiling point of ethanol?",
    "Recommend a good science fiction novel.",
    "How many moons does Jupiter have?",
    "고양이는 하루에 몇 시간 자나요?",
    "What is a good stretching routine for runners?",
)


@dataclass(frozen=True)
class QueryCheck:
    """One query: whether BM25 found a candidate, its top `signal` score, the verdict."""

    query: str
    lexical_hit: bool
    top_score: float
    zero: bool


@dataclass(frozen=True)
class ZeroResultReport:
    """Per-query checks, the floor and signal used, the share and whether it alerts."""

    checks: tuple[QueryCheck, ...]
    floor: float
    signal: str

    @property
    def share(self) -> float:
        return sum(c.zero for c in self.checks) / len(self.checks) if self.checks else 0.0

    @property
    def alert(self) -> bool:
        return self.share > ALERT_SHARE

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([c.__dict__ for c in self.checks])

    def __str__(self) -> str:
        zero = sum(c.zero for c in self.checks)
        lexical = sum(not c.lexical_hit for c in self.checks)
        return (f"{zero} of {len(self.checks)} queries ({100 * self.share:.1f}%) found nothing: "
                f"{lexical} without a BM25 candidate, top {self.signal} score under "
                f"{self.floor} for the rest; alert above {100 * ALERT_SHARE:.0f}%: "
                f"{'ALERT' if self.alert else 'ok'}")


def top_scores(pipeline: Pipeline, texts: Sequence[str], signal: str,
               config: SearchConfig = SearchConfig()) -> list[float]:
    """The best `signal` score per query text (0.0 when the list is empty)."""
    if signal not in SIGNALS:
        raise RagkitError(f"unknown zero-result signal '{signal}' (known: {', '.join(SIGNALS)})")
    search = config if signal == "fused" else SearchConfig(mode=signal)
    return [ranking[0][1] if ranking else 0.0
            for ranking in pipeline.search(list(texts), 1, search)]


def zero_results(pipeline: Pipeline, queries: Sequence[str | Query],
                 floor: float | None = None, signal: str | None = None,
                 config: SearchConfig = SearchConfig(), warn: bool = True) -> ZeroResultReport:
    """Check every query (see the module docstring); warn when the share is above 5 %.

    `signal` defaults to "dense" when the index has vectors, else "bm25"; `floor` defaults
    to the index embedder's `DENSE_FLOORS` entry for "dense" and must be given otherwise.
    """
    texts = [q.text if isinstance(q, Query) else q for q in queries]
    signal = signal or ("dense" if pipeline.dense is not None else "bm25")
    if floor is None:
        if signal != "dense":
            raise RagkitError(f"zero-result signal '{signal}' has no default floor; give one")
        embedder = pipeline.config.embedder
        if embedder not in DENSE_FLOORS:
            raise RagkitError(f"no measured zero-result floor for embedder '{embedder}' "
                              f"(measured: {', '.join(DENSE_FLOORS)}); give one")
        floor = DENSE_FLOORS[embedder]
    lexical = [bool(r) for r in pipeline.search(texts, 1, SearchConfig(mode="bm25"))]
    scores = top_scores(pipeline, texts, signal, config)
    checks = tuple(QueryCheck(text, hit, score, not hit or score < floor)
                   for text, hit, score in zip(texts, lexical, scores))
    report = ZeroResultReport(checks, floor, signal)
    if warn and report.alert:
        warnings.warn(f"zero-result alert: {report}", RagkitWarning, stacklevel=2)
    return report
