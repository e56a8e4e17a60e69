"""Fusing ranked lists from several retrievers into one.

- `rrf`: reciprocal rank fusion, score(d) = Σ_r 1 / (k + rank_r(d)), k = 60
  (Cormack, Clarke & Büttcher, SIGIR 2009; the seeds' default).
- `weighted_scores`: a weighted sum of normalised scores (min-max or z-score per list), the
  seeds' dense 0.6 / sparse 0.4 starting point.
- `weighted_rank`: Anthropic's contextual-embeddings cookbook variant,
  score(d) = Σ_r w_r / rank_r(d) (0.8 dense / 0.2 BM25 there).

A ranking is a list of (id, score) pairs, best first; ranks start at 1. A document missing
from a list contributes nothing from it. Ties in the fused score keep first-seen order.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Ranking = list[tuple[str, float]]


def _sorted(scores: dict[str, float], k: int | None) -> Ranking:
    order = sorted(scores.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return order[:k] if k else order


def rrf(rankings: Sequence[Ranking], k: int = 60, top: int | None = None) -> Ranking:
    """Reciprocal rank fusion of several rankings."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (ident, _) in enumerate(ranking, start=1):
            fused[ident] = fused.get(ident, 0.0) + 1.0 / (k + rank)
    return _sorted(fused, top)


def weighted_rank(rankings: Sequence[Ranking], weights: Sequence[float],
                  top: int | None = None) -> Ranking:
    """Anthropic's cookbook fusion: Σ weight / rank over the rankings."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (ident, _) in enumerate(ranking, start=1):
            fused[ident] = fused.get(ident, 0.0) + weight / rank
    return _sorted(fused, top)


def normalize(scores: np.ndarray, method: str = "minmax") -> np.ndarray:
    """Scale one list's scores: `minmax` to [0, 1], `zscore` to mean 0 and unit variance.

    A constant list maps to all ones (min-max) or all zeros (z-score).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if method == "minmax":
        span = scores.max() - scores.min()
        return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    if method == "zscore":
        std = scores.std()
        return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores)
    raise ValueError(f"unknown normalization '{method}' (known: minmax, zscore)")


def weighted_scores(rankings: Sequence[Ranking], weights: Sequence[float],
                    method: str = "minmax", top: int | None = None) -> Ranking:
    """Weighted sum of each ranking's normalised scores (missing = the list's minimum)."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        normed = normalize(np.array([score for _, score in ranking]), method)
        floor = float(normed.min())
        for ident, value in zip((ident for ident, _ in ranking), normed):
            fused.setdefault(ident, 0.0)
            fused[ident] += weight * (float(value) - floor)
    return _sorted(fused, top)


FUSIONS = ("rrf", "weighted", "weighted_rank")


def fuse(rankings: Mapping[str, Ranking], method: str = "rrf",
         weights: Mapping[str, float] | None = None, top: int | None = None) -> Ranking:
    """Fuse named rankings (e.g. {"dense": ..., "bm25": ...}) by method name."""
    names = list(rankings)
    lists = [rankings[name] for name in names]
    w = [float((weights or {}).get(name, 1.0)) for name in names]
    if method == "rrf":
        return rrf(lists, top=top)
    if method == "weighted":
        return weighted_scores(lists, w, top=top)
    if method == "weighted_rank":
        return weighted_rank(lists, w, top=top)
    raise ValueError(f"unknown fusion '{method}' (known: {', '.join(FUSIONS)})")
