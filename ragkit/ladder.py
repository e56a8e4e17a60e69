"""The ladder of Anthropic's Contextual Retrieval article: contextual retrieval one rung at a
time, measured as Fail@20.

Anthropic's "Introducing Contextual Retrieval" (2024) reports the failure rate of top-20
retrieval (1 − recall@20) falling rung by rung: embeddings alone 5.7 % → + contextual
embeddings 3.7 % (−35 %) → + contextual BM25 2.9 % (−49 %) → + reranking the top 150 down
to 20 1.9 % (−67 %). `ladder()` rebuilds those rungs on any data set with ragkit's own
parts — two indexes (chunks without and with context), searched dense, then hybrid, then
hybrid + rerank — and `ladder_table()` sets each rung's Fail@20 and its relative reduction
beside the article's (with `counts=True` also the questions each rung fails, and
`ladder_note` says when the first rung fails too few for its reduction to read as a rate);
`ladder_cut` words the fall from the first rung to another.

What it is not: a reproduction of the article's numbers (other corpus, other models); the
*shape* — does each rung lower the failure rate, and by how much — is what compares.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragkit.config import DEFAULT_EMBEDDER
from ragkit.documents import Dataset, Query
from ragkit.evaluate import judge, score_run, summarize
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.text_stats import fewer_failures, too_few_failures

# The article's Fail@20 per rung (percent), in ladder order.
ARTICLE_FAIL20 = (5.7, 3.7, 2.9, 1.9)
FAILED = "failed questions"  # `ladder_table(counts=True)`'s count beside Fail@20


@dataclass(frozen=True)
class Rung:
    """One step: a name, whether chunks carry context, and how to search (None: not built)."""

    name: str
    context: bool
    search: SearchConfig | None


def default_rungs(rerank: str | None = None) -> tuple[Rung, ...]:
    """The article's four rungs; the rerank rung is searched only when `rerank` names one."""
    reranked = SearchConfig(mode="hybrid", rerank=rerank) if rerank else None
    return (Rung("baseline embeddings", False, SearchConfig(mode="dense")),
            Rung("+ contextual embeddings", True, SearchConfig(mode="dense")),
            Rung("+ contextual BM25 (hybrid)", True, SearchConfig(mode="hybrid")),
            Rung("+ rerank (top 150 → 20)", True, reranked))


def build_indexes(data: Dataset, contextualizer: str = "structural",
                  embedder: str = "minilm", progress: bool = False,
                  **index_options) -> dict[bool, Pipeline]:
    """The two indexes the ladder searches: {False: bare chunks, True: contextualized}."""
    out = {}
    for context in (False, True):
        config = IndexConfig(contextualizer=contextualizer if context else "none",
                             embedder=embedder, **index_options)
        out[context] = Pipeline.build(data.documents, config, chunks=data.chunks,
                                      progress=progress)
    return out


def ladder(data: Dataset, queries: Sequence[Query], indexes: dict[bool, Pipeline],
           rungs: Sequence[Rung] | None = None, k: int = 20) -> dict[str, pd.DataFrame]:
    """Per-query metric tables, one per rung that is built (same judged queries for all)."""
    rungs = default_rungs() if rungs is None else rungs
    judgments = judge(queries, data.documents, indexes[False].chunks)
    judged = [q for q in queries if q.id in judgments]
    tables = {}
    for rung in rungs:
        if rung.search is not None:
            run = indexes[rung.context].run(judged, k, rung.search)
            tables[rung.name] = score_run(run, judgments, k)
    return tables


def ladder_table(tables: dict[str, pd.DataFrame],
                 rungs: Sequence[Rung] | None = None, counts: bool = False) -> pd.DataFrame:
    """Pass@5, Pass@20, Fail@20 and its reduction from the first rung (in percent), per
    rung, beside the article's.

    A rung without a table (not built) keeps its row with empty measured cells, so the
    reader sees the whole ladder. With `counts`, a column `FAILED` beside Fail@20 counts the
    questions each rung fails (a golden passage outside its top 20), and `attrs["questions"]`
    holds how many were asked: on a folder of 42 questions "-200.0 %" was 1 failed question
    become 3, which only the counts show (`ladder_note` says so in words).
    """
    rungs = default_rungs() if rungs is None else rungs
    rows, failed = {}, {}
    base = None
    for rung, article in zip(rungs, ARTICLE_FAIL20):
        row = {"Pass@5": np.nan, "Pass@20": np.nan, "Fail@20": np.nan}
        if rung.name in tables:
            summary = summarize(tables[rung.name])
            row = {key: float(summary[key]) for key in row}
            failed[rung.name] = int((tables[rung.name]["Pass@20"] < 100).sum())
        base = row["Fail@20"] if base is None else base
        row["reduction %"] = 100 * (1 - row["Fail@20"] / base) if base else np.nan
        row["article Fail@20"] = article
        row["article reduction %"] = 100 * (1 - article / ARTICLE_FAIL20[0])
        rows[rung.name] = row
    table = pd.DataFrame(rows).T
    if counts:
        table.insert(3, FAILED, pd.array([failed.get(r) for r in table.index], dtype="Int64"))
        table.attrs["questions"] = len(next(iter(tables.values()))) if tables else 0
    return table


