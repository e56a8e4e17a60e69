"""Where a figure's parts go so that `ragkit.figure_check` finds them readable: layout moves
that `ragkit.plots` makes after drawing, each tried a step at a time until the check passes.

- `apart(fig, ax, twin)`: a twin axes' points (a price on the right) off the axes' points.
  Notebook 04 drew Pass@k at k = 20 (99.7 %) and its price ($0.00758) as one dot: the twin's
  top goes higher (its line lower) and the axes' bottom lower (its lines higher).

What it is not: a check (`ragkit.figure_check` judges; a move that finds no readable layout
leaves the figure for the check to refuse) nor a figure (`ragkit.plots` draws them). Why
apart: the plots module draws, this one only moves what is drawn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ragkit.figure_check import twin_point_problems

if TYPE_CHECKING:       # matplotlib is imported when a figure is drawn, not with ragkit
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# (share of the axes' span added below it, factor on the twin's top), tried in this order
APART_STEPS = ((0.0, 1.0), (0.0, 1.25), (0.15, 1.0), (0.15, 1.25), (0.15, 1.5), (0.3, 1.5),
               (0.3, 2.0))


def apart(fig: Figure, ax: Axes, twin: Axes) -> None:
    """Move `twin`'s top up and `ax`'s bottom down (`APART_STEPS`) until no marker of a line
    of one touches a marker of the other's (`twin_point_problems`); the twin starts at 0.
    Leaves the last step when none is enough."""
    (low, high), top = ax.get_ylim(), twin.get_ylim()[1]
    for pad, room in APART_STEPS:
        ax.set_ylim(low - pad * (high - low), high)
        twin.set_ylim(0, top * room)
        fig.canvas.draw()  # laid out first: the check measures pixels
        if not twin_point_problems(fig):
            return
