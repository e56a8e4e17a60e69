"""Can a synthetic golden set pick the method? The shipped human-written test split and a
generated set rank ten retrieval configurations; Kendall's tau between the two orderings.

Run: python benchmarks/bench_synthetic_trust.py [--n 100] [--seed 0] [--metric MRR]
- human: the answerable questions of data/golden's test split;
- synthetic: `ragkit.questions.generate(corpus, n, seed=seed)` with the default kinds and
  filters — offline (no ANTHROPIC_API_KEY) the stand-in's template questions, so the number
  shows the path and how far template questions get, not Claude's quality; with a key,
  Claude writes them (cost projected and measured, printed);
- configurations: `ragkit.questions.trust.default_configs()` (BM25, dense, three hybrid
  fusions, the offline reranker; structural context on and off), all at the index defaults
  (512/64 chunks, e5-small);
- per configuration each set's mean metric and rank, tau-b with a 95 % percentile bootstrap
  interval over questions (1,000 resamples, seeded), and the pairs the sets order
  differently. Minutes with a cold embedding cache, about one warm.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    import ragkit
    from ragkit.questions import as_queries, compare_sets, generate
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="synthetic questions to write")
    parser.add_argument("--seed", type=int, default=0, help="seed of the chunk sample")
    parser.add_argument("--metric", default="MRR", help="per-question metric to rank by")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data = ragkit.load_shipped(ROOT / "data")
    human = [q for q in data.queries if q.split == "test" and q.golden]
    records, report = generate(data.documents, n=args.n, seed=args.seed,
                               log=lambda line: print(line, file=sys.stderr))
    synthetic = [q for q in as_queries(records) if q.golden]
    print(report.table())
    print("\n".join(report.cost_lines()))
    result = compare_sets(data.documents, human, synthetic, metric=args.metric)
    pd.set_option("display.width", 120)
    print(f"\n{args.metric} per configuration: {result.questions[0]} human test questions, "
          f"{result.questions[1]} synthetic ({report.generator})")
    print(result.table.round(3).to_string())
    low, high = result.interval
    print(f"\nKendall's tau-b of the two orderings: {result.tau:.3f} "
          f"(95 % bootstrap over questions: {low:.3f} … {high:.3f})")
    if len(result.disagreements):
        print("pairs ordered differently (a − b by each set):")
        print(result.disagreements.round(3).to_string(index=False))
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
