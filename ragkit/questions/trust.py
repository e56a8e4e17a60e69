"""Can a synthetic golden set pick the method? Two question sets rank the same configurations.

What it is:
- `default_configs()`: ten retrieval configurations — BM25, dense, hybrid (weighted min-max
  0.6 / 0.4, RRF k = 60, the cookbook's weighted 1/rank with 0.6 / 0.4), with and without the
  offline reranker, over an index with structural context and one without;
- `metric_matrix(...)`: one row per judged question, one column per configuration, the
  per-question metric (MRR by default: graded, so fewer ties than Pass@k);
- `agreement(human, synthetic)`: each set's mean per configuration and rank, Kendall's
  tau-b between the two orderings (scipy; ties counted as tau-b does), a percentile
  bootstrap interval of tau over questions (both sets resampled, each on its own, `n`
  times, seeded), and the pairs of configurations the two sets order differently; an
  ordering with every configuration tied has no tau (scipy's NaN), reported as 0;
- `as_queries(records)`: generated records (or golden JSONL lines) as `Query`s;
- `compare_sets(documents, human, synthetic)`: all of it, building one index per context
  route (`Pipeline.build`, the embedding cache keeps a rebuild cheap).

What it is not: a verdict on Claude's questions when run offline — there the synthetic set
is the stand-in's template questions (`ragkit.standin.questions`), so the number shows the
path, not the quality of a model's questions. `benchmarks/bench_synthetic_trust.py` runs it
on the shipped corpus.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from ragkit.documents import Document, Golden, Query, RagkitError
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.questions.choose import Configs, config_runs



def default_configs() -> Configs:
    """Ten configurations over two indexes (see the module docstring)."""
    out: Configs = {}
    for context in ("structural", "none"):
        tag = "" if context == "structural" else ", no context"
        out[f"bm25{tag}"] = (context, SearchConfig(mode="bm25"))
        out[f"dense{tag}"] = (context, SearchConfig(mode="dense"))
        out[f"hybrid{tag}"] = (context, SearchConfig())
        out[f"hybrid rrf{tag}"] = (context, SearchConfig(fusion="rrf"))
        if context == "structural":
            # named as notebook 03 names 1/rank fusion by its weights: "1/rank 0.8/0.2
            # (cookbook)" there is this fusion at the cookbook's weights (08 read "hybrid
            # weighted_rank", a name 03 never shows)
            weights = SearchConfig().weights
            out[f"hybrid 1/rank {weights['dense']:g}/{weights['bm25']:g}"] = (
                context, SearchConfig(fusion="weighted_rank"))
            out["hybrid + rerank"] = (context, SearchConfig(rerank="offline"))
    return out


def check_default(name: object) -> None:
    """Refuse a default configuration (notebook 08's `default_config`) that is not one of
    `default_configs()`, listing them: it was refused only after the ladder ran, minutes on
    a real folder, in a list joined with ", " that names such as "bm25, no context" hold."""
    names = list(default_configs())
    if name not in names:
        raise RagkitError(f"parameter default_config = {name!r}: not a configuration; one of "
                          + "; ".join(map(repr, names)))


def as_queries(records: Sequence[dict]) -> list[Query]:
    """Golden-format records (`generate`'s output, a golden JSONL's lines) as `Query`s."""
    return [Query(str(r["id"]), r["question"], str(r.get("answer", "")), str(r.get("kind", "")),
                  str(r.get("split", "")), tuple(Golden(str(g["doc_id"]), str(g.get("span", "")))
                                                 for g in r["golden"])) for r in records]


def metric_matrix(pipelines: dict[str, Pipeline], documents: Sequence[Document],
                  queries: Sequence[Query], configs: Configs, metric: str = "MRR",
                  k: int = 20) -> pd.DataFrame:
    """Per-question `metric` of every configuration (judged questions only)."""
    runs = config_runs(pipelines, documents, queries, configs, k)
    return pd.DataFrame({name: table[metric] for name, table in runs.items()})


@dataclass
class Agreement:
    """How two question sets rank the same configurations."""

    table: pd.DataFrame  # per configuration: each set's mean and rank
    tau: float
    interval: tuple[float, float]  # percentile bootstrap, 95 %
    disagreements: pd.DataFrame  # pairs ordered differently, with each set's difference
    questions: tuple[int, int]  # (human, synthetic) judged questions


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    value = kendalltau(a, b).statistic
    return float(value) if np.isfinite(value) else 0.0


def agreement(human: pd.DataFrame, synthetic: pd.DataFrame, n: int = 1000, seed: int = 0
              ) -> Agreement:
    """Kendall's tau-b of the two orderings, its bootstrap interval, the discordant pairs."""
    names = list(human.columns)
    h, s = human[names].to_numpy(float), synthetic[names].to_numpy(float)
    mh, ms = h.mean(axis=0), s.mean(axis=0)
    rng = np.random.default_rng(seed)
    taus = [_tau(h[rng.integers(0, len(h), len(h))].mean(axis=0),
                 s[rng.integers(0, len(s), len(s))].mean(axis=0)) for _ in range(n)]
    table = pd.DataFrame({"human mean": mh, "human rank": pd.Series(mh).rank(
        ascending=False, method="min").to_numpy(int), "synthetic mean": ms,
        "synthetic rank": pd.Series(ms).rank(ascending=False, method="min").to_numpy(int)},
        index=names).sort_values("human rank")
    pairs = [(a, b, mh[i] - mh[j], ms[i] - ms[j])
             for (i, a), (j, b) in combinations(enumerate(names), 2)
             if (mh[i] - mh[j]) * (ms[i] - ms[j]) < 0]
    disagreements = pd.DataFrame(pairs, columns=["a", "b", "human a − b", "synthetic a − b"])
    return Agreement(table, _tau(mh, ms), (float(np.quantile(taus, 0.025)),
                                           float(np.quantile(taus, 0.975))),
                     disagreements, (len(h), len(s)))


def compare_sets(documents: Sequence[Document], human: Sequence[Query],
                 synthetic: Sequence[Query], configs: Configs | None = None,
                 metric: str = "MRR", k: int = 20, index: IndexConfig = IndexConfig(),
                 n: int = 1000, seed: int = 0) -> Agreement:
    """Rank `configs` (default `default_configs()`) by each question set; `agreement`."""
    configs = configs or default_configs()
    contexts = sorted({context for context, _ in configs.values()})
    pipelines = {c: Pipeline.build(documents, IndexConfig(
        index.chunk_size, index.overlap, c, index.tokenizer, index.embedder)) for c in contexts}
    return agreement(metric_matrix(pipelines, documents, human, configs, metric, k),
                     metric_matrix(pipelines, documents, synthetic, configs, metric, k),
                     n, seed)
