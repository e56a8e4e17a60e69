"""Sentences about a sweep's table, formatted from it: notebook 03's α sweep on the test split.

What it is: `peak_sentence(table, chosen, split)`, where a sweep (`ragkit.tune.sweep_table`)
peaks against the point chosen on another split, points tied at the top named together.
What it is not: the sweep or the choice (`ragkit.tune`); it only words a table.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def peak_sentence(table: pd.DataFrame, chosen: float, split: str, metric: str = "Pass@5",
                  name: str = "α") -> str:
    """Where a sweep's `table` (`sweep_table`) peaks on `split`, against the `chosen` point,
    compared as shown (one decimal; failed points, NaN, left out). Points that tie at the
    top are named together: with `idxmax` alone a tie read "peaks at α = 0.6 (Pass@5 85.6
    against 85.6 at the chosen 0.7)"."""
    shown = table[metric].round(1).dropna()
    if shown.empty:
        return f"On the {split} split the sweep has no {metric} to compare."
    top = [_point(p) for p in shown.index if shown[p] == shown.max()]
    best, at, mine = f"{metric} {shown.max():.1f}", _listed(top), _point(chosen)
    if mine in top:
        others = [point for point in top if point != mine]
        tied = f", tied with {_listed(others)}" if others else ""
        return f"On the {split} split the sweep peaks at the chosen {name} = {mine} ({best}){tied}."
    against = f" against {shown[chosen]:.1f} at the chosen {mine}" if chosen in shown else ""
    return f"On the {split} split the sweep peaks at {name} = {at} ({best}{against})."


def _point(value: float) -> str:
    """A sweep point as prose writes it: 0.6, 1, 60, 1,000,000 (not 1e+06)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _listed(points: list[str]) -> str:
    """"0.6", "0.6 and 0.7", "0.5, 0.6 and 0.7" (`text_stats.joined` sets 1,000 in backticks)."""
    return points[0] if len(points) == 1 else f"{', '.join(points[:-1])} and {points[-1]}"
