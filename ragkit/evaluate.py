"""Retrieval metrics: Pass@k as Anthropic's cookbook computes it, recall@k, MRR and nDCG@k.

A query's golden items are turned into *judgments* against a set of chunks: for each item,
the ids of the chunks that satisfy it.
- a golden chunk (the cookbook): every chunk whose stripped text equals that chunk's
  stripped text (the cookbook matches by text, so duplicate chunks count wherever they are);
- a golden span (the shipped data): every chunk of that document covering at least half of
  the span's characters, wherever in it the span occurs, so labels survive a change of
  chunker;
- a golden document alone (BEIR): every chunk of that document.

Pass@k = mean over queries of (items satisfied in the top k / items) × 100 — the number the
cookbook reports, and what Anthropic's article calls recall@k (failure rate = 100 − Pass@20).
recall@k, MRR and nDCG@k are the standard chunk-level measures over the union of satisfying
chunks (binary gain), as trec_eval / ir_measures compute them. Queries without golden items
(unanswerable ones) are left out of every mean.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence, Set
from numbers import Integral

import pandas as pd

from ragkit.documents import Chunk, Document, Query, RagkitError, where
from ragkit.money import dollars
from ragkit.stats import bootstrap_ci  # (also read from here: ragkit.evaluate.bootstrap_ci)

Judgments = dict[str, list[frozenset[str]]]
# Column prefixes of the RAGAS-style 0–1 scores (`ragkit.answer_metrics`), for round_metrics.
ANSWER_SCORES = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
Run = Mapping[str, Sequence[str]]  # query id -> chunk ids, best first


def _placed(chunks: list[Chunk]) -> tuple[list[Chunk], list[int], int]:
    """A document's chunks (by start), their starts and the longest's length: what
    `_span_chunks` looks chunks up by, made once per document."""
    return chunks, [c.start for c in chunks], max((c.end - c.start for c in chunks), default=0)


def _span_chunks(placed: tuple[list[Chunk], list[int], int], text: str, span: str,
                 min_cover: float) -> frozenset[str]:
    """The chunks covering `min_cover` of some occurrence of `span` in `text`, overlapping
    ones included: any of them answers (a chunk holding its second occurrence was judged not
    relevant). `placed` is the
    document's `_placed`: each occurrence looks only at chunks starting within a chunk's
    length before it (a span said 400 times in a long document took 1.6 s a question)."""
    chunks, starts, longest = placed
    need, found, start = max(1, math.ceil(len(span) * min_cover)), set(), text.find(span)
    while start >= 0:
        end = start + len(span)
        for c in chunks[bisect_left(starts, start - longest):bisect_left(starts, end)]:
            if min(c.end, end) - max(c.start, start) >= need:
                found.add(c.id)
        start = text.find(span, start + 1)  # "ABAB" in "ABABAB" is at 0 and at 2 as well
    return frozenset(found)


def _gold_error(query: Query, index: int, field: str, problem: str) -> RagkitError:
    origin = query.origin or f"query '{query.id}'"
    return RagkitError(f"{where(origin, None, f'golden[{index}].{field}')}: {problem}")


def judge(queries: Sequence[Query], documents: Sequence[Document], chunks: Sequence[Chunk],
          min_cover: float = 0.5) -> Judgments:
    """For every query with golden items, the set of chunk ids satisfying each item.

    A golden item that cannot be judged — a document not among `documents`, a span not found
    verbatim in its document, a chunk id not among `chunks` (or of another document) —
    raises `RagkitError` naming the query's origin and the field, rather than silently
    marking some other chunk relevant.
    """
    texts = {d.id: d.text for d in documents}
    by_doc: dict[str, list[Chunk]] = {}
    placed: dict[str, tuple[list[Chunk], list[int], int]] = {}  # `_placed`, once a document
    by_text: dict[str, set[str]] = {}
    by_id: dict[str, Chunk] = {}
    for chunk in sorted(chunks, key=lambda c: c.start):  # by start, for `_span_chunks`
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
        by_text.setdefault(chunk.text.strip(), set()).add(chunk.id)
        by_id[chunk.id] = chunk
    out: Judgments = {}
    for query in queries:
        items = []
        for i, gold in enumerate(query.golden):
            if gold.doc_id not in texts:
                raise _gold_error(query, i, "doc_id", f"no document '{gold.doc_id}'")
            if gold.chunk_id:
                chunk = by_id.get(gold.chunk_id)
                if chunk is None or chunk.doc_id != gold.doc_id:
                    raise _gold_error(query, i, "chunk_id", f"no chunk '{gold.chunk_id}' in "
                                                            f"document '{gold.doc_id}'")
                items.append(frozenset(by_text[chunk.text.strip()]))
            elif gold.span:
                if gold.span not in texts[gold.doc_id]:
                    raise _gold_error(query, i, "span", f"not found verbatim in "
                                                        f"'{gold.doc_id}': {gold.span[:80]!r}")
                if gold.doc_id not in placed:
                    placed[gold.doc_id] = _placed(by_doc.get(gold.doc_id, []))
                items.append(_span_chunks(placed[gold.doc_id], texts[gold.doc_id], gold.span,
                                          min_cover))
            else:
                items.append(frozenset(c.id for c in by_doc.get(gold.doc_id, [])))
        if items:
            out[query.id] = items
    return out


def pass_at_k(ranked: Sequence[str], items: list[frozenset[str]], k: int) -> float:
    """Fraction of golden items satisfied by some chunk in the top k (0–1)."""
    top = set(ranked[:k])
    return sum(1 for item in items if item & top) / len(items)


def recall_at_k(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Fraction of relevant chunks in the top k."""
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def first_relevant_rank(ranked: Sequence[str], relevant: Set[str]) -> int | None:
    """The 1-based rank of the first relevant chunk in `ranked`; None when none is retrieved."""
    for rank, ident in enumerate(ranked, start=1):
        if ident in relevant:
            return rank
    return None


