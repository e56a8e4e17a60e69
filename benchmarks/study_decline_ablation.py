"""Would more unanswerable questions on dev choose a better decline rule for the offline
extractive answerer? A study on dev; the test halves are printed for the record only.

    python benchmarks/study_decline_ablation.py

The shipped dev split has 11 unanswerable questions, all about an absent field of a named
company ("the chief executive of Cedarline Health"), too few and too alike to choose a
decline signal on (`ragkit.extractive`). A common way to make more is corpus ablation: each
answerable question asked of the collection without its golden documents (its top-5 reranked
hits, as `ragkit ask` reads them, with every chunk of a golden document left out), so the
question becomes one whose answer is not in the collection — the unanswerable question a user
meets most. Printed:

1. ROC AUC for "unanswerable" of the retrieval signals the answerer has (the best cosine it
   declines on, the learned scorer's top score, the top unit's coverage, the question's IDF
   found, the count of missing distinctive units), per set, on its own unanswerable questions
   and on the ablated ones.
2. The decline rule (`ragkit.extractive_eval.calibrate`: STRENGTH_MIX, THRESHOLD by
   `shortfall`, the missing-unit rule on) chosen on the shipped dev split as shipped, with its
   ablated questions in, and with the scikit-learn dev half (and its ablated questions) in too;
   each scored, quoted % / declined %, on the four sets' own questions.
3. ROC AUC, on each set's own questions, of retrieval's own scores — the reranker's and the
   first stage's top score and its gaps to the second and the K-th hit —, of the best
   cosine's margin over the request's median, mean and second unit, and of its margin over
   the question's cosines to a fixed sample of the collection (`BACKGROUND` chunks, seed 0:
   their mean, its z-score, their top 10's mean) — a question whose embedding is close to
   everything gets high cosines whether or not a sentence answers it. (On ablated questions the
   min-max-scaled scores would only show that the golden chunk, the top one, was removed.)

Needs the default embedder's model (e5-small) and the held-out scikit-learn set
(`build/heldout/sklearn`, `data/generators/extract_sklearn_docs.py`); about a minute with the
embedding cache warm.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ragkit import extractive_eval as ev  # noqa: E402
from ragkit.assemble import DEFAULT_BUDGET, assemble, lift  # noqa: E402
from ragkit.config import DEFAULT_EMBEDDER, DEFAULT_RERANK  # noqa: E402
from ragkit.datasets import load_dataset  # noqa: E402
from ragkit.extractive import features  # noqa: E402
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SETS = {"shipped": ROOT / "data", "sklearn": ROOT / "build" / "heldout" / "sklearn"}
K = 5
DEPTH = 60  # hits searched before the golden documents' chunks are left out
BACKGROUND = 400  # chunks sampled for the question's background cosines (part 3)


def ablated(pipe: Pipeline, queries) -> list[ev.Case]:
    """Each answerable query, unanswerable: its top K reranked hits without a chunk of its
    golden documents, assembled as `ev.extractive_cases` assembles them."""
    queries = [q for q in queries if q.golden]
    hits = pipe.search([q.text for q in queries], DEPTH, SearchConfig(rerank=DEFAULT_RERANK))
    by_id = {c.id: c for c in pipe.chunks}
    out = []
    for query, found in zip(queries, hits):
        gone = {g.doc_id for g in query.golden}
        found = [(i, s) for i, s in found if by_id[i].doc_id not in gone][:K]
        chunks = by_id
        if pipe.parents:
            found, parents = lift(found, pipe.parents)
            chunks = {**by_id, **parents}
        passages = list(assemble(found, chunks, DEFAULT_BUDGET))
        out.append(ev.Case(replace(query, id=f"{query.id}#ablated", golden=()),
                           features(query.text, passages, pipe.embedder)))
    return out


def signals(case: ev.Case) -> dict[str, float]:
    """The retrieval signals of one case; higher = more likely answerable."""
    f = case.features
    if not f.blocks:
        return dict.fromkeys(("best cosine", "learned top", "top unit coverage",
                              "IDF found", "missing units (negated)"), 0.0)
    top = int(np.argmax(f.learned_scores))
    return {"best cosine": f.strength(), "learned top": max(f.learned_scores),
            "top unit coverage": f.blocks[top].coverage, "IDF found": f.found,
            "missing units (negated)": -float(len(f.missing))}


def aucs(cases: list[ev.Case]) -> dict[str, float]:
    unanswerable = [not c.answerable for c in cases]
    rows = [signals(c) for c in cases]
    return {name: roc_auc_score(unanswerable, [-r[name] for r in rows]) for name in rows[0]}


def main() -> None:
    if not (SETS["sklearn"] / "golden").is_dir():
        sys.exit(f"no held-out set at {SETS['sklearn']}: run "
                 "data/generators/extract_sklearn_docs.py first")
    own, made, retrieval = {}, {}, {}
    for name, root in SETS.items():
        data = load_dataset(root)
        pipe = Pipeline.build(data.documents, IndexConfig(embedder=DEFAULT_EMBEDDER),
                              progress=False)
        for split in ("dev", "test"):
            queries = [q for q in data.queries if q.split == split]
            own[(name, split)] = ev.extractive_cases(pipe, queries, K)
            made[(name, split)] = ablated(pipe, queries)
            retrieval[(name, split)] = retrieval_aucs(pipe, own[(name, split)])
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    table = {}
    for key, cases in own.items():
        answerable = [c for c in cases if c.answerable]
        table[f"{key[0]} {key[1]} own"] = aucs(cases)
        table[f"{key[0]} {key[1]} ablated"] = aucs(answerable + made[key])
    print("1. ROC AUC for 'unanswerable' (own: the set's unanswerable questions; ablated: "
          "its answerable ones asked without their golden documents)")
    print(pd.DataFrame(table).round(2).to_string())
    dev = own[("shipped", "dev")]
    sk_dev = own[("sklearn", "dev")]
    choices = {"shipped dev (as shipped)": dev,
               "shipped dev + its ablated": dev + made[("shipped", "dev")],
               "both dev halves + their ablated": dev + sk_dev + made[("shipped", "dev")]
               + made[("sklearn", "dev")]}
    rows = {}
    for name, cases in choices.items():
        params = ev.calibrate(cases, mix_cases=dev + sk_dev)
        row = {"THRESHOLD": params.threshold, "STRENGTH_MIX": params.strength_mix}
        for key, scored in own.items():
            s = ev.extractive_scores(scored, params)
            row[f"{key[0]} {key[1]}"] = f"{s[ev.QUOTED]:.1f} / {s[ev.DECLINED]:.1f}"
        rows[name] = row
    print("\n2. the decline rule chosen on … (quoted % / declined %, each set's own questions)")
    print(pd.DataFrame(rows).T.to_string())
    print("\n3. ROC AUC for 'unanswerable' of retrieval's own scores and the best cosine's "
          "margins, on each set's own questions")
    print(pd.DataFrame({f"{k[0]} {k[1]}": scored for k, scored in retrieval.items()})
          .round(2).to_string())


def margins(case: ev.Case) -> dict[str, float]:
    """The best unit cosine (no title) over the request's median, mean and second unit."""
    cosines = np.sort([b.cosine for b in case.features.blocks if not b.titled])[::-1]
    if len(cosines) < 2:
        return dict.fromkeys(("best - median", "best - mean", "best - second"), 0.0)
    return {"best - median": cosines[0] - np.median(cosines),
            "best - mean": cosines[0] - cosines.mean(), "best - second": cosines[0] - cosines[1]}


