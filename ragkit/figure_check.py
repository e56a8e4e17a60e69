"""Is a drawn figure readable? Five checks a reader's eye would make, run on a matplotlib
`Figure` after drawing it (`problems`), and a decorator (`checked`) that makes a figure
function refuse to return a figure that fails them; within `plain_text` (as in `checked`)
a figure's `$` signs are drawn as written, not as TeX math.

- **Tick labels**: no two tick labels of one axis overlap or nearly touch (their window
  extents, as drawn, less than `LABEL_GAP_PX` apart).
- **Data in view**: on each axis, the data (lines, bars, markers, images) reaches at least
  `MIN_SPAN` of the view — measured from the origin when the view holds 0, so bars of
  dollars on a 0–100 axis fail and a flat line far from 0 does not, nor one at 0 (a sweep's
  Fail@20 of 0 at every point, which no limits could pass).
- **Legends**: a legend's box covers no bar, no point and no stretch of a line.
- **Hidden lines**: no named line lies under another drawn in the same style for
  `HIDDEN_SHARE` of its points (two series level at most points read as one);
  `SERIES_STYLES` gives each series a style of its own.
- **Twin axes**: a line's markers stand `TWIN_GAP_PT` clear of those of a line on its twin
  (notebook 04's Pass@k, 99.7 %, and price, $0.00758, at k = 20 were one dot).

What it does not judge: colours, titles, whether the chart type suits the data. Why: the
committed notebooks store figures as PNGs, which no test can read; every figure function in
ragkit is `checked`, so a notebook that draws an unreadable figure fails where it draws it.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from scipy.spatial import KDTree

if TYPE_CHECKING:       # matplotlib is imported when a figure is checked, not with ragkit
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.transforms import Bbox

MIN_SPAN = 0.2          # the data must reach a fifth of the view on each axis
OVERLAP_PX = 1.0        # boxes overlapping by less than this many pixels do not count
LABEL_GAP_PX = 4.0      # tick labels closer than this many pixels read as one
HIDDEN_SHARE = 0.5      # a line with half its points under another line is hidden
TWIN_GAP_PT = 8.0       # points of clear space between markers of lines on twin axes
# (marker, marker size, line width) per series, each thinner than the one before, so a series
# drawn over another at the same values leaves the one under it in sight on both sides (with
# one width, 65.3 % of answerable questions quoting their span hid 64.3 % of unanswerable ones
# declined but their markers' edges). Solid: a dashed line is a figure's other quantity.
SERIES_STYLES = (("o", 6.0, 2.8), ("s", 4.5, 1.4), ("^", 3.5, 1.1), ("D", 3.0, 0.9),
                 ("v", 2.5, 0.8))
CHECKED: set[str] = set()   # "module.function" of every function decorated with `checked`

F = TypeVar("F", bound=Callable[..., Any])


class UnreadableFigure(ValueError):
    """A figure failed `problems`: the message lists what a reader could not read."""


def _title(ax) -> str:
    """An axes' title on one line, as a message quotes it (a line the layout wrapped after a
    hyphen joined back: "claude-\nhaiku-4-5" read "claude- haiku-4-5")."""
    return " ".join(re.sub(r"(?<=-)\n\s*", "", ax.get_title()).split()) or "untitled axes"


def _overlap(a: Bbox, b: Bbox, tolerance: float = OVERLAP_PX) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance and
            min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)


def _data_axes(fig: Figure) -> list[Axes]:
    """The figure's axes that hold data (colour bars left out)."""
    return [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]


def _shown_labels(axis, renderer) -> list[tuple[str, Bbox]]:
    low, high = sorted(axis.get_view_interval())
    out = []
    for tick in axis.get_major_ticks():
        label = tick.label1
        if (label.get_visible() and label.get_text().strip() and tick.get_visible()
                and low - 1e-9 * (abs(low) + 1) <= tick.get_loc() <= high * (1 + 1e-9) + 1e-9):
            out.append((label.get_text(), label.get_window_extent(renderer)))
    return out


def tick_label_problems(fig: Figure, renderer) -> list[str]:
    """Pairs of tick labels of one axis that overlap (or nearly touch) on the drawn figure."""
    found = []
    for ax in _data_axes(fig):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _shown_labels(axis, renderer)
            for i, (text, box) in enumerate(labels):
                for other, other_box in labels[i + 1:]:
                    if _overlap(box.padded(LABEL_GAP_PX / 2), other_box.padded(LABEL_GAP_PX / 2),
                                0.0):
                        found.append(f"{name} tick labels {text!r} and {other!r} overlap "
                                     f"({_title(ax)})")
    return found


