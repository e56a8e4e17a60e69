"""Is a gain real? A seeded paired test between two runs scored on the same queries.

What it is: `paired_test(a, b)` takes two per-query metric series (a pandas Series or a
mapping, query id → score), aligns them by query id and tests whether the mean of the
differences d = b − a is zero:
- `method="permutation"` (default): the paired sign-flip test — under the null hypothesis
  each d_i is as likely to be −d_i — via `scipy.stats.permutation_test`
  (`permutation_type="samples"` on the one sample d). A zero difference flips to itself, so
  only the m non-zero differences are flipped (the same test, with fewer patterns): exact
  (all 2^m sign patterns) when 2^m ≤ n, otherwise n random flips with the
  (count + 1) / (n + 1) p-value. Retrieval comparisons are mostly ties, so most are exact:
  one question better out of 29 is p = 1, not a sampled 0.985.
  Two-sided, statistic = the mean difference. Source: Fisher (1935); for IR, Smucker, Allan
  & Carterette, "A comparison of statistical significance tests for IR evaluation", CIKM 2007.
- `method="bootstrap"`: the p-value of Efron & Tibshirani (1993, §16.4): the share of
  bootstrap means of the centred differences (d − d̄) at least as far from 0 as d̄, with
  the same (count + 1) / (n + 1) correction.
Both report the seeded percentile-bootstrap 95 % interval of the mean difference (n
resamples). The same seed gives the same numbers.

`bootstrap_ci(values)`: the seeded percentile-bootstrap interval of one mean (a method's
Pass@k over questions, `ragkit.evaluate.confidence_table`).

What it is not: a multiple-comparison correction (testing ten configurations against a
baseline needs one, e.g. Holm's), nor a test of two different query sets (unpaired data).

Errors: ids that differ between the runs raise `RagkitError` naming some of them — a test
on misaligned queries would answer a different question. A query with NaN in either run
(e.g. an undecided judge) is left out and counted in `dropped`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ragkit.documents import RagkitError

METHODS = ("permutation", "bootstrap")


@dataclass(frozen=True)
class PairedResult:
    """The outcome of `paired_test`: mean of b − a, its 95 % interval, the p-value."""

    method: str
    queries: int
    mean_diff: float
    low: float
    high: float
    p_value: float
    exact: bool  # the permutation p-value enumerated every sign pattern
    dropped: int = 0  # queries left out for a NaN in either run

    def __str__(self) -> str:
        how = "exact" if self.exact else "seeded"
        return (f"b − a = {self.mean_diff:+.4f} (95% CI {self.low:+.4f} to {self.high:+.4f}), "
                f"p = {self.p_value:.4f} over {self.queries} queries ({how} {self.method}"
                f"{f'; {self.dropped} with NaN left out' if self.dropped else ''})")


def _series(values: pd.Series | Mapping[str, float], name: str) -> pd.Series:
    series = values if isinstance(values, pd.Series) else pd.Series(dict(values), dtype=float)
    if series.index.has_duplicates:
        raise RagkitError(f"run {name}: duplicate query ids "
                          f"({', '.join(map(str, series.index[series.index.duplicated()][:3]))})")
    return pd.to_numeric(series, errors="coerce").astype(float)


def aligned(a: pd.Series | Mapping[str, float], b: pd.Series | Mapping[str, float]
            ) -> tuple[pd.Series, pd.Series]:
    """The two series in one query order; `RagkitError` when their ids differ."""
    a, b = _series(a, "a"), _series(b, "b")
    only_a, only_b = sorted(set(a.index) - set(b.index)), sorted(set(b.index) - set(a.index))
    if only_a or only_b:
        def show(ids: list) -> str:
            return (", ".join(map(str, ids[:3])) + (", ..." if len(ids) > 3 else "")) or "none"
        raise RagkitError(f"the two runs are not on the same queries: {len(only_a)} only in a "
                          f"({show(only_a)}), {len(only_b)} only in b ({show(only_b)})")
    order = sorted(a.index, key=str)
    return a.reindex(order), b.reindex(order)


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def paired_test(a: pd.Series | Mapping[str, float], b: pd.Series | Mapping[str, float],
                n: int = 10000, seed: int = 0, method: str = "permutation") -> PairedResult:
    """Two-sided paired test of mean(b − a) = 0 with a 95 % bootstrap interval (seeded)."""
    if method not in METHODS:
        raise RagkitError(f"unknown paired test '{method}' (known: {', '.join(METHODS)})")
    if n < 1:
        raise RagkitError(f"paired test resamples n must be >= 1, got {n}")
    a, b = aligned(a, b)
    keep = a.notna() & b.notna()
    d = (b[keep] - a[keep]).to_numpy(dtype=float)
    if d.size == 0:
        raise RagkitError("no query has a score in both runs")
    rng = np.random.default_rng(seed)
    means = rng.choice(d, size=(n, d.size), replace=True).mean(axis=1)
    low, high = (float(q) for q in np.quantile(means, [0.025, 0.975]))
    observed = float(d.mean())
    moved = d[d != 0]  # ties flip to themselves: the sign patterns of the rest decide
    exact = method == "permutation" and 2 ** moved.size <= n
    if not moved.size or (method == "permutation" and moved.size == 1):
        p = 1.0  # no difference; or one, whose two signs are equally extreme
    elif method == "permutation":
        p = float(stats.permutation_test((moved,), _mean, vectorized=True, n_resamples=n,
                                         permutation_type="samples", alternative="two-sided",
                                         random_state=rng).pvalue)
    else:
        far = np.abs(means - observed) >= abs(observed) * (1 - 1e-12)
        p = float((far.sum() + 1) / (n + 1))
    return PairedResult(method, int(d.size), observed, low, high, min(p, 1.0), exact,
                        int((~keep).sum()))


def bootstrap_ci(values: Sequence[float], n: int = 1000, alpha: float = 0.05,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of a mean (seeded, so reproducible).
    NaN values are left out, as pandas' mean leaves them out of the mean the interval
    brackets (one NaN made both ends NaN); no value left is a RagkitError, not (nan, nan)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not values.size:
        raise RagkitError("no values to bootstrap a confidence interval from (none given, "
                          "or all NaN)")
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(n, values.size), replace=True).mean(axis=1)
    return float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))
