"""The plots of `ragkit cookbook sweep`: which recorded numbers share a panel
(`metric_panels`), and each swept parameter's figure (`parameter_figure`, saved by
`plot_parameter` as `sweep_<parameter>.png`).

What it is not: the sweep (`ragkit.sweep` runs the points and writes the tables) nor a
notebook figure (those are `ragkit.plots`). Checked as those are
(`ragkit.figure_check.checked`: tick labels apart, every series in sight, legends off the
data, the data filling their axes), a panel keeps a percentage inside 0 … 100 and a rank
measure inside 0 … 1, its parameter's values are placed as `ragkit.figure_layout` places a
bar chart's categories (numbers on a log axis when a linear one crowds them), and its text
is drawn as written (`plain_text`: a swept folder named `a$b_$c` is no TeX).
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ragkit.figure_check import checked
from ragkit.figure_layout import fit_category_labels, fit_number_labels, ticks_up_to
from ragkit.text_stats import joined

if TYPE_CHECKING:       # matplotlib loads when a sweep draws its plots, not with ragkit
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def metric_panels(records: Sequence[dict]) -> dict[str, list[str]]:
    """Panel title -> the recorded numbers drawn in it: a table's metric (one per method),
    or a number recorded alone. A table's panels are titled "METRIC · SUBJECT", SUBJECT its
    caption if every point gave the same one, else its name (a caption naming a swept split
    made a panel per split, each the mean over all points). Only the caption's subject,
    before its first ": ", is a title: what follows names the table's other columns, not the
    one metric a panel draws — notebook 08's MRR panel read "… difference in Pass@5, 95 %
    interval …" over absolute MRR, its Fail@20 panel "… Pass@k over …". Two tables of one
    subject are told apart by their names."""
    captions: dict[str, set[str]] = {}
    for rec in records:
        for name, table in rec["tables"].items():
            captions.setdefault(name, set()).add(table["caption"] or name)
    subjects = {name: next(iter(found)).split(": ", 1)[0] if len(found) == 1 else name
                for name, found in captions.items()}
    shared = list(subjects.values())
    subjects = {name: f"{subject} ({name})" if shared.count(subject) > 1 else subject
                for name, subject in subjects.items()}
    panels: dict[str, list[str]] = {}
    grouped = set()
    for rec in records:
        for name, table in rec["tables"].items():
            for metric in table["metrics"]:
                columns = [f"{method} {metric}" for method in table["index"]]
                key = f"{metric} · {subjects[name]}"
                panels.setdefault(key, [])
                panels[key] += [c for c in columns if c not in panels[key]]
                grouped.update(columns)
    for rec in records:
        for name in rec["numbers"]:
            if name not in grouped:
                panels.setdefault(name, [name])
    return panels


def plot_parameter(table: pd.DataFrame, parameter: str, panels: dict[str, list[str]],
                   path: Path, averaged: Sequence[str] = ()) -> Path:
    """`path`: `parameter_figure` saved as a PNG."""
    parameter_figure(table, parameter, panels, averaged).savefig(path, dpi=90)
    return path


@checked
def parameter_figure(table: pd.DataFrame, parameter: str, panels: dict[str, list[str]],
                     averaged: Sequence[str] = ()) -> Figure:
    """Each panel's numbers against `parameter` (mean over the other parameters; failed
    points left out), a matplotlib Figure drawn without pyplot, its text as written, and
    readable as a notebook's figures are (`checked`: else `UnreadableFigure`).

    The x label names the swept parameters `averaged` over (a point of BM25 at 46.8 was the
    mean of 41.9 and 51.7, a number no table held), and a panel whose every line is level
    says it is the same at every value: notebook 01's Korean section compares both
    tokenizers whatever `tokenizer` is, and its flat lines read as "no effect"."""
    # deferred: matplotlib loads only when a sweep draws its plots
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    columns = len(panels) if len(panels) < 3 else 3
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(4.2 * columns, 4.4 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    values = list(dict.fromkeys(table[parameter]))
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    x = values if numeric else list(range(len(values)))
    axes = []
    for number, (title, names) in enumerate(panels.items()):
        ax = fig.add_subplot(rows, columns, number + 1)
        axes.append(ax)
        drawn, level = [], len(values) > 1
        for n, name in enumerate(names):
            if name in table:
                y = [pd.to_numeric(table.loc[table[parameter] == v, name], errors="coerce")
                     .mean() for v in values]
                drawn += y
                level = level and len({round(v, 9) for v in y if v == v}) <= 1
                marker, dashes, size = _style(n, len(names))
                ax.plot(x, y, marker=marker, linestyle=dashes, markersize=size,
                        clip_on=False,  # a point at 100 % drawn whole
                        label=name.rsplit(" ", 1)[0] if name != title else None)
        said = f"{title} (the same at every {parameter})" if level and drawn else title
        ax.set_title(textwrap.fill(said, 48), fontsize=9)  # whole, on two lines if long
        ax.set_xlabel(f"{parameter}\n(each point: the mean over {joined(list(averaged))})"
                      if averaged else parameter)
        _metric_range(ax, title, names, drawn)
        ax.grid(alpha=0.3)
    if numeric:  # chunk sizes 64 … 2048 crowd a linear axis: then a log one
        fit_number_labels(fig, axes, values, [str(v) for v in values])
    else:  # long folder names ran into each other: broken, wrapped, else tilted
        fit_category_labels(fig, axes, values)
    for ax, names in zip(axes, panels.values()):
        if len(names) > 1:
            _legend_below(fig, ax)
    return fig


def _legend_below(fig: Figure, ax: Axes) -> None:
    """The axes' legend under its tick labels and x label, however tall those are drawn
    (wrapped, tilted): inside the axes, it covered the lines it names; at a fixed fraction
    below them, it covered labels wrapped onto two lines."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    below = ax.get_window_extent(renderer).y0 - ax.xaxis.get_tightbbox(renderer).y0
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
              borderaxespad=below * 72 / fig.dpi / 7 + 0.5, frameon=False)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h")  # 11 beside 5 dashes:
