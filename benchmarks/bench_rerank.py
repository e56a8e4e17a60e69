"""Rerankers on Anthropic's cookbook set and the shipped test split: quality and latency.

Run: python benchmarks/bench_rerank.py [path/to/cookbook] — builds the default index of each
data set (structural context + MiniLM; minutes with a cold embedding cache), then per query,
one at a time:
- latency p50/p95 of the whole search without reranking (the reference) and with each
  offline reranker at 150 candidates, and of the rerank step alone (features + model) —
  warm, and cold: every candidate's second-view windows new, embedded by USE on first sight
  into an empty embedding cache (`ragkit.rerank.second_view`; the first `COLD` queries);
- Pass@5/10/20 and MRR with and without reranking, and a seeded 95 % bootstrap interval of
  Pass@5 and Pass@20 over questions (`ragkit.evaluate.confidence_table`).
Exits 1 if, on the cookbook, the default stack misses Pass@5 ≥ 87 or Pass@20 ≥ 94, the
reranker adds under 3 points of Pass@5, or its p50 exceeds 50 ms. API rerankers (claude,
voyage) answer through stand-ins offline, so their times are not measured here.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import ragkit
from ragkit.evaluate import confidence_table, judge, per_query, summarize
from ragkit.pipeline import SearchConfig

RERANKERS = ("none", "offline")
DEPTH = 150
COLD = 40


def _timed(fn, *args) -> tuple[object, float]:
    start = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - start) * 1000


def cold_times(pipeline, judged) -> list[float]:
    """The offline rerank step of the first `COLD` questions with the second view starting
    empty: a fresh `SecondView` on an empty embedding cache (a new index's first queries)."""
    from ragkit.embed import CachedEmbedder
    from ragkit.embed.use_multilingual import USEMultilingual
    from ragkit.rerank.second_view import SecondView
    stage = pipeline.rerank_stage("offline")
    features = stage.reranker.index_features
    config = SearchConfig(rerank="offline", rerank_candidates=DEPTH)
    found = pipeline.candidates([q.text for q in judged[:COLD]], config, 20)
    warm, model = features.second_view, USEMultilingual()
    with tempfile.TemporaryDirectory() as tmp:
        features.second_view = SecondView(pipeline, CachedEmbedder(model, Path(tmp) / "e.db"))
        try:
            return [_timed(stage, q.text, c, 20)[1] for q, c in zip(judged, found)]
        finally:
            features.second_view = warm


def measure(name: str, data) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Metrics, confidence intervals and latencies (ms per query) of each reranker."""
    pipeline = ragkit.Pipeline.build(data.documents, ragkit.IndexConfig(), chunks=data.chunks,
                                     progress=False)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    pipeline.search([q.text for q in judged], 20)  # warm: query vectors into the cache
    tables, latency = {}, {}
    for reranker in RERANKERS:
        config = SearchConfig(rerank=reranker, rerank_candidates=DEPTH)
        run, times = {}, []
        for query in judged:
            (ranking,), ms = _timed(pipeline.search, [query.text], 20, config)
            run[query.id] = [ident for ident, _ in ranking]
            times.append(ms)
        tables[reranker] = per_query(run, judgments)
        latency[f"search, rerank {reranker}"] = times
        if reranker != "none":
            stage = pipeline.rerank_stage(reranker)
            found = pipeline.candidates([q.text for q in judged], config, 20)
            latency[f"rerank step {reranker}"] = [_timed(stage, q.text, c, 20)[1]
                                                 for q, c in zip(judged, found)]
    latency["rerank step cold"] = cold_times(pipeline, judged)
    summary = pd.DataFrame({r: summarize(t) for r, t in tables.items()}).T
    summary = summary[["Pass@5", "Pass@10", "Pass@20", "MRR"]]
    ci = pd.concat([confidence_table(tables, m).rename(
        columns={"95% low": f"{m} 95% low", "95% high": f"{m} 95% high"})
        for m in ("Pass@5", "Pass@20")], axis=1)
    print(f"\n{name}: {len(judged)} questions, {len(pipeline.chunks)} chunks, "
          f"{DEPTH} candidates")
    print(summary.round(3).to_string())
    print(ci.round(1).to_string())
    for label, times in latency.items():
        print(f"{label:>24}: p50 {np.percentile(times, 50):6.1f} ms, "
              f"p95 {np.percentile(times, 95):6.1f} ms")
    return summary, ci, latency


def main(root: Path) -> int:
    shipped = ragkit.load_shipped(Path(__file__).resolve().parent.parent / "data")
    measure("shipped test split", shipped.split("test"))
    if not (root / "codebase_chunks.json").is_file():
        print(f"cookbook data not found at {root}; targets not checked")
        return 0
    summary, _, latency = measure("cookbook", ragkit.load_cookbook(root))
    best, base = summary.loc["offline"], summary.loc["none"]
    p50 = float(np.percentile(latency["rerank step offline"], 50))
    checks = {"Pass@5 ≥ 87": best["Pass@5"] >= 87, "Pass@20 ≥ 94": best["Pass@20"] >= 94,
              "+3 Pass@5 over no rerank": best["Pass@5"] - base["Pass@5"] >= 3,
              "rerank p50 ≤ 50 ms": p50 <= 50}
    for label, ok in checks.items():
        print(f"target {label}: {'met' if ok else 'MISSED'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cookbook"
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else default))