def ladder_note(table: pd.DataFrame) -> str:
    """Two sentences on a `ladder_table(..., counts=True)`: how many of its questions each
    rung fails, and whether the first rung fails enough of them for the reduction column to
    read as a rate (`ragkit.text_stats.too_few_failures`) — one failed question become three
    is a "reduction" of -200 %, a figure that says more about the one question than the
    method. Numbers from the table, so the sentence holds on any folder."""
    built = table[FAILED].dropna()
    if built.empty:
        return "No rung of the ladder was built, so no question was scored."
    asked = table.attrs.get("questions", 0)
    listed = " → ".join(str(int(n)) for n in built)
    first = int(built.iloc[0])
    few = too_few_failures(first)
    # one whole question is 100 / asked points of Fail@20, the measure the reduction is of
    # (it was 100 / first, a change of the count: 5.6 % where the column moves 6.5 %)
    fail = float(table["Fail@20"].dropna().iloc[0])
    moves = 100 * (100 / asked) / fail if asked and fail else 100 / max(first, 1)
    share = 100 * first / asked if asked else fail
    # a question of two golden passages with one found is half a failure to Fail@20, a whole
    # one to the count: "25.6 (11 failed)" of 39 questions read as a sum gone wrong
    halves = (f" A question counts as failed when any of its golden passages is outside the "
              f"top 20; Fail@20 counts the share of its passages missed, so the first rung's "
              f"{fail:.1f} is not {first} of {asked} ({share:.1f} %)."
              if f"{share:.1f}" != f"{fail:.1f}" else "")
    return (f"Failed questions per rung, of the {asked}: {listed} (the table's order). "
            + (f"Here {few}; read the counts, not the reduction column." if few else
               f"The first rung fails {first}, so one question more or less moves the "
               f"reduction by about {moves:.1f} %: the reduction column reads as a rate.")
            + halves)


def ladder_cut(table: pd.DataFrame, rung: str) -> str:
    """Fail@20 from a `ladder_table`'s first rung to `rung`, in words: "Fail@20 25.0 → 2.8,
    89 % fewer failures", and, when a rung between them raised it, which and to what:
    "(+ contextual embeddings alone raised it to 26.9)" — on a folder whose context hurt
    dense search, "context and BM25 cut the failure rate 23.1 → 11.9" credited the context
    with what BM25 did. Numbers from the table, so the words hold on any data."""
    fails = table["Fail@20"]
    before, after = float(fails.iloc[0]), float(fails.loc[rung])
    said = f"Fail@20 {before:.1f} → {after:.1f}"
    if before > 0:
        said += f", {fewer_failures(table.loc[rung, 'reduction %'])}"
    between = list(table.index[1:list(table.index).index(rung)])
    raised = [(name, float(fails.loc[name])) for name in between if fails.loc[name] > before]
    if raised:
        said += " (" + "; ".join(f"{name} alone raised it to {value:.1f}"
                                 for name, value in raised) + ")"
    return said


def context_routes(embedder: str = DEFAULT_EMBEDDER, online_voyage: bool = False,
                   claude: bool = True) -> dict[str, IndexConfig]:
    """The ways to give a chunk its document's context, as index configs to compare:
    none, structural (offline), claude (Claude with a key; the offline stand-in without
    one) unless `claude` is False, and — with `online_voyage` — voyage-context-3's
    contextualized embeddings (bare chunks, each embedded with its whole document).

    Why `claude` can be left out: each route is a whole index, and offline the stand-in's
    contexts (structural context from the text alone) cost a full embedding pass of the
    corpus (~3,300 e5-small windows of the shipped data, a good part of a cold cookbook run)
    to measure a program, not Claude.
    """
    names = ("none", "structural", "claude") if claude else ("none", "structural")
    routes = {name: IndexConfig(contextualizer=name, embedder=embedder) for name in names}
    if online_voyage:
        routes["voyage-context-3"] = IndexConfig(contextualizer="none",
                                                 embedder="voyage-context:voyage-context-3")
    return routes


def compare_routes(data: Dataset, queries: Sequence[Query], routes: dict[str, IndexConfig],
                   search: SearchConfig | None = None, k: int = 20,
                   built: Sequence[Pipeline] = ()) -> pd.DataFrame:
    """One row of mean metrics per route: each index built and searched the same way.

    `built`: indexes already made (e.g. the ladder's two); a route whose config equals one's
    is searched there instead of being built again.
    """
    search = search or SearchConfig()
    rows = {}
    for name, config in routes.items():
        pipeline = next((p for p in built if p.config == config), None) or Pipeline.build(
            data.documents, config, chunks=data.chunks, progress=False)
        judgments = judge(queries, data.documents, pipeline.chunks)
        judged = [q for q in queries if q.id in judgments]
        rows[name] = summarize(score_run(pipeline.run(judged, k, search), judgments, k))
    return pd.DataFrame(rows).T
