"""Fit the offline extractive answerer's sentence scorer on dev questions, and only there.

    python -m ragkit.train_extractive [--data data] [--heldout build/heldout]
                                      [--out ragkit/extractive_model.json]
    python -m ragkit.train_extractive --check   # refit and compare with the committed file

The dev questions: the answerable questions of the shipped data's dev split and of the dev
half of the held-out scikit-learn docstrings (extracted into `--heldout`/sklearn by its
script in `data/generators/` when absent), as the offline reranker's fit takes them
(`ragkit.train_reranker`).

What it does: builds the default index of each corpus (`IndexConfig()`), reads each
question's top-5 hybrid passages, not reranked (`ragkit.extractive_eval.extractive_cases`
with `SearchConfig()`: the order it was fitted on; `ragkit ask` has read the reranked top 5
since 4 December 2026, measured in `ragkit.extractive`), computes
`ragkit.extractive_scorer.columns` for every quotable unit, labels a unit 1 when it holds a
golden span (white space normalised) or lies inside one (units of at least 20 characters),
and fits pairwise logistic regression on the questions
with both kinds of unit (`ragkit.train_reranker.fit`: standardised columns, no intercept,
C = 1). Refitting on the same data on the same kind of CPU writes the same bytes
(`--check` accepts numbers within `ragkit.train_reranker.RTOL`); pin the printed hash as
`ragkit.extractive_scorer.MODEL_SHA256`.

What it is not: a search over signals — the nine columns were chosen by cross-validation on
dev (`benchmarks/study_extractive.py`); the test splits are never read here.
"""
from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ragkit.extractive_eval import Case, extractive_cases, normalised
from ragkit.extractive_scorer import COLUMNS, MODEL_FORMAT, MODEL_PATH, columns
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.rerank.offline import LinearModel
from ragkit.train_reranker import C, DATA, HELDOUT, SPLIT, command, dev_sets, dev_sha256, fit

K = 5
SHORTEST_INSIDE = 20  # a unit this long or longer lying inside a golden span counts as it


def labels(case: Case) -> np.ndarray:
    """1 for each unit of `case` that holds one of its golden spans or lies inside one."""
    spans = [normalised(g.span) for g in case.query.golden]
    units = [normalised(b.text) for b in case.features.blocks]
    return np.array([any(s in u or (len(u) >= SHORTEST_INSIDE and u in s) for s in spans)
                     for u in units], dtype=int)


def training_groups(data_root: Path = DATA, heldout: Path = HELDOUT):
    """Per answerable dev question with both kinds of unit, (columns, labels); and the
    record of what they came from."""
    sets = dev_sets(data_root, heldout)
    groups, questions = [], 0
    for data in sets:
        pipeline = Pipeline.build(data.documents, IndexConfig(), progress=False)
        answerable = [q for q in data.queries if q.golden]
        questions += len(answerable)
        for case in extractive_cases(pipeline, answerable, K, SearchConfig()):  # as fitted
            y = labels(case)
            if 0 < y.sum() < len(y):
                groups.append((columns(case.features), y))
    trained_on = {"data": "ragkit shipped data and held-out scikit-learn docstrings, "
                          f"split {SPLIT}, answerable questions",
                  "data_sha256": dev_sha256(sets),
                  "questions": questions, "units": int(sum(len(y) for _, y in groups)),
                  "index": asdict(IndexConfig()), "passages": f"top {K}, hybrid",
                  "method": f"pairwise logistic regression, standardised columns, C={C}"}
    return groups, trained_on


def main(argv: list[str] | None = None) -> int:
    def refit(data: Path, heldout: Path) -> LinearModel:
        groups, trained_on = training_groups(data, heldout)
        return fit(groups, trained_on=trained_on, features=COLUMNS, fmt=MODEL_FORMAT)
    return command(argv, "ragkit.train_extractive", __doc__, MODEL_PATH, refit,
                   "sentence scorer", "ragkit.extractive_scorer.MODEL_SHA256")


if __name__ == "__main__":
    sys.exit(main())