def background(pipe: Pipeline, cases: list[ev.Case]) -> list[dict[str, float]]:
    """The best unit cosine (no title) over the question's cosines to `BACKGROUND` chunks of
    the collection drawn with seed 0: their mean, as a z-score, and their top 10's mean."""
    texts = [c.text for c in pipe.chunks]
    picked = np.random.default_rng(0).choice(len(texts), min(BACKGROUND, len(texts)),
                                             replace=False)
    sample = pipe.embedder.embed([texts[i] for i in picked], input_type="document")
    queries = pipe.embedder.embed([c.query.text for c in cases], input_type="query")
    rows = []
    for case, cosines in zip(cases, queries @ sample.T):
        best = max((b.cosine for b in case.features.blocks if not b.titled), default=0.0)
        rows.append({"best - background mean": best - cosines.mean(),
                     "best, background z-score": (best - cosines.mean()) / cosines.std(),
                     "best - background top 10": best - np.sort(cosines)[-10:].mean()})
    return rows


def retrieval_aucs(pipe: Pipeline, cases: list[ev.Case]) -> dict[str, float]:
    """ROC AUC of the reranker's and the first stage's top-K scores (the top one and its gaps
    to the second and the K-th), of `margins` and of `background`, for "unanswerable"."""
    texts = [c.query.text for c in cases]
    rows = [{**margins(c), **b} for c, b in zip(cases, background(pipe, cases))]
    for stage, rerank in (("reranker", DEFAULT_RERANK), ("first stage", "none")):
        for row, hits in zip(rows, pipe.search(texts, K, SearchConfig(rerank=rerank))):
            top = [score for _, score in hits]
            row.update({f"{stage} top": top[0], f"{stage} top - second": top[0] - top[1],
                        f"{stage} top - {K}th": top[0] - top[-1]})
    unanswerable = [not c.answerable for c in cases]
    return {name: roc_auc_score(unanswerable, [-r[name] for r in rows]) for name in rows[0]}


if __name__ == "__main__":
    main()
