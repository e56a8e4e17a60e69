"""The cookbook report's tables: a recorded TABLE (`ragkit.record`) as a captioned HTML table.

What it is: `table_html(entry, label)` draws one table; `number_format` decides how a
column's numbers are rounded by what it measures (p-values and rank measures 3 decimals,
points of 100 1 decimal, token counts whole — one decimal only in a column named a mean —,
dollars with `ragkit.money.dollars`' 3 significant digits, anything else 3 significant
digits; a count of calls, turns and the like 3 significant digits whatever the caption, so
a whole number reads as one) and `cell_text` prints one cell, every number from 1,000 up with
thousands separators (a column read 2458 beside 18,559), a row or column label that is a
number too (`number_label`: 07's "1000" queries). A two-level (pandas MultiIndex) header
is drawn as two header rows, its upper parts spanning their columns — also for results
written before tables kept `column_levels`, whose labels are the tuples' text. Headers wrap
(after "_" and "/" too), a cell's run of 30 characters without a space breaks anywhere
(`breakable`; shorter words stay whole) and the row names stay in sight when a table still
scrolls, so a 1,400-px-wide window shows every column of the cookbook's tables.

What it is not: the page (`ragkit.report` lays out sections, styles and the headline) nor
a rounding of stored numbers: results.json keeps them exact.
"""
from __future__ import annotations

import ast
import html
import math
import re
from typing import Any

import numpy as np

from ragkit.evaluate import metric_decimals
from ragkit.money import dollars
from ragkit.record import label

RANK = ("R@", "MRR", "nDCG", "P@")
POINTS = re.compile(r"Pass@|Fail@|%")
MONEY = "$"  # the `number_format` of dollars
TUPLE = re.compile(r"^\(.*,.*\)$")  # a MultiIndex label as results stored it before levels
LONG = re.compile(r"\S{30,}")  # a name this long without a space may break anywhere
COUNTS = {"calls", "turns", "documents", "chunks", "queries", "questions", "files", "pages"}
NUMBER = re.compile(r"^(-?)([1-9]\d{3,})(\.\d+)?$")  # a label that is a number from 1000 up
_FIXED = re.compile(r"\.(\d+)f$")  # a format of fixed decimals: ".1f", ",.3f"


def number_format(column: str, caption: str = "") -> str:
    """The format of a table's numbers, decided by its column name, else its caption:
    p-values (a column named "p" or ending in " p", e.g. "Holm p", as
    `ragkit.evaluate.round_metrics`) and rank measures (R@k, MRR, nDCG) 3 decimals; token
    counts (a column naming "tokens", as `round_metrics` reads it) whole numbers, or one
    decimal in a column named a mean ("mean tokens"); points of 100 (Pass@k, Fail@k, %) 1
    decimal; dollars (a "$" in the name) `MONEY`; anything else 3 significant digits. A
    p-value, token or other count column (naming one of `COUNTS`, e.g. "listwise calls") is
    never formatted by its caption: "95 %" there would print p = 0.04 as 0.0, and "Pass@k"
    in a caption printed 10048.4 input tokens and 1.0 calls per query (a mean of 12.3 calls
    keeps its decimal)."""
    if column == "p" or column.endswith(" p"):
        return ".3f"
    words = column.lower().replace("_", " ").split()
    if metric_decimals(column) == 0:  # token counts
        return ".1f" if "mean" in words else ".0f"
    if COUNTS.intersection(words) and not POINTS.search(column) and "$" not in column:
        return ".3g"
    for text in (column, caption):
        if text.startswith(RANK) or text in ("MRR",):
            return ".3f"
        if POINTS.search(text):
            return ".1f"
        if "$" in text:
            return MONEY
    return ".3g"


