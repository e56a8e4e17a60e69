"""Figures the notebooks show: grouped bars of metrics, a per-kind heat map, sweep curves.

Plain matplotlib, one function per figure, each returning the `Figure` so a notebook can
save it. Numbers are drawn on the figure, rounded, so a reader need not squint. Each function
is `ragkit.figure_check.checked`: it raises `UnreadableFigure` rather than return a figure
whose tick labels overlap, whose data fill a sliver of an axis, whose legend covers data or
whose twin axes draw two points in (or near) one spot. So the value axes are set from the data, and
`ragkit.figure_layout` places the rest: long category labels broken before their parenthesis
(else wrapped, else tilted), legends outside the axes, a price on a right axis off the
quality points. A notebook run with a parameter changed (`ragkit cookbook run -p`, papermill,
an edited `parameters` cell) names it under each figure's title.
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ragkit.figure_check import SERIES_STYLES, checked
from ragkit.figure_layout import (apart, fit_category_labels, outside_legend, ticks_up_to,
                                  with_note)
from ragkit.ladder import FAILED
from ragkit.money import dollars
from ragkit.notebook_params import run_note
from ragkit.text_stats import counted

HEADROOM = 1.18      # value axes end this far above the highest bar (room for its label)
KIND_WIDTH = 28      # characters a line of a heat map's row label holds


def figure(draw):
    """`checked`, and a run that changed a notebook parameter named under the title
    (`run_note`): a figure copied out of a run with `tokenizer = 'words'` read as the
    default run's."""
    return checked(with_note(run_note)(draw))


def _top(values: np.ndarray) -> float:
    """The upper limit of a value axis over non-negative bars: the data's, with headroom."""
    finite = values[np.isfinite(values)]
    high = float(finite.max()) if finite.size else 0.0
    return high * HEADROOM if high > 0 else 1.0


@figure
def metric_bars(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                title: str = "", ylabel: str = "Pass@k (%)",
                legend: Mapping[str, str] | None = None) -> plt.Figure:
    """Grouped bars: one group per method (row of `table`), one bar per metric; the value
    axis runs from 0 to just above the highest bar, each bar labelled with its value as
    tables show it: dollars (a metric named with "$") as `ragkit.money` writes them, three
    significant digits below 1, else one decimal (rounded to whole numbers, 99.7 read "100"
    beside a true 100.0, $0.0698 read "0.07"). `legend` names a metric in the legend other
    than by its column (notebook 07's "$/query" beside "$/query uncached" is the cached
    cost, which its legend did not say)."""
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(table)), 3.8), layout="constrained")
    width = 0.8 / len(metrics)
    x = np.arange(len(table))
    values = table[list(metrics)].to_numpy(dtype=float)
    small = np.nanmax(np.abs(values)) < 1 if np.isfinite(values).any() else False
    labels: list[list[str]] = []
    for i, metric in enumerate(metrics):
        bars = ax.bar(x + (i - (len(metrics) - 1) / 2) * width, table[metric], width,
                      label=(legend or {}).get(metric, metric))
        shown = [("" if not np.isfinite(v) else dollars(v) if "$" in metric
                  else f"{v:.3g}" if small else f"{v:.1f}") for v in values[:, i]]
        labels.append(shown)
    # side by side, labels longer than "99.7" ran into each other ("$0.00306$0.00306"):
    # then they stand upright above their bars, with the room that takes
    upright = len(metrics) > 1 and max((len(t) for row in labels for t in row), default=0) > 4
    for bars, shown in zip(ax.containers, labels):
        ax.bar_label(bars, labels=shown, fontsize=8, rotation=90 if upright else 0,
                     padding=2)
    ax.set_ylabel(ylabel)
    low = float(np.nanmin(values)) if np.isfinite(values).any() else 0.0
    top = _top(values)
    ax.set_ylim(min(0.0, low * HEADROOM), top * 1.15 if upright else top)
    if "%" in ylabel and ax.get_ylim()[1] > 100 >= np.nanmax(values, initial=0.0):
        ticks_up_to(ax, 100)  # room for the labels above the bars, no "120" tick of percent
    ax.set_title(title)
    if len(metrics) > 1:
        outside_legend(fig)
    fit_category_labels(fig, ax, list(table.index), legend=len(metrics) > 1)
    return fig


