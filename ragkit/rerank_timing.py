"""How long a search takes, with and without a reranker: per-query latency and its quantiles.

What it is: `timed_run(pipeline, queries, k, config)` searches one query at a time (as a
service would) and returns the run with each query's wall-clock milliseconds;
`rerank_step_times` times the rerank step alone (features + model) on candidates fetched
beforehand; `latency_table` turns named lists of times into p50 / p95 / mean per row
(`ragkit.rerank_sweep` sets them beside quality for several rerank depths).
Time is `time.perf_counter`, and the first query of a run is preceded by one untimed
warm-up search, so loading the model and embedding caches is not counted.

What it is not: a benchmark harness — times vary with the machine and its load
(`benchmarks/bench_rerank.py` checks the targets); the numbers are for comparing
configurations measured in the same process, minutes apart.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ragkit.documents import Query
from ragkit.pipeline import Pipeline, SearchConfig


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def timed_run(pipeline: Pipeline, queries: Sequence[Query], k: int,
              config: SearchConfig = SearchConfig()) -> tuple[dict[str, list[str]], list[float]]:
    """The run (query id → ranked chunk ids) and the milliseconds of each query's search,
    queries searched one at a time after one untimed warm-up search."""
    if queries:
        pipeline.search([queries[0].text], k, config)
    run, times = {}, []
    for query in queries:
        start = time.perf_counter()
        (ranking,) = pipeline.search([query.text], k, config)
        times.append(_ms_since(start))
        run[query.id] = [ident for ident, _ in ranking]
    return run, times


def rerank_step_times(pipeline: Pipeline, queries: Sequence[Query], k: int,
                      config: SearchConfig) -> list[float]:
    """Milliseconds of the rerank step alone per query: the candidates are fetched first."""
    stage = pipeline.rerank_stage(config.rerank)
    found = pipeline.candidates([q.text for q in queries], config, k)
    times = []
    for query, candidates in zip(queries, found):
        start = time.perf_counter()
        stage(query.text, candidates, k)
        times.append(_ms_since(start))
    return times


def latency_table(times: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """Per name: queries timed, p50, p95 and mean milliseconds."""
    return pd.DataFrame({name: {"queries": len(t), "p50 ms": float(np.percentile(t, 50)),
                                "p95 ms": float(np.percentile(t, 95)),
                                "mean ms": float(np.mean(t))}
                         for name, t in times.items()}).T.astype({"queries": int})