def cell_text(value: Any, form: str = ".3g") -> str:
    """One table cell: numbers formatted (missing as "–"), anything else as text; a number
    from 1,000 up has thousands separators whatever its format (`2,458`, `10,048.4`).

    `MONEY` prints `ragkit.money.dollars` (3 significant digits: `$0.0109`, `$1,020`); a
    whole number stays a count even there (a "documents" column of a table in $). A fixed
    number of decimals rounds as numpy does, as the notebook's table showed it: a "chosen %"
    of 0.05 was 0.0 there and 0.1 in the report."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if form == MONEY:
        return dollars(value)
    if form == ".3g" and abs(value) >= 1000:
        return f"{value:,.0f}"
    if (fixed := _FIXED.search(form)) and abs(value) < 1e15:  # as `round_metrics` rounds
        value = float(np.round(value, int(fixed[1]))) + 0.0  # + 0.0: no "-0.0"
    return format(value, form if "," in form or form.endswith("g") else "," + form)


def number_label(text: str) -> str:
    """A row or column label as shown: one that is a number from 1,000 up with thousands
    separators ("1000" → "1,000", "12500.5" → "12,500.5"), any other left as it is (an id
    such as "00123" or "v1000" is not a number)."""
    found = NUMBER.match(text)
    if not found:
        return text
    sign, whole, decimals = found.groups()
    return f"{sign}{int(whole):,}{decimals or ''}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _parts(text: str) -> tuple[str, ...] | None:
    """The parts of a label stored as a tuple's text ("('Pass@5', '95% low')"), else None."""
    if not TUPLE.match(text):
        return None
    try:
        parts = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return tuple(map(str, parts)) if isinstance(parts, tuple) else None


def column_levels(entry: dict[str, Any]) -> tuple[list[str], list[list[str]] | None]:
    """A table's column labels and, for a two-level header, each column's parts (from
    `column_levels`, or parsed from the tuple texts of results written before it)."""
    levels = entry.get("column_levels")
    if not levels:
        parsed = [_parts(c) for c in entry["columns"]]
        if parsed and all(parsed) and len({len(p) for p in parsed}) == 1:
            levels = [list(p) for p in parsed if p]
    if not levels:
        return list(entry["columns"]), None
    return [label(tuple(parts)) for parts in levels], levels


def _header(text: str) -> str:
    """A header label as HTML that may wrap after "_" and "/" too (snake_case, $/query)."""
    return re.sub(r"([_/])", r"\1<wbr>", html.escape(text))


def header_rows(entry: dict[str, Any]) -> str:
    """The `<thead>` rows: one of column labels, or one per level of a two-level header,
    equal neighbouring parts of an upper level merged into one cell over their columns.
    A column's label is right-aligned over numbers, left-aligned over text."""
    columns, levels = column_levels(entry)
    if levels is None:
        levels = [[c] for c in columns]
    numeric = [not any(isinstance(row[i], str) for row in entry["data"])
               for i in range(len(columns))]
    depth = len(levels[0]) if levels else 1
    corner = html.escape(entry.get("index_name") or "")
    rows = []
    for level in range(depth):
        cells, start = [], 0
        while start < len(levels):
            end = start + 1
            while (level < depth - 1 and end < len(levels)
                   and levels[end][:level + 1] == levels[start][:level + 1]):
                end += 1
            span = f" colspan='{end - start}'" if end - start > 1 else ""
            align = " class='num'" if all(numeric[start:end]) else ""
            text = number_label(levels[start][level])
            cells.append(f"<th{align}{span}>{_header(text)}</th>")
            start = end
        first = (f"<th rowspan='{depth}'>{corner}</th>" if depth > 1 else f"<th>{corner}</th>")
        rows.append(f"<tr>{first if level == 0 else ''}{''.join(cells)}</tr>")
    return "".join(rows)


def breakable(text: str) -> str:
    """`text` as HTML, each run of `LONG` characters without a space in a `long` span, which
    may break anywhere: a 150-character file name pushed every other column of its table
    out of the window, while shorter words stay whole (a label broken as "embeddin|gs" in a
    table wider than the window, every cell as narrow as its column's header)."""
    return LONG.sub(lambda m: f"<span class='long'>{m.group()}</span>", html.escape(text))


def table_html(entry: dict[str, Any], title: str) -> str:
    """A recorded table as a captioned HTML table; a column of differences in one metric
    (`column_metrics`) formatted as that metric."""
    caption = entry.get("caption") or ""
    columns, _ = column_levels(entry)
    of_metric = entry.get("column_metrics") or {}
    forms = [number_format(of_metric.get(c, c), caption) for c in columns]
    rows = []
    for name, values in zip(entry["index"], entry["data"]):
        parts = _parts(name)
        cells = "".join(f"<td class='{'num' if _is_number(v) or v is None else ''}'>"
                        f"{breakable(cell_text(v, form))}</td>"
                        for v, form in zip(values, forms))
        name = label(parts) if parts else number_label(name)
        rows.append(f"<tr><th>{breakable(name)}</th>{cells}</tr>")
    return (f"<figure><figcaption><b>{title}.</b> {html.escape(caption)}</figcaption>"
            f"<div class='scroll'><table><thead>{header_rows(entry)}</thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div></figure>")
