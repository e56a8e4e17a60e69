"""Tuning hybrid fusion on labelled queries: retrieve once, then fuse for every α and RRF k.

- `candidate_lists(pipeline, queries, depth)`: each query's BM25 and dense lists, retrieved
  once at the depth hybrid search fuses (`Pipeline.candidates`).
- `sweep_alpha(lists, judgments, alphas)`: per-query metrics of the convex fusion with dense
  weight α and BM25 weight 1 − α over min-max scores (`ragkit.fusion.weighted_scores`), one
  table per α. α = 0 is BM25's order (dense-only candidates trail at 0), α = 1 dense's.
- `sweep_rrf_k(lists, judgments, ks)`: the same for reciprocal rank fusion's k.
- `sweep_chunking(documents, queries, chunkings, config)`: mean metrics of one search config
  for each (chunk size, overlap), every chunking indexed afresh.
- `best_alpha` / `best_rrf_k`: the point with the best mean of one metric, and how flat the
  optimum is — a seeded bootstrap over queries re-picks the best point on every resample;
  the share of resamples choosing each point and the 95 % range of the chosen point say
  whether a neighbour would have done as well.

Tie rule: means within 1e-9 of each other tie. A tied α goes to the one nearest 0.5 (equal
weights presume least about which retriever is better), then to the larger α; a tied RRF k
to the one nearest 60 on a log scale (the usual default), then to the larger k; `Choice.tied`
lists every point tied with the best. The bootstrap does not apply that rule: points tied on
a resample share its vote, so a flat optimum shows as a share spread over the tied points
(five α tied on every query: 20 % each), never as one point "chosen on 100 %".

Source: Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS
2023 — convex combination beats RRF and α needs only a few dozen labelled queries.
Not here: cross-validation or per-kind weights; an optimum found on a few dozen queries is
an estimate, and the bootstrap spread is how much to trust it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragkit.config import check_rrf_k
from ragkit.documents import Document, Query, RagkitError
from ragkit.evaluate import (Judgments, cutoffs, judge, metric_decimals, score_run, summarize,
                             summary_table)
from ragkit.fusion import Ranking, fused_deep, ranked, rrf, weighted_rank, weighted_scores
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig, evaluate_configs

CandidateLists = dict[str, dict[str, Ranking]]  # query id -> {"dense": ..., "bm25": ...}
Fusion = Callable[[Mapping[str, Ranking], int | None], Ranking]  # (lists, top; None: all)
ALPHAS = tuple(round(0.1 * i, 10) for i in range(11))
RRF_KS = (1, 5, 10, 20, 40, 60, 100, 200)
TIE = 1e-9


def candidate_lists(pipeline: Pipeline, queries: Sequence[Query], depth: int = 100) -> CandidateLists:
    """Query id → each retriever's top `depth` for that query (ties at the cut included)."""
    lists = pipeline.retriever_lists([q.text for q in queries], depth)
    return {q.id: pair for q, pair in zip(queries, lists)}


def convex(alpha: float, normalization: str = "minmax") -> Fusion:
    """Dense weight α, BM25 weight 1 − α over normalised scores (`weighted_scores`)."""
    def fuse(lists: Mapping[str, Ranking], top: int) -> Ranking:
        return weighted_scores([lists["dense"], lists["bm25"]], [alpha, 1 - alpha],
                               normalization, top)
    return fuse


def reciprocal(k: int = 60) -> Fusion:
    """Reciprocal rank fusion with constant k."""
    return lambda lists, top: rrf([lists["dense"], lists["bm25"]], k, top)


