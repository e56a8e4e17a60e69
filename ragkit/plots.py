"""Figures the notebooks show: grouped bars of metrics and a per-kind heat map.

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
