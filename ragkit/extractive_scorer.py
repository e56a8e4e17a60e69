"""The offline extractive answerer's sentence scorer: nine signals of each quotable unit,
standardised, times weights fitted on dev questions. A linear model, not a language model.

What it is: `columns(found)` gives one row per unit of a `ragkit.extractive.Features`, in
`COLUMNS` order —
- `closeness`: the rank, among the request's units, of the e5-small cosine between the
  question and the unit read under its document's title (1 the closest, 0 the farthest),
  and `closeness_gap`: that cosine minus the request's best;
- `coverage`: the share of the question's IDF mass in the unit or its passage's tag;
- `rank_prior`: 1 / the rank of the unit's passage (1 = the most relevant);
- `number`: 1 when the question asks for an amount, a time or a count and the unit holds
  a digit;
- `length`: ln(1 + the unit's characters); `position`: the unit's first block over its
  passage's blocks (0 = the passage's start);
- `word_pairs`: the share of the question's adjacent word pairs (`auto` tokens) that the
  unit holds too;
- `titled`: 1 for a heading joined to the sentence under it.
`score(found)` is the fitted model's score of each row (`MODEL_PATH`, sha256-pinned as
`MODEL_SHA256`); `ragkit.extractive` quotes the best three.

How it was fitted (`python -m ragkit.train_extractive`): every quotable unit of the top-5
hybrid passages of each answerable dev question — the shipped dev split and the dev half of
the held-out scikit-learn docstrings — labelled 1 when it holds a golden span (or lies inside
one), pairwise logistic regression as the offline reranker is fitted (standardised columns,
no intercept, C = 1). Why these nine: out of fold on dev (5 folds over the 147 answerable
questions, nothing declined; `benchmarks/study_extractive.py`) they quote the golden span for
66.3 % of the questions against 61.2 % for the hand rule (`ragkit.extractive.Params`,
`learned=False`) with its grid re-chosen per fold; adding MiniLM's cosine rank and gap (a
second model's view) reached 67.0, one question more, for a second model run on every
sentence at answer time, so it is left out.

What it is not: a judge of whether to answer; the decline stays the rule's
(`ragkit.extractive`), on the units' own cosines.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from ragkit.lexical import auto
from ragkit.rerank.offline import LinearModel

COLUMNS = ("closeness", "closeness_gap", "coverage", "rank_prior", "number", "length",
           "position", "word_pairs", "titled")
MODEL_PATH = Path(__file__).with_name("extractive_model.json")
MODEL_SHA256 = "1f58508f4f836ef8fae159f26208127293316bd50c5189e8dd168de3d94b1a9f"
MODEL_FORMAT = "ragkit.extractive.linear"
TRAINER = "ragkit.train_extractive"


def _pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent `auto` tokens of `text`, as pairs."""
    words = auto(text)
    return set(zip(words, words[1:]))


def closeness(cosines: np.ndarray) -> np.ndarray:
    """1 for the largest cosine down to 0 for the smallest (ties: the earlier unit first)."""
    out = np.zeros(len(cosines))
    for place, i in enumerate(np.argsort(-cosines, kind="stable")):
        out[i] = 1.0 - place / max(1, len(cosines) - 1)
    return out


def columns(found) -> np.ndarray:
    """One row of `COLUMNS` per unit of `found` (a `ragkit.extractive.Features`)."""
    units = found.blocks
    if not units:
        return np.zeros((0, len(COLUMNS)))
    near = np.array([b.closeness_cosine for b in units])
    ranks = closeness(near)
    asked = _pairs(found.question)
    lengths = found.lengths
    rows = [[ranks[i], near[i] - near.max(), b.coverage, 1.0 / b.rank,
             float(found.asks_number and b.has_digit), math.log1p(len(b.text)),
             b.block / max(1, lengths[b.result] if b.result < len(lengths) else 1),
             len(asked & _pairs(b.text)) / max(1, len(asked)), float(b.titled)]
            for i, b in enumerate(units)]
    return np.array(rows, dtype=float)


@lru_cache(maxsize=1)
def model() -> LinearModel:
    """The committed model, its hash checked once per process."""
    return LinearModel.load(MODEL_PATH, MODEL_SHA256, COLUMNS, MODEL_FORMAT, TRAINER,
                            "sentence scorer")


def score(found) -> np.ndarray:
    """The fitted model's score of each unit of `found` (higher: quoted first)."""
    return model().score(columns(found)) if found.blocks else np.zeros(0)
