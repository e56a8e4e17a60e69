"""Figures the notebooks show: grouped bars of metrics, a per-kind heat map, sweep curves.

Plain matplotlib, one function per figure, each returning the `Figure` so a notebook can
save or restyle it. Numbers are drawn on the figure, rounded, so a reader need not squint.
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def metric_bars(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                title: str = "", ylabel: str = "Pass@k (%)") -> plt.Figure:
    """Grouped bars: one group per method (row of `table`), one bar per metric."""
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(table)), 3.8))
    width = 0.8 / len(metrics)
    x = np.arange(len(table))
    for i, metric in enumerate(metrics):
        bars = ax.bar(x + (i - (len(metrics) - 1) / 2) * width, table[metric], width,
                      label=metric)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xticks(x, table.index)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 105)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def kind_heatmap(table: pd.DataFrame, title: str = "", metric: str = "Pass@20") -> plt.Figure:
    """Heat map of a kinds × methods table (as from `ragkit.evaluate.by_kind`)."""
    values = table.drop(columns=["queries"], errors="ignore")
    fig, ax = plt.subplots(figsize=(1.4 * values.shape[1] + 2.5, 0.45 * len(values) + 1.2))
    image = ax.imshow(values.to_numpy(dtype=float), cmap="RdYlGn", vmin=0, vmax=100,
                      aspect="auto")
    ax.set_xticks(range(values.shape[1]), values.columns)
    labels = [f"{k} ({n})" for k, n in zip(values.index, table.get("queries", values.index))]
    ax.set_yticks(range(len(values)), labels if "queries" in table else values.index)
    for (row, col), value in np.ndenumerate(values.to_numpy(dtype=float)):
        if not np.isnan(value):
            ax.text(col, row, f"{value:.0f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label=metric)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def ladder_bars(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Fail@20 per rung of seed 002's ladder (as from `ragkit.ladder.ladder_table`), this
    run beside the article's, each bar labelled with its value and its reduction from the
    first rung. A rung that was not measured shows "not built"."""
    fig, ax = plt.subplots(figsize=(max(7, 1.9 * len(table)), 4))
    x = np.arange(len(table))
    ours = table["Fail@20"].astype(float)
    bars = ax.bar(x - 0.2, ours.fillna(0), 0.4, label="this run")
    ax.bar_label(bars, fontsize=8, labels=[
        "not built" if np.isnan(v) else (f"{v:.1f}" if i == 0 else f"{v:.1f}\n−{r:.0f}%")
        for i, (v, r) in enumerate(zip(ours, table["reduction %"]))])
    ref = ax.bar(x + 0.2, table["article Fail@20"], 0.4, label="Anthropic's article",
                 color="lightgray", edgecolor="gray")
    ax.bar_label(ref, fontsize=8, labels=[
        f"{v:.1f}" if i == 0 else f"{v:.1f}\n−{r:.0f}%"
        for i, (v, r) in enumerate(zip(table["article Fail@20"], table["article reduction %"]))])
    ax.set_xticks(x, [name.replace(" (", "\n(") for name in table.index], fontsize=8)
    ax.set_ylabel("Fail@20 = 100 − Pass@20 (%)")
    ax.set_ylim(0, max(float(np.nanmax(ours.to_numpy())) if ours.notna().any() else 0,
                       float(table["article Fail@20"].max())) * 1.3 + 1)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _metric_lines(table: pd.DataFrame, metrics: Sequence[str], xlabel: str, log: bool
                  ) -> tuple[plt.Figure, plt.Axes, np.ndarray]:
    """A figure with one line per metric over the sweep points (rows of `table`)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    x = np.asarray(table.index, dtype=float)
    for metric in metrics:
        ax.plot(x, table[metric], marker="o", markersize=4, label=metric)
    if log:
        ax.set_xscale("log")
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Pass@k (%)" if all(m.startswith("Pass@") for m in metrics) else "metric")
    ax.grid(alpha=0.3)
    return fig, ax, x


def _sweep_curve(table: pd.DataFrame, metrics: Sequence[str], chosen: float | None,
                 xlabel: str, title: str, log: bool) -> plt.Figure:
    """Metric vs sweep point (rows of `table`), one line per metric, `chosen` marked."""
    fig, ax, x = _metric_lines(table, metrics, xlabel, log)
    if chosen is not None:
        ax.axvline(chosen, color="gray", linestyle="--", linewidth=1)
        ax.annotate(f"chosen {chosen:g}", (chosen, 1), xycoords=("data", "axes fraction"),
                    xytext=(4, -12), textcoords="offset points", fontsize=8, color="gray")
    ax.legend(loc="lower center", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def alpha_curve(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                chosen: float | None = None, title: str = "") -> plt.Figure:
    """Metric vs the dense weight α of convex fusion (as from `ragkit.tune.sweep_table`)."""
    return _sweep_curve(table, metrics, chosen, "dense weight α (BM25 weight 1 − α)", title,
                        log=False)


def rrf_k_curve(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                chosen: float | None = None, title: str = "") -> plt.Figure:
    """Metric vs RRF's k on a log axis (as from `ragkit.tune.sweep_table`)."""
    return _sweep_curve(table, metrics, chosen, "RRF k (log scale)", title, log=True)


def tradeoff_curve(table: pd.DataFrame, metrics: Sequence[str], right: str, xlabel: str,
                   title: str = "", right_label: str | None = None) -> plt.Figure:
    """Quality against a price: `metrics` (left axis) and the column `right` (right axis,
    dashed, e.g. latency or dollars) per sweep point (rows of `table`, log-scaled x)."""
    fig, ax, x = _metric_lines(table, metrics, xlabel, log=True)
    other = ax.twinx()
    other.plot(x, table[right], color="gray", linestyle="--", marker="s", markersize=4,
               label=right)
    other.set_ylabel(right_label or right)
    other.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    extra = other.get_legend_handles_labels()
    ax.legend(lines[0] + extra[0], lines[1] + extra[1], loc="lower right", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return fig
