"""A PDF's outline (its bookmarks) as headings placed on their pages.

What it is: `outline(document, page_index)` reads each outline entry of a pdfminer document
as (level, title, top) by the page it points at, the top its destination names (/XYZ's,
/FitH's, /FitBH's, /FitR's) or None; `placed(boxes, heads)` gives each entry of one page
the top it is written at: its own, else that of the first text box printing its title, else
the page's top. The PDF loader (`ragkit.loaders.pdf`) writes each as a `#` line there.

Why the page's top for an entry that names no place (a /Fit bookmark, as reportlab's
`bookmarkPage` and many exporters write it, or a null /XYZ top): it means "this page", and
written after the page's text, as it was, it made that text the section before it — every
section's text was cited under the heading of the one before.

What it is not: a reader of named destinations' or actions' other targets (a link to
another file or a URL names no page here: the entry is left out), nor of an outline's
colours, styles or open and closed state.
"""
from __future__ import annotations

import re

from ragkit.outline import one_line

Head = tuple[int, str, float | None]  # an outline entry: (level, title, top or None)
# where in a destination its top is, by its kind (PDF 32000-1, 12.3.2.2): [page /XYZ left
# top zoom], [page /FitH top], [page /FitBH top], [page /FitR left bottom right top]; /Fit,
# /FitB, /FitV and /FitBV name a page and no place on it
_TOP_AT = {"XYZ": 3, "FitH": 2, "FitBH": 2, "FitR": 5}
MAX_ENTRIES = 100_000  # outline entries read (a book has hundreds, a merged archive thousands)


def pdf_text(value: object) -> str:
    """A PDF string (its Title field, an outline title) as text: PDFDocEncoding or UTF-16
    by its mark, as pdfminer decodes it; "" for what is no string."""
    from pdfminer.utils import decode_text  # deferred: pdfminer loads only for a PDF
    if isinstance(value, bytes):
        return decode_text(value)
    return value if isinstance(value, str) else ""


def _top(dest) -> float | None:
    """The top a destination array points at, None when it names none: a /Fit, a null top
    ("where the reader is"), or 0, which producers write for the same (reportlab's "0,0,0"
    keeps the reader's place) — a heading at a page's bottom edge would head nothing."""
    kind = getattr(dest[1], "name", dest[1]) if len(dest) > 1 else ""
    kind = kind.decode("latin-1") if isinstance(kind, bytes) else kind
    at = _TOP_AT.get(kind) if isinstance(kind, str) else None
    value = dest[at] if at is not None and len(dest) > at else None
    return float(value) if isinstance(value, (int, float)) and value else None


def outline(document, page_index: dict[int, int]) -> dict[int, list[Head]]:
    """Outline entries by page index (`page_index`: page object id -> index): (level,
    title, top or None), in outline order. A damaged outline, or an entry pointing nowhere,
    is left out: the text is still worth reading."""
    # deferred: pdfminer loads only for a PDF
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral
    found: dict[int, list[Head]] = {}
    try:
        entries = list(_entries(document))
    except PDFNoOutlines:
        return found
    except Exception:  # a damaged outline: the text is still worth reading, headings aside
        return found
    for level, title, dest, action in entries:
        try:
            if dest is None and action is not None:
                dest = resolve1(action).get("D")
            dest = resolve1(dest)
            if isinstance(dest, (str, bytes, PSLiteral)):
                name = dest.name if isinstance(dest, PSLiteral) else dest
                dest = resolve1(document.get_dest(name))
            if isinstance(dest, dict):
                dest = resolve1(dest.get("D"))
            page = page_index.get(getattr(dest[0], "objid", None))
            top = _top(dest)
        except Exception:  # an entry pointing nowhere is left out
            continue
        if page is not None and one_line(pdf_text(title)):
            found.setdefault(page, []).append((level, one_line(pdf_text(title)), top))
    return found


def _entries(document):
    """(level, title, destination, action) of each outline entry, in outline order, as
    pdfminer's `get_outlines` gives them — but walked with a stack of its own: pdfminer's
    recursion, one level per sibling, ran out of stack at about 980 bookmarks in a row (a
    merged PDF, a report with one per page), and every heading was lost without a word. An
    entry met again (a cycle in a damaged file) is not walked twice; past `MAX_ENTRIES` the
    walk stops."""
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import resolve1
    if "Outlines" not in document.catalog:
        raise PDFNoOutlines
    todo, seen = [(document.catalog["Outlines"], 0)], set()
    while todo and len(seen) < MAX_ENTRIES:
        ref, level = todo.pop()
        key = getattr(ref, "objid", None)  # a direct dictionary has none, and no cycle
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        entry = resolve1(ref)
        if not isinstance(entry, dict):
            continue
        if "Title" in entry and ("A" in entry or "Dest" in entry):
            yield level, resolve1(entry["Title"]), entry.get("Dest"), entry.get("A")
        if "Next" in entry:  # the sibling after this entry and its children
            todo.append((entry["Next"], level))
        if "First" in entry and "Last" in entry:
            todo.append((entry["First"], level + 1))


def placed(boxes: list[tuple[str, float]], heads: list[Head]) -> list[tuple[int, str, float]]:
    """`heads` of one page each with the top it is written at: its own, else that of the
    first of the page's (text, top) `boxes` printing its title, else the page's top (inf:
    above every box; see the module docstring)."""
    def printed(title: str) -> float:
        return next((top for text, top in boxes if printed_at(text, title) is not None),
                    float("inf"))
    return [(level, title, printed(title) if top is None else top)
            for level, title, top in heads]


# Where a sentence starts inside a box: after a full stop, "!", "?" or ":" and a space.
_SENTENCE_END = re.compile(r"[.!?:]\s+")


def printed_at(text: str, title: str) -> int | None:
    """Where the box `text` prints the outline entry `title` (case aside): at its start, or
    at a sentence's start inside it when the next sentence starts after the title (a capital
    or a digit, or the box ends): pdfminer read a heading printed close above its paragraph
    as part of the box before it ("… residential systems. 1 Electrical requirements The T7
    is powered …"), and the bookmark was stacked at the page's top while its title stayed
    in the text. None when the box does not print it so: a title inside a sentence ("see
    Electrical requirements for …") is no heading."""
    folded, wanted = text.casefold(), title.casefold()
    if folded.startswith(wanted):
        return 0
    for end in _SENTENCE_END.finditer(text):
        at = end.end()
        after = text[at + len(title):at + len(title) + 2].lstrip()
        if folded.startswith(wanted, at) and (not after or after[0].isupper()
                                              or after[0].isdigit()):
            return at
    return None
