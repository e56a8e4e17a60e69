"""Text cells of the CSV files ragkit writes, safe to open in a spreadsheet.

What it is: one rule for every CSV of the project (the review sheet, `ragkit eval
--per-query`, a sweep's `sweep.csv`). A text cell starting with `=`, `+`, `-`, `@`, a tab, a
line break or NUL gets a leading `'`, so a spreadsheet shows it as text instead of running it
as a formula (OWASP's CSV injection advice, ASVS 1.2.10): a question id or a swept value
`=HYPERLINK(...)` would otherwise run when the file is opened. `sheet_cell` guards one text,
`unsheet_cell` takes the quote off again (a sheet read back), `csv_text` writes a table with
every text cell and column name guarded and its numbers as they are (-0.5 stays a number).

What it is not: a CSV writer of its own (the callers' `csv` module or pandas quote and
separate the cells), nor an escape of control characters for a terminal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a type only: pandas is loaded by the caller that made the table
    import pandas as pd

FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n", "\0")  # \r reads back as \n


def sheet_cell(text: str) -> str:
    """`text` as a CSV cell: a leading "'" when it opens with a formula sign, and also before
    a text that already opens with "'" and then a formula sign (`'-5 °C' or colder…` lost its
    quote on the way back through `unsheet_cell`)."""
    return "'" + text if text.lstrip("'").startswith(FORMULA) else text


def unsheet_cell(text: str) -> str:
    """A cell `sheet_cell` wrote, back as the text it was given."""
    return text[1:] if text.startswith("'") and text.lstrip("'").startswith(FORMULA) else text


def _guarded(value: Any) -> Any:
    return sheet_cell(value) if isinstance(value, str) else value


def csv_text(table: pd.DataFrame) -> str:
    """`table` as CSV text without its index, each text cell and column name through
    `sheet_cell`; numbers, missing values and the table itself are left as they are."""
    out = table.copy()
    for column in out.columns:
        if out[column].dtype.kind == "O":  # text (or mixed): numeric columns hold no text
            out[column] = out[column].map(_guarded)
    out.columns = [_guarded(c) for c in out.columns]
    return out.to_csv(index=False)