def fusion_methods(alpha: float = 0.6, rrf_k: int = 60) -> dict[str, Fusion]:
    """The single retrievers and the four fusions side by side, by display name.

    min-max and z-score use dense weight `alpha`; the cookbook's 1/rank keeps its 0.8 / 0.2.
    """
    weights = f"{alpha:g}/{1 - alpha:g}"
    return {
        "BM25": lambda lists, top: ranked(lists["bm25"], top),
        "dense": lambda lists, top: ranked(lists["dense"], top),
        f"RRF (k = {rrf_k})": reciprocal(rrf_k),
        f"min-max {weights}": convex(alpha, "minmax"),
        f"z-score {weights}": convex(alpha, "zscore"),
        "1/rank 0.8/0.2 (cookbook)": lambda lists, top: weighted_rank(
            [lists["dense"], lists["bm25"]], [0.8, 0.2], top),
    }


def check_metric(metric: str, k: int = 20, name: str = "") -> None:
    """Refuse a metric name that a sweep at cutoff k does not score (`score_run`'s columns);
    `name`: the notebook parameter that gave it, named first."""
    ks, ndcg_k = cutoffs(k)
    known = [*(f"Pass@{c}" for c in ks), *(f"R@{c}" for c in ks), "MRR", f"nDCG@{ndcg_k}"]
    if metric not in known:
        raise RagkitError((f"parameter {name} = {metric!r}: " if name else "") +
                          f"unknown metric '{metric}' (known at k = {k}: {', '.join(known)})")


def _judged(lists: CandidateLists, judgments: Judgments) -> Judgments:
    mine = {qid: items for qid, items in judgments.items() if qid in lists}
    if not mine:
        raise RagkitError("none of the queries with candidate lists has golden items to tune on")
    return mine


def evaluate(lists: CandidateLists, judgments: Judgments, fusions: Mapping, k: int = 20,
             depth: int = SearchConfig().candidates) -> dict:
    """Per-query metric tables (`ragkit.evaluate.score_run`), one per named fusion of each
    list's top `depth`, continued below for a k past it, as `Pipeline.search` fuses
    (`fusion.fused_deep`)."""
    mine = _judged(lists, judgments)
    return {name: score_run({qid: [ident for ident, _ in fused_deep(fusion, lists[qid], depth, k)]
                             for qid in mine}, mine, k)
            for name, fusion in fusions.items()}


def sweep_alpha(lists: CandidateLists, judgments: Judgments, alphas: Sequence[float] = ALPHAS,
                k: int = 20, normalization: str = "minmax") -> dict[float, pd.DataFrame]:
    """α → per-query metrics of the convex fusion with dense weight α."""
    check_sweep_points(alphas)
    return evaluate(lists, judgments, {a: convex(a, normalization) for a in alphas}, k)


def check_sweep_points(alphas: Sequence[float], rrf_ks: Sequence[int] = (),
                 label: str = "RRF k") -> None:
    """Refuse (RagkitError) a dense weight α outside [0, 1], or an RRF k that
    `ragkit.config.check_rrf_k` refuses (named by `label`); `ragkit tune` asks before it
    loads any data (α = 1.5 was refused only after the index was built)."""
    for alpha in alphas:
        if not 0 <= alpha <= 1:
            raise RagkitError(f"a dense weight α must lie in [0, 1], got {alpha}")
    for value in rrf_ks:
        check_rrf_k(value, label)


def sweep_rrf_k(lists: CandidateLists, judgments: Judgments, ks: Sequence[int] = RRF_KS,
                k: int = 20) -> dict[int, pd.DataFrame]:
    """RRF k → per-query metrics of reciprocal rank fusion with that k."""
    check_sweep_points((), ks)
    return evaluate(lists, judgments, {value: reciprocal(value) for value in ks}, k)


