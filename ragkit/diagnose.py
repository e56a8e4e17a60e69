"""Why does a question still fail? Each failure attributed to the first stage that lost it.

The 2026 RAG best-practice notes: most RAG failures start at ingestion, so a failing question
is traced back through the stages in pipeline order, and the first one that lost a golden item
takes the
blame:
- **chunking**: a golden span is split across chunks — no single chunk holds all of it —
  or no chunk holds even half of it (then no chunk can satisfy it at all);
- **retrieval**: no chunk satisfying the item is in the first stage's candidates (the
  hybrid top `rerank_candidates`, 150 by default), so no reranker could have found it;
- **reranking**: it is among the candidates but not in the top k after reranking;
- **generation**: it is in the top k, but the answer declines or does not cite it; or the
  question has no golden item (the corpus cannot answer it) and the answer does not decline.
A question *fails* when some golden item is not in the top k after reranking, or the
answer does not cite a chunk satisfying every golden item (declining counts as citing
none). Each failing item gets the stage where it was lost; the question gets the earliest.

What it is not: a judge of answer correctness — an answer that cites the golden chunk
passes, whatever it says — nor a root-cause analysis beyond the first stage that lost the
item (a span split across chunks is blamed on chunking even if the reranker also missed it).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ragkit.documents import Chunk, Document, Query
from ragkit.evaluate import Judgments, Run, first_relevant_rank

STAGES = ("chunking", "retrieval", "reranking", "generation")
COLUMNS = ("query", "kind", "question", "stage", "reason", "first-stage rank", "reranked rank",
           "answer")


@dataclass(frozen=True)
class Outcome:
    """What the answerer did with a question: whether it declined and the chunks it cited."""

    declined: bool
    cited: frozenset[str]

    @classmethod
    def of(cls, answer) -> "Outcome":
        """From a `ragkit.answer.Answer`."""
        return cls(bool(answer.declined), frozenset(c.chunk_id for c in answer.citations))


def span_coverage(queries: Sequence[Query], documents: Sequence[Document],
                  chunks: Sequence[Chunk]) -> dict[str, list[float]]:
    """Per query with golden items, per item (in golden order): the largest share of its
    span's characters that one chunk holds. Golden chunks and whole documents count 1.0
    (the chunking cannot split them); a span not found in its document counts 0.0."""
    texts = {d.id: d.text for d in documents}
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    out: dict[str, list[float]] = {}
    for query in queries:
        shares = []
        for gold in query.golden:
            start = texts.get(gold.doc_id, "").find(gold.span) if gold.span else -1
            if gold.chunk_id or not gold.span:
                shares.append(1.0)
            elif start < 0:
                shares.append(0.0)
            else:
                end = start + len(gold.span)
                shares.append(max((max(0, min(c.end, end) - max(c.start, start)) / (end - start)
                                   for c in by_doc.get(gold.doc_id, [])), default=0.0))
        if shares:
            out[query.id] = shares
    return out


def _item_stage(number: int, item: frozenset[str], coverage: float, first: Sequence[str],
                top: Sequence[str], outcome: Outcome | None, k: int) -> tuple[str, str] | None:
    """(stage, reason) where golden item `number` was lost; None when it was not."""
    in_top = bool(item & set(top[:k]))
    cited = outcome is None or (not outcome.declined and bool(item & outcome.cited))
    if in_top and cited:
        return None
    if coverage < 0.5:
        return "chunking", (f"no chunk holds half of golden span {number} "
                            f"(the best holds {100 * coverage:.0f} %)")
    if coverage < 1.0:
        return "chunking", (f"golden span {number} is split across chunks "
                            f"(the best holds {100 * coverage:.0f} %)")
    first_rank = first_relevant_rank(first, item)
    if first_rank is None:
        return "retrieval", f"golden item {number} is not in the first-stage top {len(first)}"
    if not in_top:
        return "reranking", (f"golden item {number} is at first-stage rank {first_rank}, "
                             f"not in the top {k} after reranking")
    rank = first_relevant_rank(top, item)
    if outcome.declined:
        return "generation", f"declined with golden item {number} at rank {rank}"
    return "generation", f"cited other chunks, not golden item {number} (at rank {rank})"


def attribute(items: Sequence[frozenset[str]], coverage: Sequence[float],
              first: Sequence[str], top: Sequence[str], outcome: Outcome | None,
              k: int = 5) -> tuple[str, str] | None:
    """(stage, reason) for a failing question with golden `items`; None when it passes.

    `first` is the first stage's candidate ids, `top` the reranked ids (best first; only
    the top `k` count), `outcome` the answer (None: retrieval only, no answer checked).
    """
    lost = [_item_stage(n, item, share, first, top, outcome, k)
            for n, (item, share) in enumerate(zip(items, coverage), start=1)]
    lost = [found for found in lost if found is not None]
    return min(lost, key=lambda found: STAGES.index(found[0])) if lost else None


def _answer_label(outcome: Outcome | None) -> str:
    if outcome is None:
        return "not asked"
    return "declined" if outcome.declined else f"cited {len(outcome.cited)} chunk(s)"


def diagnose(queries: Sequence[Query], judgments: Judgments,
             coverage: Mapping[str, Sequence[float]], first_stage: Run, reranked: Run,
             outcomes: Mapping[str, Outcome] | None = None, k: int = 5) -> pd.DataFrame:
    """One row per failing question (`COLUMNS`), in query order.

    Questions with golden items are attributed by `attribute`; a question without any
    (unanswerable) fails only when its outcome is an answer rather than a decline. The
    ranks are those of the first chunk satisfying any golden item (NA when absent).
    """
    outcomes = outcomes or {}
    rows = []
    for query in queries:
        outcome = outcomes.get(query.id)
        first, top = list(first_stage.get(query.id, ())), list(reranked.get(query.id, ()))
        if query.id in judgments:
            items = judgments[query.id]
            found = attribute(items, coverage.get(query.id, [1.0] * len(items)), first, top,
                              outcome, k)
            relevant = frozenset().union(*items)
        else:
            found = (("generation", "answered a question the corpus does not answer")
                     if outcome is not None and not outcome.declined else None)
            relevant = frozenset()
        if found is None:
            continue
        rows.append({"query": query.id, "kind": query.kind, "question": query.text,
                     "stage": found[0],
                     "reason": found[1], "first-stage rank": first_relevant_rank(first, relevant),
                     "reranked rank": first_relevant_rank(top, relevant),
                     "answer": _answer_label(outcome)})
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("first-stage rank", "reranked rank"):
        table[column] = table[column].astype("Int64")
    return table.set_index("query")


def stage_counts(table: pd.DataFrame, questions: int, of: str = "asked") -> pd.DataFrame:
    """Failing questions per stage (every stage listed, in pipeline order), with their share
    of the `questions` (in percent, the column named "% of `of`") and a total row. Name the
    questions: retrieval alone diagnoses the answerable ones only (`of="answerable"`), and
    notebook 04 showed 12 of 159 as 7.5 "% of asked" beside the same 12 as 6.9 % of the 173
    asked."""
    counts = table["stage"].value_counts().reindex(STAGES, fill_value=0)
    out = pd.DataFrame({"questions": counts, f"% of {of}": 100 * counts / questions})
    out.loc["total"] = [int(counts.sum()), 100 * counts.sum() / questions]
    out["questions"] = out["questions"].astype(int)
    return out.rename_axis("stage")
