"""How long a search takes, with and without a reranker: per-query latency and its quantiles.

What it is: `timed_run(pipeline, queries, k, config)` searches one query at a time (as a
service would) and returns the run with each query's wall-clock milliseconds;
`rerank_step_times` times the rerank step alone (features + model) on candidates fetched
beforehand; `latency_table` turns named lists of times into p50 / p95 / mean per row
(`ragkit.rerank_sweep` sets them beside quality for several rerank depths);
`latency_sentence` says what such a table shows, from its numbers.
Time is `time.perf_counter`, and the first query of a run is preceded by one untimed
warm-up search, so loading the model and embedding caches is not counted.

What it is not: a benchmark harness — times vary with the machine and its load
(`benchmarks/bench_rerank.py` checks this project's latency goal); the numbers are for
comparing configurations measured in the same process, minutes apart.
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




def latency_sentence(table: pd.DataFrame, plain: str, step: str, reranked: Mapping[int, str],
                     candidates: int) -> str:
    """What `table` (`latency_table`) shows, in two sentences: the median of the plain search
    (row `plain`), of the rerank step over `candidates` (row `step`) and of the reranked
    search over as many (`reranked`: candidates → row); then the reranked search's median at
    each depth, and whether it rises with every deeper list as the printed numbers (0.1 ms)
    say.

    Not assumed: one run's medians move with the machine's load as much as with the depth,
    and notebook 04 once said "the reranked search takes longer the more candidates it
    scores" under medians of 6.9, 11.2, 9.4 and 9.3 ms at 20, 50, 100 and 150 candidates."""
    p50, depths = table["p50 ms"], sorted(reranked)
    medians = [round(float(p50[reranked[n]]), 1) for n in depths]
    text = (f"In this run, hybrid search took {p50[plain]:.1f} ms per query at the median, the "
            f"rerank step over {candidates} candidates {p50[step]:.1f} ms, and the whole "
            f"reranked search {p50[reranked[candidates]]:.1f} ms (p95 at most "
            f"{table['p95 ms'].max():.1f} ms).")
    if len(depths) < 2:
        return text
    each = [f"{m:.1f} {'ms ' if i == 0 else ''}with {n}"
            for i, (n, m) in enumerate(zip(depths, medians))]
    rising = all(a < b for a, b in zip(medians, medians[1:]))
    return (f"{text} Its median by the candidates it reranks: {', '.join(each[:-1])} and "
            f"{each[-1]}: " + ("longer with each deeper list." if rising else
                               "not steadily longer with a deeper list: between these depths "
                               "the machine's load moves one run's medians more than the "
                               "extra candidates do."))
