"""What a notebook hands the cookbook report: tables, numbers and its one-line finding.

Called from notebook cells (re-exported by `ragkit.cookbook`):
- `record_metrics(name, table, caption=...)`: a methods × metrics table — the one way a
  notebook records a metric table; each `method metric` cell of `metrics` also becomes a
  number, which is what `ragkit cookbook sweep` tabulates and plots.
- `record(name, value)`: any other DataFrame (a table), number, or JSON-able value.
- `finding(text)`: the notebook's one-line finding, shown in the report's headline; it is
  also displayed in the notebook so the committed outputs carry it.

What it is not: a results database. Under `ragkit cookbook` the kernel's environment names
a records file (`RAGKIT_RECORD`) and each call merges into it; run interactively (JupyterLab,
nbval) the calls store nothing, so notebooks behave the same everywhere.

The records file: `{"tables": {name: TABLE}, "numbers": {name: number},
"values": {name: JSON}, "finding": str | null}`, where TABLE is `{"caption", "metrics",
"index_name", "index", "columns", "data"}` (pandas' "split" layout; NaN is null), plus
`"column_levels"` when the columns are a two-level (MultiIndex) header, and
`"column_metrics"` (column -> metric) for columns holding differences in one metric.
"""
from __future__ import annotations

import json
import numbers
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ragkit.atomic import write_text
from ragkit.documents import RagkitError
from ragkit.jsonl import read_json
from ragkit.notebook_data import prose

RECORD_ENV = "RAGKIT_RECORD"
EMPTY = {"tables": {}, "numbers": {}, "values": {}, "finding": None}


def load_records(path: Path) -> dict[str, Any]:
    """The records file at `path`, or empty records when it was never written."""
    if not path.is_file():
        return json.loads(json.dumps(EMPTY))
    return {**json.loads(json.dumps(EMPTY)), **read_json(path)}


def _update(change) -> None:
    """Apply `change(store)` to the records file of the current cookbook run (if any)."""
    path = os.environ.get(RECORD_ENV)
    if not path:
        return
    store = load_records(Path(path))
    change(store)
    write_text(path, json.dumps(store, indent=1))


def _cell(value: Any) -> Any:
    """A table cell as JSON: numbers exact, missing values null, anything else as text."""
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return None
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def label(value: Any) -> str:
    """A row or column label as text; a tuple of a pandas MultiIndex as its parts joined by
    " · ", empty parts and a part repeating the one before it left out: ("Pass@5",
    "95% low") → "Pass@5 · 95% low", ("Pass@5", "Pass@5") → "Pass@5"."""
    if not isinstance(value, tuple):
        return str(value)
    parts: list[str] = []
    for part in map(str, value):
        if part and (not parts or parts[-1] != part):
            parts.append(part)
    return " · ".join(parts)


def table_json(table: pd.DataFrame, caption: str = "",
               metrics: tuple[str, ...] = ()) -> dict[str, Any]:
    """A DataFrame as a records TABLE (labels as text, values as JSON numbers or text).

    Two-level (MultiIndex) labels are joined by `label`; the columns' levels are also kept
    as `column_levels` (each column's parts), which the report draws as stacked headers.
    Columns that hold differences in one metric (`table.attrs["metric_columns"]`, as
    `ragkit.questions.method_table` sets them) are kept as `column_metrics`, so the report
    shows them with that metric's decimals (an MRR gain of 0.083 read 0.1)."""
    names = [n for n in table.index.names if n is not None]
    entry = {"caption": caption, "metrics": list(metrics),
             "index_name": " · ".join(map(str, names)) if names else None,
             "index": [label(i) for i in table.index],
             "columns": [label(c) for c in table.columns],
             "data": [[_cell(v) for v in row] for row in table.itertuples(index=False)]}
    if isinstance(table.columns, pd.MultiIndex):
        entry["column_levels"] = [[str(part) for part in c] for c in table.columns]
    of_metric, metric = table.attrs.get("metric_columns", ()), table.attrs.get("metric")
    if of_metric and metric:
        entry["column_metrics"] = {label(c): str(metric) for c in table.columns
                                   if c in of_metric}
    return entry


def table_frame(entry: dict[str, Any]) -> pd.DataFrame:
    """A records TABLE back as a DataFrame (two-level columns as a MultiIndex again)."""
    columns: Any = entry["columns"]
    if entry.get("column_levels"):
        columns = pd.MultiIndex.from_tuples([tuple(c) for c in entry["column_levels"]])
    frame = pd.DataFrame(entry["data"], index=entry["index"], columns=columns)
    frame.index.name = entry.get("index_name")
    return frame


def record(name: str, value: Any, caption: str = "") -> None:
    """Save a DataFrame (a table), a number, or any JSON-able value under `name`.

    `record("finding", text)` is the same as `finding(text)`. Metric tables go through
    `record_metrics`, so their numbers reach sweeps.
    """
    if name == "finding" and isinstance(value, str):
        return finding(value)

    def change(store: dict) -> None:
        if isinstance(value, pd.DataFrame):
            store["tables"][name] = table_json(value, caption)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            store["numbers"][name] = value.item() if hasattr(value, "item") else value
        else:
            store["values"][name] = json.loads(json.dumps(value, default=str))
    _update(change)


def record_metrics(name: str, table: pd.DataFrame,
                   metrics: tuple[str, ...] = ("Pass@5", "Pass@20"), caption: str = "") -> None:
    """Record a methods × metrics table, and each `method metric` cell as a number.

    The `metrics` columns become numbers, exact (a sweep's MRR 0.969 read 0.97, a cost of
    $0.0031 read 0.0); a metric the table lacks
    is an error (a typo would otherwise vanish from sweeps). A table of one metric broken
    down by something else (e.g. Pass@20 by question kind) passes `metrics=()` and says
    what it holds in its `caption`.
    """
    missing = [m for m in metrics if m not in table.columns]
    if missing:
        raise RagkitError(f"record_metrics {name!r}: no column {', '.join(map(repr, missing))}; "
                          f"columns: {', '.join(map(str, table.columns))}")
    present = tuple(metrics)
    cells = {f"{label(method)} {metric}": float(table.loc[method, metric])
             for method in table.index for metric in present}

    def change(store: dict) -> None:
        store["tables"][name] = table_json(table, caption, present)
        store["numbers"].update(cells)
    _update(change)


def finding(text: str) -> None:
    """The notebook's one-line finding: shown in the notebook, recorded for the headline."""
    text = " ".join(str(text).split())
    if not text:
        raise RagkitError("finding: the text is empty")
    from IPython.display import display
    display(prose(f"**Finding:** {text}"))

    def change(store: dict) -> None:
        store["finding"] = text
    _update(change)
