"""An HTML table as the loader writes it: its own rows' cell texts, and whether its first
row names the columns (then `ragkit.loaders.markdown.TextBuilder.rows` writes a Markdown rule
row under it).

What it is not: a layout reader. A cell spanning columns (`colspan`) is one cell, so such a
row has fewer cells than its header, and the answerer shows it as written.
"""
from __future__ import annotations

from collections.abc import Callable


def _children(node, tags: tuple[str, ...]) -> list:
    return [child for child in node.iter() if child.tag in tags]


def _rows(table) -> list:
    """A table's own rows (in `<thead>`/`<tbody>`/`<tfoot>` or not), not a nested table's."""
    rows = []
    for child in table.iter():
        rows += [child] if child.tag == "tr" else _children(child, ("tr",)) \
            if child.tag in ("thead", "tbody", "tfoot") else []
    return rows


def _names_columns(row) -> bool:
    """Whether a table's first row holds its columns' names: it is in `<thead>`, or every
    cell of it is a `<th>` (a first column of `<th>`s names rows, not columns)."""
    cells = _children(row, ("th", "td"))
    return row.parent is not None and row.parent.tag == "thead" or bool(cells) and all(
        cell.tag == "th" for cell in cells)


def table(node, flat: Callable[[object], str]) -> tuple[list[list[str]], bool]:
    """The rows of the `<table>` `node`, each a list of its cells' texts (`flat` of each
    `<th>`/`<td>`), and whether the first row names the columns."""
    rows = _rows(node)
    return ([[flat(cell) for cell in _children(row, ("th", "td"))] for row in rows],
            bool(rows) and _names_columns(rows[0]))
