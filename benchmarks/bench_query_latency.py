"""Query embedding latency and passage throughput: e5-small (the default) against MiniLM.

Run: python benchmarks/bench_query_latency.py [--repeat 3]

A search embeds its question once (then the embedding cache answers), so the question's
latency is what a user waits for: each golden question of the shipped data (and of the
cookbook set when present) is embedded alone, uncached, by the bare embedder (`cache=False`),
and p50 / p95 are printed per model with the ratio to MiniLM measured in the same run
(interleaved, best of `--repeat` per question). Then the passages: the shipped corpus's
96-token windows with structural context, texts per second on every core.
Target (README): e5-small query p50 ≤ 25 ms on the 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from ragkit import IndexConfig, load_cookbook, load_shipped
from ragkit.dense import window_texts
from ragkit.embed import get_embedder
from ragkit.pipeline import Pipeline

ROOT = Path(__file__).resolve().parent.parent
COOKBOOK = ROOT.parent / "shared" / "data" / "cookbook"
MODELS = ("minilm", "e5-small")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--windows", type=int, default=600, help="passages timed per model")
    args = parser.parse_args()
    questions = [q.text for q in load_shipped(ROOT / "data").queries]
    if (COOKBOOK / "evaluation_set.jsonl").is_file():
        questions += [q.text for q in load_cookbook(COOKBOOK).queries]
    models = {name: get_embedder(name, cache=False) for name in MODELS}
    for model in models.values():  # load weights and warm up
        model.embed(questions[:4], input_type="query")
    best = {name: np.full(len(questions), np.inf) for name in MODELS}
    for _ in range(args.repeat):
        for i, text in enumerate(questions):
            for name, model in models.items():
                start = time.perf_counter()
                model.embed([text], input_type="query")
                best[name][i] = min(best[name][i], time.perf_counter() - start)
    print(f"{len(questions)} questions, each alone, best of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.1f}")
    base = np.median(best["minilm"])
    for name, times in best.items():
        p50, p95 = np.median(times) * 1000, np.quantile(times, 0.95) * 1000
        print(f"  {name:9} query p50 {p50:5.1f} ms  p95 {p95:5.1f} ms  "
              f"({np.median(times) / base:.2f}× MiniLM)")
    data = load_shipped(ROOT / "data")
    chunks = Pipeline.build(data.documents, IndexConfig(embedder=None), progress=False).chunks
    texts, _ = window_texts(models["minilm"], chunks, 96)
    texts = texts[:args.windows]
    rate = {}
    for name, model in models.items():
        start = time.perf_counter()
        model.embed(texts, input_type="document", progress=False)
        rate[name] = len(texts) / (time.perf_counter() - start)
    print(f"{len(texts)} passages (96-token windows with structural context), every core:")
    for name, r in rate.items():
        print(f"  {name:9} {r:6.1f} passages/s  ({rate['minilm'] / r:.2f}× MiniLM's time)")


if __name__ == "__main__":
    main()