def reciprocal_rank(ranked: Sequence[str], relevant: frozenset[str]) -> float:
    """1 / rank of the first relevant chunk, 0 when none is retrieved."""
    rank = first_relevant_rank(ranked, relevant)
    return 1.0 / rank if rank else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Binary-gain nDCG@k with log2 discounts (trec_eval's ndcg_cut)."""
    dcg = sum(1.0 / math.log2(rank + 1)
              for rank, ident in enumerate(ranked[:k], start=1) if ident in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(relevant)) + 1))
    return dcg / ideal if ideal else 0.0


CUTOFFS = (5, 10, 20)


def cutoffs(k: int) -> tuple[tuple[int, ...], int]:
    """The Pass@/R@ cutoffs and the nDCG cutoff that a top-k list can support.

    A metric at a cutoff above k would silently score the top k (a "Pass@20" of a top-5
    list is a Pass@5), so only the usual 5/10/20 up to k are kept, plus k itself; nDCG is
    cut at 10, or at k when k < 10. k = 20 gives today's table: 5/10/20 and nDCG@10.
    """
    return tuple(sorted({c for c in CUTOFFS if c <= k} | {k})), min(10, k)


def score_run(run: Run, judgments: Judgments, k: int) -> pd.DataFrame:
    """Per-query metrics of the top k of each ranking, at the cutoffs `cutoffs(k)` gives.

    MRR is over the top k too (a first relevant chunk at rank k + 1 scores 0).
    """
    ks, ndcg_k = cutoffs(k)
    return per_query({qid: list(ranked)[:k] for qid, ranked in run.items()}, judgments,
                     ks, ndcg_k)


def per_query(run: Run, judgments: Judgments, ks: Sequence[int] = (5, 10, 20),
              ndcg_k: int = 10) -> pd.DataFrame:
    """One row per judged query: Pass@k (×100), R@k, MRR and nDCG@k.

    Cutoffs must be positive whole numbers (a top-0 list is a mistake, not a zero score).
    """
    for cutoff in (*ks, ndcg_k):
        if isinstance(cutoff, bool) or not isinstance(cutoff, Integral) or cutoff <= 0:
            raise RagkitError(f"metric cutoff k must be a positive whole number, got {cutoff!r}")
    rows = {}
    for qid, items in judgments.items():
        ranked = list(run.get(qid, ()))
        relevant = frozenset().union(*items)
        row = {f"Pass@{k}": 100 * pass_at_k(ranked, items, k) for k in ks}
        row.update({f"R@{k}": recall_at_k(ranked, relevant, k) for k in ks})
        row["MRR"] = reciprocal_rank(ranked, relevant)
        row[f"nDCG@{ndcg_k}"] = ndcg_at_k(ranked, relevant, ndcg_k)
        rows[qid] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def round_metrics(table: pd.DataFrame) -> pd.DataFrame:
    """A metrics table rounded for display: rank measures (R@k, MRR, nDCG) and the 0–1
    answer scores (faithfulness, answer relevancy, context precision and recall) to three
    decimals, p-values (a column named "p" or ending in " p", e.g. "Holm p") to three, so
    p = 0.04 never shows as 0.0; dollars (a column with "$" in its name) as text, 3 significant
    digits as `ragkit.money.dollars` prints them ($0.00306, $0.0698, $3.84), token counts (a
    column naming "tokens") as whole numbers (a mean of 10048.4 tokens per query showed its
    tenth of a token), everything else (Pass@k, failure rates, intervals, shares in percent,
    calls) to one.

    A value that does not apply (NaN: a reduction from a first rung with no failures, a rung
    not built) shows blank, as in a spreadsheet. For showing only; the recorded and compared
    numbers stay unrounded. Columns that hold differences in one metric (named in
    `table.attrs["metric_columns"]`, the metric in `table.attrs["metric"]`, as
    `ragkit.questions.method_table` sets them) take that metric's decimals: an MRR gain of
    0.007 showed as 0.0.
    """
    of_metric = set(table.attrs.get("metric_columns", ()))
    metric = str(table.attrs.get("metric", ""))

    def decimals(column: object) -> int:
        return metric_decimals(metric if column in of_metric else str(column))

    out = table.round({column: decimals(column) for column in table.columns})
    for i, column in enumerate(out.columns):  # by position: two columns may share a name
        values = out.iloc[:, i]
        if values.dtype.kind != "f":
            continue
        if "$" in str(column):  # as `ragkit.money` prints dollars: $0.00306, not 0.0031
            shown = ["" if pd.isna(v) else dollars(v) for v in table.iloc[:, i].tolist()]
        elif values.isna().any():  # as text, so 0.710 does not show as 0.71 beside 0.714
            shown = fixed_text(values.tolist(), decimals(column))
        elif decimals(column) == 0:  # whole numbers: 10048, not 10048.0
            out.isetitem(i, values.astype("int64"))
            continue
        else:
            continue
        out.isetitem(i, pd.Series(shown, index=out.index, dtype=object))
    return out


