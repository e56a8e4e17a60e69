"""Would other BM25 parameters move the default hybrid? A study on dev; the other sets are
printed for the record only.

    python benchmarks/study_bm25_params.py [--cookbook DIR] [--heldout DIR]

ragkit's BM25 keeps rank-bm25's (and Lucene's) k1 = 1.5, b = 0.75, never tuned. For each set
this builds the default index (e5-small, structural context, 96-token MaxP windows), takes
e5-small's top 100 once, and for each (k1, b) on a 6 × 5 grid refits BM25 over the same
indexed texts (`auto` tokens), fuses its top 100 with the dense list as the default does
(min-max weights 0.6 dense / 0.4 BM25, top 150) and scores the fused list without reranking.

Printed: Pass@5 per setting on dev (the shipped dev split + the scikit-learn dev half, as the
reranker is fitted), dev MRR, BM25 alone on dev, and the shipped test split, the scikit-learn
test half, the whole code set and Anthropic's cookbook set; then the paired sign-flip test and
bootstrap interval of dev's best setting against the default on every set
(`ragkit.stats.paired_test`). Nothing here is used by ragkit at run time.

Needs e5-small and the held-out sets (`build/heldout/`, extracted when absent); a few minutes
with the embedding cache warm (the code set's windows take about 3 minutes cold).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ragkit import IndexConfig, Pipeline, load_cookbook, load_shipped  # noqa: E402
from ragkit.evaluate import judge, pass_at_k, reciprocal_rank  # noqa: E402
from ragkit.fusion import fuse  # noqa: E402
from ragkit.lexical.bm25 import BM25  # noqa: E402
from ragkit.stats import paired_test  # noqa: E402
from ragkit.train_reranker import heldout_root  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GRID = [(k1, b) for k1 in (0.6, 0.9, 1.2, 1.5, 2.0, 3.0) for b in (0.3, 0.5, 0.75, 0.9, 1.0)]
DEFAULT = (1.5, 0.75)
WEIGHTS = {"dense": .6, "bm25": .4}


def per_question(data) -> dict[tuple, pd.DataFrame]:
    """(k1, b) → one row per judged question: split, hybrid Pass@5 / Pass@20 / RR, BM25's
    Pass@5."""
    pipeline = Pipeline.build(data.documents, IndexConfig(), chunks=data.chunks)
    chunks = pipeline.chunks
    judged = judge(data.queries, data.documents, chunks)
    dense = pipeline.retriever_lists([q.text for q in data.queries], 100)
    out = {}
    for k1, b in GRID:
        bm25 = BM25.fit([c.indexed_text for c in chunks], tokenizer=pipeline.config.tokenizer,
                        k1=k1, b=b)
        rows = {}
        for i, query in enumerate(data.queries):
            items = judged.get(query.id)
            if not items:
                continue
            at, scores = bm25.search(query.text, k=100)
            lexical = [(chunks[j].id, float(s)) for j, s in zip(at, scores)]
            fused = [c for c, _ in fuse({"dense": dense[i]["dense"], "bm25": lexical},
                                        "weighted", WEIGHTS, top=150)]
            rows[query.id] = {"split": query.split, "Pass@5": 100 * pass_at_k(fused, items, 5),
                              "Pass@20": 100 * pass_at_k(fused, items, 20),
                              "MRR": reciprocal_rank(fused, frozenset().union(*items)),
                              "BM25 Pass@5": 100 * pass_at_k([c for c, _ in lexical], items, 5)}
        out[(k1, b)] = pd.DataFrame(rows).T
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cookbook", type=Path, default=ROOT.parent / "shared/data/cookbook")
    parser.add_argument("--heldout", type=Path, default=ROOT / "build" / "heldout")
    args = parser.parse_args()
    shipped = per_question(load_shipped(ROOT / "data"))
    sklearn = per_question(load_shipped(heldout_root("sklearn", args.heldout)))
    sets = {"dev": {g: pd.concat([shipped[g][shipped[g].split == "dev"],
                                  sklearn[g][sklearn[g].split == "dev"]]) for g in GRID},
            "shipped test": {g: t[t.split == "test"] for g, t in shipped.items()},
            "scikit-learn test": {g: t[t.split == "test"] for g, t in sklearn.items()},
            "code set (all)": per_question(load_shipped(heldout_root("pycode", args.heldout)))}
    if (args.cookbook / "codebase_chunks.json").is_file():
        sets["cookbook"] = per_question(load_cookbook(args.cookbook))
    table = pd.DataFrame([{"k1": k1, "b": b, "dev MRR": sets["dev"][(k1, b)]["MRR"].mean(),
                           "dev BM25 alone": sets["dev"][(k1, b)]["BM25 Pass@5"].mean(),
                           **{name: s[(k1, b)]["Pass@5"].mean() for name, s in sets.items()}}
                          for k1, b in GRID]).set_index(["k1", "b"])
    print("hybrid Pass@5 (MRR and BM25 alone on dev), no reranking\n"
          + table.round({c: 3 if c == "dev MRR" else 1 for c in table}).to_string())
    best = max(GRID, key=lambda g: (sets["dev"][g]["Pass@5"].mean(), sets["dev"][g]["MRR"].mean()))
    print(f"\ndev's best (k1, b) = {best} against the default {DEFAULT}, Pass@5:")
    for name, s in sets.items():
        t = paired_test(s[DEFAULT]["Pass@5"].astype(float), s[best]["Pass@5"].astype(float))
        print(f"  {name:18} {t.mean_diff:+.1f} [{t.low:+.1f}, {t.high:+.1f}] p = {t.p_value:.2f}"
              f"  (MRR {s[DEFAULT]['MRR'].mean():.3f} → {s[best]['MRR'].mean():.3f})")


if __name__ == "__main__":
    main()