@figure
def kind_heatmap(table: pd.DataFrame, title: str = "", metric: str = "Pass@20") -> plt.Figure:
    """Heat map of a kinds × methods table (as from `ragkit.evaluate.by_kind`) of a percentage
    `metric` (its colour scale runs 0 … 100, labelled "Pass@20 (%)"). A kind's
    label is wrapped at `KIND_WIDTH` characters, its row made taller: a question kind of 150
    characters drew a figure over 20 inches wide, which the report shrank past reading."""
    values = table.drop(columns=["queries"], errors="ignore")
    labels = ([f"{k} ({n})" for k, n in zip(values.index, table["queries"])]
              if "queries" in table else [str(k) for k in values.index])
    labels = [textwrap.fill(label, KIND_WIDTH) for label in labels]
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    fig, ax = plt.subplots(figsize=(1.4 * values.shape[1] + 2.5,
                                    (0.15 + 0.3 * lines) * len(values) + 1.2))
    image = ax.imshow(values.to_numpy(dtype=float), cmap="RdYlGn", vmin=0, vmax=100,
                      aspect="auto")
    ax.set_xticks(range(values.shape[1]), values.columns)
    ax.set_yticks(range(len(values)), labels)
    fig.canvas.draw()  # wider by what the labels take past the 1.3 inches a short one does
    drawn = max((t.get_window_extent().width for t in ax.get_yticklabels()), default=0.0)
    fig.set_size_inches(fig.get_size_inches() + (max(0.0, drawn / fig.dpi - 1.3), 0.0))
    for (row, col), value in np.ndenumerate(values.to_numpy(dtype=float)):
        if not np.isnan(value):
            # one decimal, as tables and prose give it; white on the map's dark ends
            ax.text(col, row, f"{value:.1f}", ha="center", va="center", fontsize=8,
                    color="white" if value >= 85 or value <= 15 else "black")
    fig.colorbar(image, ax=ax, label=f"{metric} (%)")  # its unit, as the bars' axis gives it
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _fail_label(fail: float, reduction: float | None, failed: object = None) -> str:
    """A ladder bar's label: its Fail@20, the questions it fails (`failed`, when the table
    counts them: "2 questions" over "failed", narrow enough for its bar; not "2 failed",
    read as a count behind Fail@20 3.2 of 47 questions), and, under the Fail@20 it is a
    change of, its change from the first rung in words that follow the table's "reduction
    %" — "35% lower", "200% higher" (not "+200%" beside a table's -200.0; "71% fewer" under
    "8 questions failed" read as a change of the count); none when there is no change to
    state (the first rung, or a first rung with no failures to reduce)."""
    lines = [f"{fail:.1f}"]
    if reduction is not None and not np.isnan(reduction):  # of Fail@20, so beside it
        shown = abs(reduction)
        lines.append("no change" if round(shown) == 0 else
                     f"{shown:.0f}% {'lower' if reduction > 0 else 'higher'}")
    if failed is not None and not pd.isna(failed):
        lines += [counted(int(failed), "question"), "failed"]  # narrow: over a 0.4 bar
    return "\n".join(lines)