def sweep_chunking(documents: Sequence[Document], queries: Sequence[Query],
                   chunkings: Sequence[tuple[int, int]], config: SearchConfig | None = None, k: int = 20,
                   embedder: str | None = None, built: Mapping | None = None,
                   name: str = "") -> pd.DataFrame:
    """Mean metrics of search `config` (default BM25) per (chunk size, overlap), one row each
    named "`name` SIZE/OVERLAP", with the chunk count.

    Each chunking gets its own index (structural context, the default tokenizer, `embedder`;
    None = BM25 only, which costs seconds where fresh embeddings cost minutes) and its own
    judgments, since golden spans map onto the new chunks. `built` maps a chunking to an
    index already built with it, reused as it is.
    """
    config = config or SearchConfig(mode="bm25")
    rows = {}
    for size, overlap in chunkings:
        pipeline = (built or {}).get((size, overlap)) or Pipeline.build(
            documents, IndexConfig(chunk_size=size, overlap=overlap, embedder=embedder),
            progress=False)
        judgments = judge(queries, documents, pipeline.chunks)
        (table,) = evaluate_configs(pipeline, queries, judgments, {"": config}, k).values()
        rows[f"{name} {size}/{overlap}".strip()] = {"chunks": len(pipeline.chunks),
                                                    **summarize(table)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("chunk size/overlap")


@dataclass(frozen=True)
class Choice:
    """The best point of a sweep on `metric`, and how often a bootstrap re-picked each point."""

    point: float
    metric: str
    mean: float
    low: float  # 2.5 % and 97.5 % quantiles of the point chosen on bootstrap resamples
    high: float
    share: dict  # point -> fraction of resamples that chose it (tied points share a vote)
    tied: tuple = ()  # the points whose mean ties the best's (the best included), ascending

    def __str__(self) -> str:
        tie = (f"; {', '.join(f'{p:g}' for p in self.tied)} tie, the tie rule picks "
               f"{self.point:g}" if len(self.tied) > 1 else "")
        mean = f"{self.mean:.{metric_decimals(self.metric)}f}"  # MRR 0.810, not 0.8
        return (f"best {self.point:g} ({self.metric} {mean}{tie}); bootstrap 95 % "
                f"range of the best: {self.low:g} … {self.high:g}, chosen on "
                f"{100 * self.share[self.point]:.1f} % of resamples")

    def advice(self, default: float, option: str, before: str = "") -> str:
        """What to search with: the options `before` (e.g. "--fusion rrf"), then `option` set
        to the best point — or, when every swept point ties or `default` (the value ragkit
        searches with unless told) ties the best, keep the default: a tie is no evidence for
        moving off it, so the tie rule's pick is advised only when it is better than the
        default. The advised command pastes as it is printed (it read "--fusion rrf,
        --rrf-k 10", a comma the shell passed on)."""
        every = len(self.tied) == len(self.share)
        outside = not min(self.share) - 1e-9 <= default <= max(self.share) + 1e-9
        if every and (len(self.share) == 1 or outside) and not any(
                math.isclose(p, default, abs_tol=1e-9) for p in self.share):
            swept = (f"all {len(self.tied)} tie" if len(self.tied) > 1 else
                     f"only {self.point:g} was swept")  # it said "keep the default" unmeasured
            return (f"{swept} on {self.metric}, and the default {default:g} was not swept: "
                    f"nothing to choose on; sweep it too")
        if not every and not any(math.isclose(p, default, abs_tol=1e-9) for p in self.tied):
            options = f"{before} {option}" if before else option
            return f"search with it: ragkit search|eval|ask ... {options} {self.point:g}"
        return (f"{f'all {len(self.tied)} tie' if every else 'the default ties'} on "
                f"{self.metric}: keep the default {default:g} "
                f"({f'{before}, ' if before else ''}no {option} needed)")


def _choose(tables: Mapping[float, pd.DataFrame], metric: str,
            preference: Callable[[float], tuple], n: int, seed: int) -> Choice:
    """The best mean `metric`, ties to the point `preference` ranks first, with a bootstrap."""
    if not tables:
        raise RagkitError("a sweep needs at least one point")
    known = list(next(iter(tables.values())).columns)
    if metric not in known:
        raise RagkitError(f"unknown metric '{metric}' (known: {', '.join(known)})")
    points = sorted(tables, key=preference)  # most preferred first
    values = np.column_stack([tables[p][metric].to_numpy(dtype=float) for p in points])

    def tied(means: np.ndarray) -> np.ndarray:  # columns within TIE of the row's best
        return means >= means.max(axis=-1, keepdims=True) - TIE

    top = tied(values.mean(axis=0))
    best = points[int(np.argmax(top))]  # the most preferred of the tied
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, values.shape[0], size=(n, values.shape[0]))
    votes = tied(values[rows].mean(axis=1)).astype(float)
    votes /= votes.sum(axis=1, keepdims=True)  # a resample's tied points share its vote
    by_point = dict(zip(points, votes.mean(axis=0)))
    share = {p: float(by_point[p]) for p in sorted(tables)}
    cumulative = np.cumsum(list(share.values()))
    low, high = (sorted(tables)[min(int(np.searchsorted(cumulative, q - 1e-12)), len(share) - 1)]
                 for q in (0.025, 0.975))
    return Choice(best, metric, float(tables[best][metric].mean()), float(low), float(high),
                  share, tuple(sorted(p for p, t in zip(points, top) if t)))


