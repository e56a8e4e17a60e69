"""Where a figure's parts go so that `ragkit.figure_check` finds them readable: layout moves
that `ragkit.plots` and a sweep's figures make after drawing, each tried a step at a time
until the check passes.

- `outside_legend(fig, ...)`: the figure's legend outside the axes, right of them or below.
- `fit_category_labels(fig, ax, labels, legend)`: bar categories' tick labels that do not
  collide. A long label is broken before its parenthesis first, so each part reads whole
  (notebook 07's "agentic\\n(loop of notebook 05)", where wrapping at spaces made "agentic
  (loop / of notebook / 05)"), then after its commas (notebook 06's "Self-RAG\\n(judge
  prompts,\\nstand-in)", not "Self-RAG (judge / prompts, stand-in)"); a legend right of the
  axes goes below them when that gives the labels room; wrapping at spaces and a tilt come
  last. On several axes at once: a sweep's panels share its parameter's values.
- `fit_number_labels(fig, axes, values, labels)`: number ticks (a sweep's chunk sizes) that
  do not collide, on a log axis when a linear one crowds the small ones.
- `ticks_up_to(ax, top)`: the value axis's ticks from its bottom to `top` only, whatever room
  it keeps above (a percentage axis with headroom for labels showed a "120" tick).
- `with_note(note)`: a figure function whose first axes' title gets a line of `note()` under
  it (the parameters a notebook run changed: `ragkit.notebook_params.run_note`).
- `apart(fig, ax, twin)`: a twin axes' points (a price on the right) clear of the axes' points
  (`ragkit.figure_check.TWIN_GAP_PT` between markers). Notebook 04 drew Pass@k at k = 20
  (99.7 %) and its price ($0.00758) as one dot: the twin's top goes higher (its line lower)
  and the axes' bottom lower (its lines higher).

What it is not: a check (`ragkit.figure_check` judges; a move that finds no readable layout
leaves the figure for the check to refuse) nor a figure (`ragkit.plots` draws them). Why
apart: the plots module draws, this one only places what is drawn.
"""
from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ragkit.figure_check import tick_label_problems, twin_point_problems

if TYPE_CHECKING:       # matplotlib is imported when a figure is drawn, not with ragkit
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LABEL_WIDTH = 18     # characters past which a category label is long
NOTE_WIDTH = 70      # characters a line of a title's note holds
Drawn = TypeVar("Drawn", bound=Callable[..., Any])
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


def _readable_ticks(fig: Figure, axes: Sequence[Axes], texts: Sequence[str],
                    at: Sequence[float] | None = None) -> bool:
    for ax in axes:
        ax.set_xticks(range(len(texts)) if at is None else at, texts)
    fig.canvas.draw()
    return not tick_label_problems(fig, fig.canvas.get_renderer())


def _tilt(axes: Sequence[Axes]) -> None:
    """The last resort: every x tick label turned 30°, its end at its tick."""
    for tick in (t for ax in axes for t in ax.get_xticklabels()):
        tick.set(rotation=30, ha="right", rotation_mode="anchor")


def fit_category_labels(fig: Figure, ax: Axes | Sequence[Axes], labels: Sequence[object],
                        legend: bool = False, qualified: bool = False) -> None:
    """Category tick labels that do not collide: as they are (unless `qualified`); else the
    long ones (over `LABEL_WIDTH` characters), then all, broken before their parenthesis;
    else the long ones broken after their commas too (`phrased`); else, with a `legend` (the
    figure's, right of the axes), the same with the legend below them, so the categories
    have the figure's width; else wrapped at spaces to ever narrower lines; else wrapped and
    tilted 30°. `qualified` labels start broken: the ladder's rungs read name over qualifier
    ("+ rerank" over "(top 150 → 20)"); on one line, side by side, they ran together.
    `ax` may be several axes with these categories (a sweep's panels), each labelled alike."""
    axes = list(ax) if isinstance(ax, Sequence) else [ax]
    names = [str(t) for t in labels]
    tries = [names, [broken(t, LABEL_WIDTH) for t in names], [broken(t) for t in names],
             [phrased(t, LABEL_WIDTH) for t in names]][1 if qualified else 0:]
    for below in (False, True) if legend else (False,):
        if below:
            fig.legends[-1].remove()
            outside_legend(fig, below=True)
        if any(_readable_ticks(fig, axes, texts) for texts in tries):
            return
    for width in (LABEL_WIDTH, 14, 11):
        if _readable_ticks(fig, axes, [textwrap.fill(t, width) for t in names]):
            return
    _tilt(axes)


def fit_number_labels(fig: Figure, axes: Sequence[Axes], values: Sequence[float],
                      labels: Sequence[str]) -> None:
    """Ticks at `values` (a swept parameter's numbers, on every axes of `axes`) labelled
    `labels` that do not collide: on a linear axis; else, all above 0, on a log axis, where
    doubling values stand evenly apart (chunk sizes 64, 128, … 2048: "64" ran into "128");
    else tilted 30°. What it is not: for categories, which `fit_category_labels` places."""
    for log in (False, True) if len(values) and min(values) > 0 else (False,):
        if log:
            for ax in axes:
                ax.set_xscale("log")
                ax.minorticks_off()
        if _readable_ticks(fig, axes, labels, values):
            return
    _tilt(axes)


def ticks_up_to(ax: Axes, top: float) -> None:
    """Keep the y ticks from the axis's bottom to `top` (see the module)."""
    ax.set_yticks([t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= top])


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


def with_note(note: Callable[[], str]) -> Callable[[Drawn], Drawn]:
    """Decorate a figure function: the line `note()` gives, if any, is written under the
    title of the figure's first axes, wrapped at `NOTE_WIDTH` characters."""
    def decorate(draw: Drawn) -> Drawn:
        @functools.wraps(draw)
        def drawn(*args: Any, **kwargs: Any) -> Figure:
            fig, line = draw(*args, **kwargs), note()
            if line and fig.axes:
                title = fig.axes[0].get_title()
                fig.axes[0].set_title("\n".join(filter(None, [
                    title, textwrap.fill(line, NOTE_WIDTH)])))
            return fig
        return drawn  # type: ignore[return-value]
    return decorate
