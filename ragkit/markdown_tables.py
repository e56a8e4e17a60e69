"""Markdown table rows as the offline answerer reads them: each body row's cells under its
table's column names.

What it is: `row_headers(text)`, the header cells of every table row of a passage that sits
under its table's header and rule rows, and `labelled_row(row, header)`, the row as
"Tool: Chainsaw | Deposit: 50 euros"; `table_head(before)`, the header and rule a passage
that opens inside a table left behind; `TABLE_RULE` and `ROW` match a rule row and a row.
The quote and its citation keep the row as written; only what is embedded and shown is
labelled (`ragkit.extractive_units.readings`).

What it is not: a Markdown parser. A table without outer pipes ("a | b") is no table here.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.fences import passage_unfenced

_CELL = r"\s*:?-+:?\s*"
TABLE_RULE = re.compile(rf"^\s*(?:\|?{_CELL}(?:\|{_CELL})+\|?|\|{_CELL}\|)\s*$")
# A Markdown table row: outer pipes, at most three spaces in (four make a code block).
ROW = re.compile(r" {0,3}\|.*\|[ \t]*$")
_PIPE = re.compile(r"(?<!\\)\|")
_WRAPPED = re.compile(r"(\*\*|__|\*|_)(.+)\1")  # a header cell in emphasis: "**Tool**"


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row, "| a | b |" → ["a", "b"] (an escaped "\\|" is
    part of its cell)."""
    return [cell.strip().replace("\\|", "|") for cell in _PIPE.split(row.strip())[1:-1]]


def row_headers(text: str) -> dict[int, list[str]]:
    """The column names of every table row of `text` that sits under its table's header and
    rule rows, by the offset where the row's line starts; one pass over the lines. A table's
    header is its first row, and only when the second is the rule (`| --- |`): a row of
    dashes further down (a group separator) is no rule, and the row above it no header. A
    line inside a code fence is no row (`ragkit.fences.passage_unfenced`)."""
    out: dict[int, list[str]] = {}
    state, header, offset = 0, [], 0  # state: 0 no table, 1 after its first row, 2 body
    for line in passage_unfenced(text).splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if not ROW.match(body):
            state = 0
        elif state == 0:
            state, header = 1, [m[2] if (m := _WRAPPED.fullmatch(c)) else c
                                for c in _cells(body)]
        elif state == 1:
            state = 2 if TABLE_RULE.match(body) else 3  # 3: a table without a header
        elif state == 2 and not TABLE_RULE.match(body):
            out[offset] = header
        offset += len(line)
    return out


def labelled_row(text: str, header: Sequence[str] | None) -> str:
    """A quoted table row `text` as an answer shows it and the answerer reads it: each cell
    under its column's name (`header`, from `row_headers`), "Tool: Chainsaw | Deposit: 50
    euros". A bare "| Chainsaw | 50 euros |" did not say which number was asked for, and read
    so, e5-small's cosine to "How much is the deposit for the chainsaw?" was 0.846 (under the
    answerer's threshold: declined), under its columns 0.86 or more (answered). `text` as it
    is without a header, or with another number of cells than the header has."""
    row = _cells(text) if header and ROW.match(text.strip("\r\n")) else []
    if len(row) != len(header or ()) or not any(header or ()):
        return text
    return " | ".join(f"{name}: {cell}" if name else cell
                      for name, cell in zip(header, row) if cell)


def table_head(before: str) -> str | None:
    """The header and rule rows of the table that `before` (the text of a document up to
    where a passage starts) ends inside, as written ("| Tool | Deposit |\\n| --- | --- |\\n"),
    so rows a chunk boundary cut from their header are still read under its columns. ""
    when `before` ends in no table or in one without a header; None when every line of
    `before` is a row (the header lies further back: the caller looks there)."""
    lines = before.splitlines(keepends=True)
    first = len(lines)
    while first and ROW.match(lines[first - 1].rstrip("\r\n")):
        first -= 1
    if first == len(lines) or (before and not before.endswith("\n")):
        return ""
    if not first:
        return None
    run = lines[first:first + 2]
    return "".join(run) if len(run) == 2 and TABLE_RULE.match(run[1]) else ""