def best_alpha(tables: Mapping[float, pd.DataFrame], metric: str = "Pass@5", n: int = 1000,
               seed: int = 0) -> Choice:
    """The α with the best mean `metric` (ties: nearest 0.5, then larger), bootstrapped."""
    return _choose(tables, metric, lambda a: (round(abs(a - 0.5), 9), -a), n, seed)


def best_rrf_k(tables: Mapping[int, pd.DataFrame], metric: str = "Pass@5", n: int = 1000,
               seed: int = 0) -> Choice:
    """The RRF k with the best mean `metric` (ties: nearest 60 in log k, then larger)."""
    return _choose(tables, metric, lambda k: (round(abs(math.log(k / 60)), 9), -k), n, seed)


def sweep_table(tables: Mapping[float, pd.DataFrame], choice: Choice | None = None
                ) -> pd.DataFrame:
    """Mean metrics per point (rows), plus the share of bootstrap resamples choosing it."""
    table = summary_table(tables)
    if choice is not None:
        table["chosen %"] = [100 * choice.share.get(point, 0.0) for point in table.index]
    return table


MAX_POINTS = 2000  # sweep points at most: 0:1:1e-9 filled 23 GB before it was killed


def parse_grid(text: str, integer: bool = False) -> tuple:
    """Sweep points from `START:STOP:STEP` (both ends included when STOP is on the grid;
    never a point past STOP) or `V1,V2,...`: finite numbers, at most `MAX_POINTS` of them."""
    try:
        if ":" in text:
            start, stop, step = (float(part) for part in text.split(":"))
            if not (step > 0 and math.isfinite(start) and math.isfinite(stop)
                    and start <= stop):
                raise ValueError
            span = (stop - start) / step
            # 0:1:0.6 swept 1.2, a point nobody asked for; a span too long is refused below
            count = math.floor(span + 1e-9) if span <= MAX_POINTS else MAX_POINTS
            values = [round(start + i * step, 10) for i in range(count + 1)]
        else:
            values = [float(part) for part in text.split(",") if part.strip()]
            if not all(math.isfinite(v) for v in values):
                raise ValueError
    except ValueError:
        raise RagkitError(f"expected START:STOP:STEP (STEP > 0) or V1,V2,... of finite "
                          f"numbers, got '{text}'") from None
    if len(values) > MAX_POINTS:
        raise RagkitError(f"'{text}' has more than {MAX_POINTS:,} sweep points; give a larger "
                          f"STEP or fewer values")
    if not values:
        raise RagkitError(f"no sweep points in '{text}'")
    if integer:
        if any(v != int(v) for v in values):
            raise RagkitError(f"expected whole numbers, got '{text}'")
        return tuple(dict.fromkeys(int(v) for v in values))
    return tuple(dict.fromkeys(values))
