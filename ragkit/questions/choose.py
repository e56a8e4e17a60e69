"""On this folder, which configuration? Every configuration against the default, paired.

What it is:
- `config_runs(pipelines, documents, queries, configs)`: the per-question metric table
  (`ragkit.evaluate.score_run`: Pass@k, R@k, MRR, nDCG) of every configuration, on the same
  judged questions;
- `method_table(runs, default)`: per configuration its mean `metric` and MRR, the difference
  from `default` with the seeded 95 % bootstrap interval and the paired sign-flip test's
  p-value (`ragkit.stats.paired_test`), and that p-value Holm-adjusted for the number of
  configurations compared (testing nine rivals at 0.05 each would find a "winner" in noise
  a third of the time);
- `verdict(table, default)`: the sentence "on this folder, use …", from the table alone.

The rule of `verdict`: the configuration with the highest mean (MRR breaks a tie, then the
table's order) is named; it replaces the default only when its gain's interval lies above
zero and the Holm-adjusted p-value is below 0.05. Otherwise the sentence says the default
stays and why (no configuration scores higher, or the best one's gain is within noise on
this many questions).

What it is not: a search over every setting (chunk size, α, k of RRF — `ragkit tune` does
that), nor a judge of the questions themselves: on a generated set it picks the method the
generated questions favour (`ragkit.questions.trust` measures how far that can be trusted).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ragkit.documents import Document, Query, RagkitError
from ragkit.evaluate import judge, metric_decimals, score_run
from ragkit.pipeline import Pipeline, SearchConfig
from ragkit.stats import paired_test
from ragkit.text_stats import counted, joined

Configs = dict[str, tuple[str, SearchConfig]]  # name -> (index key, search config)
ALPHA = 0.05
DIFFERENCES = ("Δ", "95% CI low", "95% CI high")  # in the metric's unit


def config_runs(pipelines: Mapping[str, Pipeline], documents: Sequence[Document],
                queries: Sequence[Query], configs: Configs, k: int = 20
                ) -> dict[str, pd.DataFrame]:
    """Per-question metrics of every configuration on the questions the chunks can judge."""
    runs = {}
    for name, (key, search) in configs.items():
        pipeline = pipelines[key]
        judgments = judge(queries, documents, pipeline.chunks)
        judged = [q for q in queries if q.id in judgments]
        runs[name] = score_run(pipeline.run(judged, k, search), judgments, k)
    return runs


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (same order as given)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def method_table(runs: Mapping[str, pd.DataFrame], default: str, metric: str = "Pass@5",
                 n: int = 10000, seed: int = 0) -> pd.DataFrame:
    """Each configuration beside `default`: mean, difference, 95 % interval, p, Holm's p."""
    if default not in runs:
        raise RagkitError(f"the default configuration '{default}' is not among those run "
                          f"({', '.join(runs)})")
    base = runs[default][metric]
    rows, p_values = {}, []
    for name, table in runs.items():
        row = {metric: float(table[metric].mean()), "MRR": float(table["MRR"].mean())}
        if name == default:
            row.update({"Δ": 0.0, "95% CI low": np.nan, "95% CI high": np.nan, "p": np.nan})
        else:
            test = paired_test(base, table[metric], n=n, seed=seed)
            row.update({"Δ": test.mean_diff, "95% CI low": test.low,
                        "95% CI high": test.high, "p": test.p_value})
            p_values.append((name, test.p_value))
        rows[name] = row
    out = pd.DataFrame(rows).T
    out["Holm p"] = np.nan
    if p_values:
        out.loc[[name for name, _ in p_values], "Holm p"] = holm([p for _, p in p_values])
    out.attrs.update(default=default, metric=metric, questions=len(base),
                     metric_columns=DIFFERENCES)  # shown with the metric's decimals
    return out.sort_values([metric, "MRR"], ascending=False, kind="stable")


def verdict(table: pd.DataFrame) -> str:
    """"On this folder, use …": the best configuration if its gain over the default holds.
    Every configuration's name is set as code (`hybrid, no context`, `bm25`), so names that
    hold commas or spaces read as one name each, all alike."""
    default, metric, questions = (table.attrs[key] for key in ("default", "metric", "questions"))
    d = metric_decimals(metric)  # MRR's gains are thousandths: "+0.0 MRR" said nothing
    best = table.index[0]
    row = table.loc[best]
    dflt, top = f"`{default}`", f"`{best}`"
    if best == default or row[metric] <= table.loc[default, metric]:
        rival = table.drop(index=default).iloc[0] if len(table) > 1 else None
        if rival is not None and (table[metric] == table.loc[default, metric]).all():
            return (f"On this folder, use {dflt}: every configuration ties with it at "
                    f"{metric} {table.loc[default, metric]:.{d}f} on its "
                    f"{counted(questions, 'question')}, "
                    f"so they cannot tell the configurations apart; more questions, harder "
                    f"ones, or smaller chunks (chunk_size) would.")
        tail = "" if rival is None else (
            f" (the best other, `{rival.name}`, {rival['Δ']:+.{d}f} {metric}, 95 % CI "
            f"{rival['95% CI low']:+.{d}f} … {rival['95% CI high']:+.{d}f})")
        return (f"On this folder, use {dflt}: no configuration scores a higher {metric} on "
                f"its {counted(questions, 'question')}{tail}.")
    gain = (f"{row['Δ']:+.{d}f} {metric} over {dflt} (95 % CI {row['95% CI low']:+.{d}f} "
            f"… {row['95% CI high']:+.{d}f}, p = {row['p']:.3f}, Holm-adjusted "
            f"{row['Holm p']:.3f})")
    tied = [str(name) for name in table.index
            if abs(table.loc[name, metric] - row[metric]) < 1e-9]  # the table's order
    if row["95% CI low"] > 0 and row["Holm p"] < ALPHA:
        also = (f" ({joined(tied[1:], code=True)} {'ties' if len(tied) == 2 else 'tie'})"
                if len(tied) > 1 else "")
        return f"On this folder, use {top}{also}: {gain} on {questions} questions."
    named = gain.replace(" (", f" for {top} (", 1)  # the gain is the first's
    lead = (f"{joined(tied, code=True)} tie for the highest {metric}, {named}" if len(tied) > 1
            else f"{top} scores highest, {gain}")
    return (f"On this folder, {lead}, but on {questions} questions that gain is within noise: "
            f"keep {dflt}, or add questions before switching.")