def _data_points(ax: Axes) -> np.ndarray:
    """Corners of bars and images and the points of lines and markers, in data coordinates
    (artists drawn in axes coordinates, such as axhline, left out)."""
    from matplotlib.image import AxesImage
    from matplotlib.patches import Rectangle
    points = []
    for line in ax.lines:
        if line.get_visible() and line.get_transform() == ax.transData:
            points.append(np.asarray(line.get_xydata(), dtype=float))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible() and \
                patch.get_data_transform() == ax.transData:
            x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
            points.append(np.array([[x, y], [x + w, y + h]], dtype=float))
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if collection.get_visible() and len(offsets) and \
                collection.get_offset_transform() == ax.transData:
            points.append(offsets)
    for image in ax.images:
        if isinstance(image, AxesImage) and image.get_visible():
            x0, x1, y0, y1 = image.get_extent()
            points.append(np.array([[x0, y0], [x1, y1]], dtype=float))
    if not points:
        return np.empty((0, 2))
    stacked = np.concatenate(points)
    return stacked[np.isfinite(stacked).all(axis=1)]


def _reach(values: np.ndarray, view: tuple[float, float], scale: str) -> float:
    """How much of the view [low, high] the values reach, as a fraction (from 0 if the view
    holds 0 and the scale is linear)."""
    low, high = sorted(view)
    lo, hi = float(values.min()), float(values.max())
    if scale == "linear" and low <= 0 <= high:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if scale == "log":
        low, high, lo, hi = (np.log10(max(v, 1e-300)) for v in (low, high, lo, hi))
    if high <= low:
        return 1.0
    return (min(hi, high) - max(lo, low)) / (high - low)


def span_problems(fig: Figure) -> list[str]:
    """Axes whose data reaches less than `MIN_SPAN` of the view on an axis."""
    found = []
    for ax in _data_axes(fig):
        points = _data_points(ax)
        if not len(points):
            continue
        for i, (name, view, scale) in enumerate((("x", ax.get_xlim(), ax.get_xscale()),
                                                  ("y", ax.get_ylim(), ax.get_yscale()))):
            values = points[:, i]
            if values.min() == values.max() and (values.min() == 0 or not (
                    scale == "linear" and min(view) <= 0 <= max(view))):
                continue  # one value: a flat line is not blank, even at 0 (no limits fit)
            reach = _reach(values, view, scale)
            if reach < MIN_SPAN:
                found.append(f"the data reach {reach:.1%} of the {name} axis "
                             f"({values.min():g} to {values.max():g} on "
                             f"{min(view):g} to {max(view):g}; {_title(ax)}): "
                             "set the limits from the data")
    return found


def _line_points(line: Line2D, samples: int = 24) -> np.ndarray:
    """A line's points in pixels, with points along each drawn segment."""
    xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
    xy = xy[np.isfinite(xy).all(axis=1)]
    if line.get_linestyle() in ("None", "", " ") or len(xy) < 2:
        return xy
    t = np.linspace(0, 1, samples)[:, None, None]
    return (xy[:-1] + t * (xy[1:] - xy[:-1])).reshape(-1, 2)


def _legends(fig: Figure) -> Iterator[Any]:
    yield from fig.legends
    for ax in fig.axes:
        if ax.get_legend() is not None and ax.get_legend().get_visible():
            yield ax.get_legend()


def legend_problems(fig: Figure, renderer) -> list[str]:
    """Legends whose box covers a bar, a marker or a stretch of a line."""
    from matplotlib.patches import Rectangle
    found = []
    for legend in _legends(fig):
        box = legend.get_window_extent(renderer)
        for ax in _data_axes(fig):
            for patch in ax.patches:
                if isinstance(patch, Rectangle) and patch.get_visible() and \
                        _overlap(box, patch.get_window_extent(renderer)):
                    found.append(f"the legend covers a bar ({_title(ax)})")
                    break
            for line in ax.lines:
                if line.get_visible() and box.count_contains(_line_points(line)):
                    found.append(f"the legend covers the line {line.get_label()!r} ({_title(ax)})")
            for collection in ax.collections:
                offsets = np.asarray(collection.get_offsets(), dtype=float)
                if collection.get_visible() and len(offsets) and box.count_contains(
                        collection.get_offset_transform().transform(offsets)):
                    found.append(f"the legend covers markers ({_title(ax)})")
    return found


