"""Local dense embedders head to head: MiniLM (English), USE multilingual v3, and `auto`.

Run: python benchmarks/bench_embedders.py [--embedders minilm,use-multilingual,auto]
                                          [--sets shipped,cookbook]
                                          [--cookbook DIR] [--reuse-cache]

For each embedder it builds the default pipeline (structural contexts, 96-token MaxP windows,
`auto` BM25 tokens) on the shipped data (all documents; dev and test questions) and on
Anthropic's cookbook set, and prints Pass@5, Pass@20 and MRR per question kind for the
dense and hybrid modes (BM25 alone as the reference), then the cookbook means, then how
long each build took. Builds embed into a fresh temporary cache unless `--reuse-cache`, so
the times are embedding times, not cache reads.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from ragkit import IndexConfig, Pipeline, SearchConfig, load_cookbook, load_shipped
from ragkit.embed import get_embedder
from ragkit.evaluate import by_kind, judge
from ragkit.pipeline import evaluate_configs

ROOT = Path(__file__).resolve().parent.parent
MODES = ("bm25", "dense", "hybrid")
METRICS = ("Pass@5", "Pass@20", "MRR")
COOKBOOK = ROOT.parent / "shared" / "data" / "cookbook"  # beside the checkout, as tests read it


def build(data, name: str, cache: Path | bool) -> tuple[Pipeline, float]:
    start = time.perf_counter()
    embedder = get_embedder(name, cache=cache)
    pipeline = Pipeline.build(data.documents, IndexConfig(embedder=name), chunks=data.chunks,
                              progress=False, embedder=embedder)
    return pipeline, time.perf_counter() - start


def tables(pipeline: Pipeline, data) -> dict[str, pd.DataFrame]:
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    configs = {m: SearchConfig(mode=m) for m in MODES}
    return evaluate_configs(pipeline, data.queries, judgments, configs, k=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="minilm,use-multilingual")
    parser.add_argument("--cookbook", type=Path, default=COOKBOOK)
    parser.add_argument("--sets", default="shipped,cookbook", help="data sets to run")
    parser.add_argument("--reuse-cache", action="store_true")
    args = parser.parse_args()
    shipped, rows, timing = load_shipped(ROOT / "data"), [], []
    cookbook = load_cookbook(args.cookbook) if (args.cookbook / "codebase_chunks.json").is_file() \
        else None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.embedders.split(","):
            cache = True if args.reuse_cache else Path(tmp) / f"{name}.sqlite"
            for label, data in (("shipped", shipped), ("cookbook", cookbook)):
                if data is None or label not in args.sets.split(","):
                    continue
                pipeline, seconds = build(data, name, cache)
                timing.append({"embedder": name, "data": label, "chunks": len(pipeline.chunks),
                               "windows": len(pipeline.dense.vectors), "build s": seconds,
                               "windows/s": len(pipeline.dense.vectors) / seconds})
                per_mode = tables(pipeline, data)
                for metric in METRICS:
                    kinds = (by_kind(per_mode, data.queries, metric) if label == "shipped"
                             else pd.DataFrame({m: [t[metric].mean()] for m, t in per_mode.items()},
                                               index=["cookbook (all)"]))
                    for kind, row in kinds.iterrows():
                        for mode in MODES:
                            rows.append({"kind": kind, "metric": metric, "mode": mode,
                                         "embedder": name, "value": row[mode]})
    table = pd.DataFrame(rows).pivot_table(index=["kind", "mode"], columns=["metric", "embedder"],
                                           values="value", sort=False)
    if not rows:
        raise SystemExit("nothing measured (is the cookbook data set at --cookbook?)")
    counts = Counter(q.kind for q in shipped.queries if q.golden)
    print("shipped questions with golden answers per kind:", dict(sorted(counts.items())))
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.round(3).to_string())
        print()
        print(pd.DataFrame(timing).round(1).to_string(index=False))


if __name__ == "__main__":
    main()
