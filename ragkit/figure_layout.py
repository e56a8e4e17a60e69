"""Where a figure's parts go so that `ragkit.figure_check` finds them readable: layout moves
that `ragkit.plots` makes after drawing, each tried a step at a time until the check passes.

- `outside_legend(fig, ...)`: the figure's legend outside the axes, right of them or below.
- `fit_category_labels(fig, ax, labels, legend)`: bar categories' tick labels that do not
  collide. A long label is broken before its parenthesis first, so each part reads whole
  (notebook 07's "agentic\\n(loop of notebook 05)", where wrapping at spaces made "agentic
  (loop / of notebook / 05)"), then after its commas (notebook 06's "Self-RAG\\n(judge
  prompts,\\nstand-in)", not "Self-RAG (judge / prompts, stand-in)"); a legend right of the
  axes goes below them when that gives the labels room; wrapping at spaces and a tilt come
  last.
- `apart(fig, ax, twin)`: a twin axes' points (a price on the right) clear of the axes' points
  (`ragkit.figure_check.TWIN_GAP_PT` between markers). Notebook 04 drew Pass@k at k = 20
  (99.7 %) and its price ($0.00758) as one dot: the twin's top goes higher (its line lower)
  and the axes' bottom lower (its lines higher).

What it is not: a check (`ragkit.figure_check` judges; a move that finds no readable layout
leaves the figure for the check to refuse) nor a figure (`ragkit.plots` draws them). Why
apart: the plots module draws, this one only places what is drawn.
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragkit.figure_check import tick_label_problems, twin_point_problems

if TYPE_CHECKING:       # matplotlib is imported when a figure is drawn, not with ragkit
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LABEL_WIDTH = 18     # characters past which a category label is long
# (share of the axes' span added below it, factor on the twin's top), tried in this order
APART_STEPS = ((0.0, 1.0), (0.0, 1.25), (0.15, 1.0), (0.15, 1.25), (0.15, 1.5), (0.3, 1.5),
               (0.3, 2.0), (0.6, 2.5), (1.0, 3.0))


def outside_legend(fig: Figure, handles: Sequence[Any] | None = None,
                   labels: Sequence[str] | None = None, below: bool = False) -> None:
    """The figure's legend outside the axes (right of them, or `below` them)."""
    args = () if handles is None else (handles, labels)
    if below:
        fig.legend(*args, loc="outside lower center", ncols=min(4, len(labels or [1] * 4)),
                   fontsize=8)
    else:
        fig.legend(*args, loc="outside right upper", fontsize=8)


def broken(label: str, longer: int = 0) -> str:
    """`label` broken before each parenthesis when over `longer` characters: the name, then
    what qualifies it, each read whole ("agentic" over "(loop of notebook 05)")."""
    return label.replace(" (", "\n(") if len(label) > longer else label


def phrased(label: str, longer: int = 0) -> str:
    """`label` `broken`, and broken after each comma, when over `longer` characters: each
    phrase read whole ("Self-RAG" over "(judge prompts," over "stand-in)")."""
    return broken(label, longer).replace(", ", ",\n") if len(label) > longer else label


def _readable_ticks(fig: Figure, ax: Axes, texts: Sequence[str]) -> bool:
    ax.set_xticks(range(len(texts)), texts)
    fig.canvas.draw()
    return not tick_label_problems(fig, fig.canvas.get_renderer())


def fit_category_labels(fig: Figure, ax: Axes, labels: Sequence[object],
                        legend: bool = False, qualified: bool = False) -> None:
    """Category tick labels that do not collide: as they are (unless `qualified`); else the
    long ones (over `LABEL_WIDTH` characters), then all, broken before their parenthesis;
    else the long ones broken after their commas too (`phrased`); else, with a `legend` (the
    figure's, right of the axes), the same with the legend below them, so the categories
    have the figure's width; else wrapped at spaces to ever narrower lines; else wrapped and
    tilted 30°. `qualified` labels start broken: the ladder's rungs read name over qualifier
    ("+ rerank" over "(top 150 → 20)"); on one line, side by side, they ran together."""
    names = [str(t) for t in labels]
    tries = [names, [broken(t, LABEL_WIDTH) for t in names], [broken(t) for t in names],
             [phrased(t, LABEL_WIDTH) for t in names]][1 if qualified else 0:]
    for below in (False, True) if legend else (False,):
        if below:
            fig.legends[-1].remove()
            outside_legend(fig, below=True)
        if any(_readable_ticks(fig, ax, texts) for texts in tries):
            return
    for width in (LABEL_WIDTH, 14, 11):
        if _readable_ticks(fig, ax, [textwrap.fill(t, width) for t in names]):
            return
    for tick in ax.get_xticklabels():
        tick.set(rotation=30, ha="right", rotation_mode="anchor")


def apart(fig: Figure, ax: Axes, twin: Axes) -> None:
    """Move `twin`'s top up and `ax`'s bottom down (`APART_STEPS`) until every marker of a
    line of one stands clear of the other's (`twin_point_problems`); the twin starts at 0.
    Leaves the last step when none is enough."""
    (low, high), top = ax.get_ylim(), twin.get_ylim()[1]
    for pad, room in APART_STEPS:
        ax.set_ylim(low - pad * (high - low), high)
        twin.set_ylim(0, top * room)
        fig.canvas.draw()  # laid out first: the check measures pixels
        if not twin_point_problems(fig):
            return