def _style(line: Line2D) -> tuple[str, str]:
    return str(line.get_marker()), str(line.get_linestyle())


def hidden_line_problems(fig: Figure) -> list[str]:
    """Named lines drawn under a line of the same marker and dashes, with a marker no larger,
    that passes within half a marker (at least 2 px) of `HIDDEN_SHARE` of their points. Each
    point's nearest point of the line above comes from a k-d tree (n log n): measured pair by
    pair, two lines of 2,000 points took 1.5 GB."""
    found = []
    for ax in _data_axes(fig):
        named = [line for line in ax.lines if line.get_visible()
                 and not str(line.get_label()).startswith("_")]
        drawn = sorted(named, key=lambda line: line.get_zorder())  # stable: then as added
        trees = [KDTree(path) if len(path) else None for path in map(_line_points, drawn)]
        for i, under in enumerate(drawn):
            xy = under.get_transform().transform(np.asarray(under.get_xydata(), dtype=float))
            xy = xy[np.isfinite(xy).all(axis=1)]
            reach = max(2.0, under.get_markersize() * fig.dpi / 72 / 2)
            for over, tree in zip(drawn[i + 1:], trees[i + 1:]):
                if not len(xy) or tree is None or _style(over) != _style(under) or \
                        over.get_markersize() < under.get_markersize():
                    continue
                if (tree.query(xy)[0] <= reach).mean() >= HIDDEN_SHARE:
                    found.append(f"the line {under.get_label()!r} is hidden under "
                                 f"{over.get_label()!r} ({_title(ax)})")
                    break
    return found


def _markers(line: Line2D) -> np.ndarray:
    """The pixels of a line's markers (none when it is drawn without markers)."""
    if str(line.get_marker()) in ("None", "none", "", " "):
        return np.empty((0, 2))
    xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
    return xy[np.isfinite(xy).all(axis=1)]


def twin_point_problems(fig: Figure) -> list[str]:
    """Markers of a named line less than `TWIN_GAP_PT` from markers of a named line on a twin
    axes (one sharing the x axis): values in two units drawn in (or near) one spot. Lines on
    one axes may meet: there equal heights are equal values."""
    found = []
    axes = _data_axes(fig)
    for i, ax in enumerate(axes):
        for twin in (t for t in axes[i + 1:] if ax.get_shared_x_axes().joined(ax, t)):
            for line in (n for n in ax.lines if not str(n.get_label()).startswith("_")):
                for other in (n for n in twin.lines if not str(n.get_label()).startswith("_")):
                    a, b = _markers(line), _markers(other)
                    reach = ((line.get_markersize() + other.get_markersize()) / 2
                             + TWIN_GAP_PT) * fig.dpi / 72
                    if len(a) and len(b) and (KDTree(b).query(a)[0] <= reach).any():
                        found.append(f"a point of {line.get_label()!r} sits less than "
                                     f"{TWIN_GAP_PT:g} pt from a point of "
                                     f"{other.get_label()!r} of the twin axes ({_title(ax)})")
    return found


def problems(fig: Figure) -> list[str]:
    """Everything unreadable about `fig`, drawn as it will be shown ([] when readable)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return tick_label_problems(fig, renderer) + span_problems(fig) + \
        legend_problems(fig, renderer) + hidden_line_problems(fig) + twin_point_problems(fig)


def check(fig: Figure) -> Figure:
    """`fig` itself if readable; else `UnreadableFigure` listing its problems."""
    found = problems(fig)
    if found:
        raise UnreadableFigure("unreadable figure: " + "; ".join(found))
    return fig


@contextmanager
def plain_text() -> Iterator[None]:
    """Within it, a figure's text is drawn as written, never as TeX math: a `$` pair in a
    title, label or tick (a data folder named `a$b_$c`, a cost) was set in italics, or
    stopped the drawing with matplotlib's ParseException."""
    import matplotlib  # deferred: matplotlib loads when a figure is drawn
    with matplotlib.rc_context({"text.parse_math": False}):
        yield


def checked(function: F) -> F:
    """Decorate a function that returns a `Figure`: the figure is `check`ed before it is
    returned, its text drawn as written (`plain_text`: a `$` pair is no TeX math), and the
    function is listed in `CHECKED` (tests look there)."""
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with plain_text():
            return check(function(*args, **kwargs))
    CHECKED.add(f"{function.__module__}.{function.__qualname__}")
    return wrapper  # type: ignore[return-value]