def fixed_text(values: Iterable[float], places: int) -> list[str]:
    """`values` as text with `places` decimals each, NaN (or None) blank."""
    return ["" if pd.isna(v) else f"{v:.{places}f}" for v in values]


def metric_decimals(column: str) -> int:
    """The decimals `round_metrics` shows a column with: 3 for p-values and rank measures
    (R@k, MRR, nDCG, answer scores, also as a sweep's "hybrid MRR"), 0 for token counts (a
    column naming "tokens", not a share of them in % nor a price of them in $: "cached $/M
    doc tokens" is dollars), else 1."""
    if column == "p" or column.endswith(" p"):
        return 3
    if ("tokens" in column.replace("_", " ").split() and "%" not in column
            and "$" not in column):
        return 0
    metric = column.rsplit(" ", 1)[-1]
    rank = ("R@", "MRR", "nDCG", *ANSWER_SCORES)
    return 3 if column.startswith(rank) or metric.startswith(rank) else 1


def summarize(table: pd.DataFrame) -> pd.Series:
    """Mean of each metric over queries, plus the failure rate 100 − Pass@20 when present."""
    summary = table.mean(numeric_only=True)
    if "Pass@20" in summary:
        summary["Fail@20"] = 100 - summary["Pass@20"]
    return summary


def summary_table(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row of means per named per-query table (e.g. per retrieval method)."""
    return pd.DataFrame({name: summarize(table) for name, table in tables.items()}).T


def by_kind(tables: Mapping[str, pd.DataFrame], queries: Sequence[Query],
            metric: str = "Pass@20") -> pd.DataFrame:
    """Mean `metric` per query kind (rows) and method (columns), with a query count."""
    check_metric_column(tables, metric)
    kinds = pd.Series({q.id: q.kind or "-" for q in queries}, name="kind")
    out = pd.DataFrame({name: table[metric].groupby(kinds.reindex(table.index)).mean()
                        for name, table in tables.items()})
    out.insert(0, "queries", next(iter(tables.values())).index.map(kinds).value_counts())
    return out


def check_metric_column(tables: Mapping[str, pd.DataFrame], metric: str) -> None:
    """Refuse a `metric` a table was not scored with, naming the ones it was: tables scored
    with k = 10 have no "Pass@20" (the default here), and that was a bare KeyError."""
    for name, table in tables.items():
        if metric not in table.columns:
            raise RagkitError(f"no {metric} in the scores of {name!r} (scored: "
                              f"{', '.join(map(str, table.columns))}); give metric=one of "
                              f"them, or score with a deeper k")


def confidence_table(tables: Mapping[str, pd.DataFrame], metric: str = "Pass@20",
                     n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Mean `metric` per method with a seeded 95 % bootstrap interval over questions."""
    check_metric_column(tables, metric)
    rows = {}
    for name, table in tables.items():
        if not table[metric].notna().any():
            raise RagkitError(f"no {metric} score in {name!r} to bootstrap (no question "
                              f"scored)")
        low, high = bootstrap_ci(table[metric], n=n, seed=seed)
        rows[name] = {metric: table[metric].mean(), "95% low": low, "95% high": high}
    return pd.DataFrame(rows).T
