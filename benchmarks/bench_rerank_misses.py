"""What does the offline reranker still miss on the cookbook set, and would fitting it there help?

Run: python benchmarks/bench_rerank_features.py --save feats.pkl [--no-use]
     python benchmarks/bench_rerank_misses.py feats.pkl

Two diagnostics of the shipped reranker (`ragkit.rerank.offline`, fitted on the shipped dev
split); neither is a model ragkit ships or could ship:
- **the misses**: every cookbook question whose golden chunks are not all in the reranked
  top 5, by where its best golden chunk landed (6–10, 11–20, 21–150, not among the 150
  candidates), and how many are *deictic* — questions that point at "this code", "this
  file", "the provided classes", "the tests" and name no identifier, which the cookbook's
  per-file question generation produced and which no retriever can resolve among nine code
  bases;
- **refitted on the cookbook**: each feature set's linear ranker fitted by 5-fold
  cross-validation on the cookbook's *own* questions (seeded folds), beside the dev fit.
  Not an upper bound — the pairwise loss is not Pass@5, and 50-question folds are noisy —
  but if the cookbook's own labels do not beat the dev fit, the shortfall lies in the
  features, not in where the weights were fitted.
"""
from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import numpy as np

from bench_rerank_features import (SETS, cross_validated, fit_linear, matrix, metrics,
                                   query_identifiers, rank)

DEICTIC = re.compile(r"\b(?:this|these|the)\s+(?:provided\s+)?(?:code|file|example|tests|"
                     r"classes|program|snippet)\b", re.I)
BANDS = ((6, 10), (11, 20), (21, 150))


def is_deictic(question: str) -> bool:
    """Whether the question points at "this code" (or the file, example, tests, provided
    classes, …) and names no identifier that would say which."""
    return bool(DEICTIC.search(question)) and not query_identifiers(question)


def misses(rows, judgments, questions: dict[str, str], score) -> None:
    """Print the shipped reranker's cookbook misses at 5 by rank band and by deixis."""
    per_query, ranks = {}, {}
    for row in rows:
        # stable: ties stay in first-stage order, as `rank` keeps them
        order = np.argsort(-score(matrix(row, SETS["shipped"])), kind="stable")
        top5 = {row[2][i] for i in order[:5]}
        items = judgments[row[0]]
        per_query[row[0]] = sum(bool(item & top5) for item in items) / len(items)
        golden = set(np.flatnonzero(row[4]).tolist())  # best-placed golden candidate, 1-based
        ranks[row[0]] = next((n for n, i in enumerate(order, start=1) if i in golden), None)
    missed = [r for r in rows if per_query[r[0]] < 1]
    deictic = {q for q, text in questions.items() if is_deictic(text)}
    print(f"cookbook: {len(missed)} of {len(rows)} questions miss a golden chunk at 5 "
          f"(Pass@5 {100 * np.mean(list(per_query.values())):.1f})")
    best = [ranks[r[0]] for r in missed]
    print(f"  a golden chunk in the top 5, another not: "
          f"{sum(x is not None and x <= 5 for x in best)}")
    for lo, hi in BANDS:
        band = sum(x is not None and lo <= x <= hi for x in best)
        print(f"  best golden chunk at rank {lo}–{hi}: {band}")
    print(f"  no golden chunk among the candidates: {sum(x is None for x in best)}")
    share = {q: per_query[q] for q in per_query if q in deictic}
    rest = [v for q, v in per_query.items() if q not in deictic]
    print(f"  deictic questions: {len(share)} of {len(rows)} (Pass@5 "
          f"{100 * np.mean(list(share.values())):.1f}), {sum(r[0] in deictic for r in missed)} "
          f"of the misses; the others' Pass@5 {100 * np.mean(rest):.1f}")


def refitted(rows, judgments, dev) -> None:
    """Print each feature set's cookbook numbers fitted on dev (as shipped) and fitted on
    the cookbook's own folds."""
    ids = [r[0] for r in rows]
    shuffled = np.random.default_rng(0).permutation(ids)
    folds = [set(shuffled[i::5]) for i in range(5)]
    have = set(rows[0][3])
    print("\ncookbook Pass@5 / Pass@10 / Pass@20 / MRR: fitted on dev | on the cookbook's folds")
    for name, names in SETS.items():
        if not set(names) <= have:
            continue
        on_dev = metrics(rank(rows, names, fit_linear(dev, names)), judgments)
        on_own = metrics(cross_validated(rows, names, "linear", folds), judgments)
        print(f"{name:<30} " + " | ".join(
            f"{a:5.1f} {b:5.1f} {c:5.1f} {d:.3f}" for a, b, c, d in (on_dev, on_own)), flush=True)


def main(path: Path) -> int:
    sets = pickle.loads(path.read_bytes())
    rows, judgments = sets["cookbook"]
    dev = sets["dev"][0]
    import ragkit
    root = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cookbook"
    questions = {q.id: q.text for q in ragkit.load_cookbook(root).queries}
    misses(rows, judgments, questions, fit_linear(dev, SETS["shipped"]))
    refitted(rows, judgments, dev)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    sys.exit(main(Path(sys.argv[1])))