@figure
def ladder_bars(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Fail@20 per rung of Anthropic's Contextual Retrieval ladder (as from
    `ragkit.ladder.ladder_table`), this run beside the article's, each bar labelled with its
    value, the questions it fails when the table counts them (`counts=True`), and its change
    from the first rung in words ("35% lower"). A rung that was not measured shows "not
    built". A rung's name stands over its qualifier ("+ rerank" over "(top 150 → 20)"),
    a long qualifier broken after its commas, else wrapped, else tilted
    (`ragkit.figure_layout.fit_category_labels`, as every bar chart's categories)."""
    counts = FAILED in table.columns  # "0 questions" is wider than a bar: more room
    fig, ax = plt.subplots(figsize=(max(7, (2.8 if counts else 2.2) * len(table)), 4))
    x = np.arange(len(table))
    ours = table["Fail@20"].astype(float)
    failed = table[FAILED] if counts else [None] * len(table)
    bars = ax.bar(x - 0.2, ours.fillna(0), 0.4, label="this run")
    ax.bar_label(bars, fontsize=8, labels=[
        "not built" if np.isnan(v) else _fail_label(v, None if i == 0 else r, n)
        for i, (v, r, n) in enumerate(zip(ours, table["reduction %"], failed))])
    ref = ax.bar(x + 0.2, table["article Fail@20"], 0.4, label="Anthropic's article",
                 color="lightgray", edgecolor="gray")
    ax.bar_label(ref, fontsize=8, labels=[
        _fail_label(v, None if i == 0 else r)
        for i, (v, r) in enumerate(zip(table["article Fail@20"], table["article reduction %"]))])
    ax.set_ylabel("Fail@20 = 100 − Pass@20 (%)")
    ax.set_ylim(0, max(float(np.nanmax(ours.to_numpy())) if ours.notna().any() else 0,
                       float(table["article Fail@20"].max())) * 1.3 + 1)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(title)
    ax.tick_params(axis="x", labelsize=8)
    fit_category_labels(fig, ax, list(table.index), qualified=True)
    fig.tight_layout()
    return fig


def _metric_lines(table: pd.DataFrame, metrics: Sequence[str], xlabel: str, log: bool
                  ) -> tuple[plt.Figure, plt.Axes, np.ndarray]:
    """A figure with one line per metric over the sweep points (rows of `table`), each in a
    style of its own (`SERIES_STYLES`): with one marker for all, the answerable questions
    quoting their span (65.0 %) lay under the unanswerable ones declined (64.3 %); with one
    line width, all but the edges of its markers."""
    fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    x = np.asarray(table.index, dtype=float)
    for n, metric in enumerate(metrics):
        marker, size, width = SERIES_STYLES[n % len(SERIES_STYLES)]
        ax.plot(x, table[metric], marker=marker, markersize=size, linewidth=width, label=metric)
    if log:
        ax.set_xscale("log")
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Pass@k (%)" if all(m.startswith("Pass@") for m in metrics) else "metric")
    ax.grid(alpha=0.3)
    return fig, ax, x


def _sweep_curve(table: pd.DataFrame, metrics: Sequence[str], chosen: float | None,
                 xlabel: str, title: str, log: bool, label: str = "chosen",
                 legend_below: bool = False) -> plt.Figure:
    """Metric vs sweep point (rows of `table`), one line per metric, `chosen` marked and
    labelled `label` ("chosen", or e.g. "default" for a point the sweep did not pick)."""
    fig, ax, x = _metric_lines(table, metrics, xlabel, log)
    if chosen is not None:
        low, high = ax.get_ylim()  # headroom, so the label sits above every line
        ax.set_ylim(low, high + 0.1 * (high - low))
        ax.axvline(chosen, color="gray", linestyle="--", linewidth=1)
        ax.annotate(f"{label} {chosen:g}", (chosen, 1), xycoords=("data", "axes fraction"),
                    xytext=(4, -12), textcoords="offset points", fontsize=8, color="gray")
    outside_legend(fig, below=legend_below)
    ax.set_title(title)
    return fig


@figure
def alpha_curve(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                chosen: float | None = None, title: str = "") -> plt.Figure:
    """Metric vs the dense weight α of convex fusion (as from `ragkit.tune.sweep_table`)."""
    return _sweep_curve(table, metrics, chosen, "dense weight α (BM25 weight 1 − α)", title,
                        log=False)


@figure
def rrf_k_curve(table: pd.DataFrame, metrics: Sequence[str] = ("Pass@5", "Pass@10", "Pass@20"),
                chosen: float | None = None, title: str = "", label: str = "chosen"
                ) -> plt.Figure:
    """Metric vs RRF's k on a log axis (as from `ragkit.tune.sweep_table`); `chosen` is
    marked and labelled `label`."""
    return _sweep_curve(table, metrics, chosen, "RRF k (log scale)", title, log=True,
                        label=label)


@figure
def tradeoff_curve(table: pd.DataFrame, metrics: Sequence[str], right: str, xlabel: str,
                   title: str = "", right_label: str | None = None,
                   left_label: str | None = None) -> plt.Figure:
    """Quality against a price: `metrics` (left axis, `left_label` naming their unit) and the
    column `right` (right axis, dashed, e.g. latency or dollars) per sweep point (rows of
    `table`, log-scaled x). A price's point stands clear of every quality's point
    (`ragkit.figure_layout.apart`: notebook 04's Pass@k and price at k = 20 were one dot)."""
    fig, ax, x = _metric_lines(table, metrics, xlabel, log=True)
    if left_label:
        ax.set_ylabel(left_label)
    other = ax.twinx()
    other.plot(x, table[right], color="gray", linestyle="--", marker="s", markersize=4,
               label=right)
    other.set_ylabel(right_label or right)
    other.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    extra = other.get_legend_handles_labels()
    outside_legend(fig, lines[0] + extra[0], lines[1] + extra[1], below=True)
    ax.set_title(title)
    apart(fig, ax, other)
    return fig


@figure
def decline_curve_plot(table: pd.DataFrame, chosen: float | None = None,
                       title: str = "") -> plt.Figure:
    """The offline extractive answerer's decline trade-off (as from
    `ragkit.answering.decline_curve`): the share of answerable questions quoting their golden
    span and of unanswerable ones declined, against the decline threshold, `chosen` marked."""
    fig = _sweep_curve(table, list(table.columns), chosen, "decline threshold (retrieval "
                       "strength below it: I don't know)", title, log=False, legend_below=True)
    fig.axes[0].set_ylabel("% of questions")
    fig.axes[0].set_ylim(-2, 112)  # headroom above 100 % for the threshold's label
    return fig


@figure
def gain_intervals(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Each configuration's difference from the default with its 95 % interval (as from
    `ragkit.questions.method_table`): one horizontal bar per rival, all of one colour, the
    default's line at 0, so a bar whose whisker crosses the line is a gain (or loss) within
    noise. When every
    rival ties with the default exactly (a few easy questions), the figure says so in words
    instead: there is no bar to draw."""
    rivals = table[table["p"].notna()]
    metric = table.attrs.get("metric", "metric")
    default = table.attrs.get("default", "the default")
    bounds = rivals[["Δ", "95% CI low", "95% CI high"]].to_numpy(float)
    if not np.any(bounds):  # every rival ties exactly: no bar to draw, say so in words
        fig, ax = plt.subplots(figsize=(7, 1.6), layout="constrained")
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"Every configuration ties with {default} on these "
                f"{table.attrs.get('questions', len(rivals))} questions:\n"
                f"each difference in {metric}, and each interval, is 0.\n"
                "More questions, or harder ones, are needed to tell them apart.",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        return fig
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rivals) + 1.6), layout="constrained")
    y = np.arange(len(rivals))[::-1]
    delta = rivals["Δ"].to_numpy(float)
    errors = np.vstack([delta - rivals["95% CI low"].to_numpy(float),
                        rivals["95% CI high"].to_numpy(float) - delta])
    # one colour: green for Δ > 0 and grey else read as "significant" (notebook 08); whether
    # a gain is real is the whisker's crossing of 0, and the table's Holm p
    ax.barh(y, delta, color="tab:blue", xerr=errors, capsize=3, error_kw={"elinewidth": 1})
    ax.axvline(0, color="black", linewidth=1)
    ax.set_yticks(y, list(rivals.index), fontsize=8)
    # from the data alone: a floor of 1 squeezed MRR's differences (-0.32 … +0.07) into a
    # sixth of a -1.1 … 1.1 axis, and the figure was refused
    reach = float(np.nanmax(np.abs(bounds), initial=0.0)) or 1.0
    ax.set_xlim(-reach * 1.1, reach * 1.1)
    ax.set_xlabel(f"{metric} minus {default}'s "
                  f"(95 % bootstrap interval)")
    ax.set_title(title)
    return fig
