"""How many candidates to rerank: quality, latency and projected API cost per depth N.

What it is: `sweep_candidates(pipeline, queries, judgments, depths)` reranks the first
stage's top N for each N (Anthropic's Contextual Retrieval article reranks the top 150; 20 is
the cheap end) and returns one row per N — Pass@5/10/20 and MRR of the reranked top k, the p50
/ p95 milliseconds per query of the whole search (`ragkit.rerank_timing.timed_run`), and, as a
labelled projection, what a Claude listwise reranker (`ragkit.rerank.claude`, RankGPT windows
of 20 moved by 10) would cost per query at N: calls, estimated tokens and dollars at the
model's list price — with the per-query metric tables (for paired tests between depths) and the
raw times.

What it is not: a measured bill. The offline reranker makes no API call at any N; the cost
columns are estimates (one token per 4 UTF-8 bytes) of the listwise requests for the same
candidates, there to show how an API reranker's price grows with N.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ragkit.documents import Query
from ragkit.evaluate import Judgments, score_run, summarize
from ragkit.pipeline import Pipeline, SearchConfig
from ragkit.pricing import cost
from ragkit.rerank_timing import timed_run

PROJECTED_MODEL = "claude-haiku-4-5"


@dataclass(frozen=True)
class CandidateSweep:
    """What `sweep_candidates` measured: one row per depth N, and by N the per-query metric
    tables and the milliseconds of each query's search."""

    table: pd.DataFrame
    per_query: dict[int, pd.DataFrame]
    times: dict[int, list[float]]


def listwise_projection(pipeline: Pipeline, queries: Sequence[Query], depth: int,
                        model: str = PROJECTED_MODEL,
                        base: SearchConfig = SearchConfig()) -> dict[str, float]:
    """Mean calls, estimated input / output tokens and projected dollars per query of a
    Claude listwise reranker over the first stage's top `depth`."""
    from ragkit.rerank.claude import ClaudeReranker, projected_usage  # deferred: Anthropic SDK
    reranker = ClaudeReranker(model=model, llm=object())  # never called: requests only
    found = pipeline.candidates([q.text for q in queries], replace(base, rerank_candidates=depth))
    rows = [projected_usage(reranker, q.text, c[:depth]) for q, c in zip(queries, found)]
    return {"listwise calls": float(np.mean([calls for calls, _ in rows])),
            "listwise input tokens (est.)": float(np.mean([u.input for _, u in rows])),
            "listwise output tokens (est.)": float(np.mean([u.output for _, u in rows])),
            "listwise $ / query (projected)": float(np.mean([cost(u, model) for _, u in rows]))}


def sweep_candidates(pipeline: Pipeline, queries: Sequence[Query], judgments: Judgments,
                     depths: Sequence[int] = (20, 50, 100, 150), k: int = 20,
                     reranker: str = "offline", model: str = PROJECTED_MODEL,
                     base: SearchConfig = SearchConfig()) -> CandidateSweep:
    """Rerank the top N for each N in `depths`, over the judged `queries` (module docstring)."""
    judged = [q for q in queries if q.id in judgments]
    rows, tables, times = {}, {}, {}
    for depth in depths:
        config = replace(base, rerank=reranker, rerank_candidates=depth)
        run, times[depth] = timed_run(pipeline, judged, k, config)
        tables[depth] = score_run(run, judgments, k)
        means = summarize(tables[depth])
        rows[depth] = {**{m: float(v) for m, v in means.items()  # Pass@ up to k, as scored
                          if m.startswith("Pass@") or m == "MRR"},
                       "p50 ms": float(np.percentile(times[depth], 50)),
                       "p95 ms": float(np.percentile(times[depth], 95)),
                       **listwise_projection(pipeline, judged, depth, model, base)}
    table = pd.DataFrame(rows).T.rename_axis("rerank candidates N")
    return CandidateSweep(table, tables, times)