_DASHES = ("-", "--", "-.", ":", (0, (5, 1)))                         # 55 series unalike


def _style(n: int, count: int) -> tuple[str, str | tuple, float]:
    """Series `n` of `count`: (marker, dashes, marker size), a marker and dash of its own and
    a smaller marker than the one before (10 pt down to 3 pt), so methods that tie at every
    point (BM25, RRF and hybrid at 100 %) stay in sight. Not a cycle of five: the sixth
    series of notebook 03's chunkings (BM25 512/102) hid the first (BM25 256/0)."""
    return (_MARKERS[n % len(_MARKERS)], _DASHES[n % len(_DASHES)],
            round(10.0 * 0.3 ** (n / max(count - 1, 4)), 2))


def _metric_range(ax: Axes, title: str, names: Sequence[str], values: list[float]) -> None:
    """A percentage (Pass@k, Fail@k, %) stays inside 0 … 100 and a rank measure (R@k, MRR,
    nDCG) inside 0 … 1: autoscaling put a Pass@5 of 100 under a 104 axis and a Fail@20 of 0
    above −0.04. The numbers span at least a quarter of the axis, a flat line 2 % of the
    scale: a margin of 2 % under and over any numbers left notebook 04's MRR (0.810 and
    0.815, swept over rerank_candidates) a ninth of the axis, and the check refused it.
    The metric is the one the panel is titled by ("MRR · <caption>", `metric_panels`), not
    its caption: notebook 08's "MRR · … difference in Pass@5 …" drew MRR on 0 … 2.86."""
    shown = [v for v in values if v == v]  # NaN: a point that failed
    metric = title.split(" · ")[0] if " · " in title else " ".join([title, *names])
    top = (100.0 if any(m in metric for m in ("Pass@", "Fail@", "%")) else
           1.0 if any(m in metric for m in ("R@", "MRR", "nDCG")) else None)
    if not shown or top is None:
        return
    low, high = min(shown), max(shown)
    span = high - low
    pad = max(span * 0.15, min(top * 0.02, span * 1.5)) if span else top * 0.02
    ax.set_ylim(max(0.0, low - pad), min(top, high + pad))
    if high >= top:  # a line at 100 % lay on the frame: a sliver above it, no tick past it
        ax.set_ylim(ax.get_ylim()[0], top + 0.025 * (top - ax.get_ylim()[0]))
        ticks_up_to(ax, top)
