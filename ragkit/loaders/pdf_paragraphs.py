"""A paragraph of a PDF that pdfminer laid out as two text boxes, read as one.

What it is: `rejoined(boxes, headings)`, one page's (text, top) boxes in reading order with
a box joined to the one before it when that one ends mid-sentence — no sentence-final or
clause-final mark (`. ! ? : ; …`, a closing bracket or quote, a `{`) — and the box goes on in lower
case: "They simply measure how many instructions" + "were executed for each line" is one
paragraph. A hyphen between the two ("manip-" "ulation") is marked for the document to
decide, as inside a box (`ragkit.loaders.pdf_hyphens`); a soft hyphen is joined.

Why: pdfminer groups lines into boxes by their spacing, and a LibreOffice export spaces the
lines of one paragraph unevenly, so one paragraph came out as two: the chunker cut at the
false break ("… since it is the" ended a chunk) and the offline answerer quoted half a
sentence. In a folder of LibreOffice PDFs a break before a lower-case word was 498 of 2,502
paragraph breaks (2 in the same pages as HTML).

What it is not: a join across pages (the page map marks where each page starts), nor of a
heading (`headings`: the page's outline or type-size titles) with its neighbours, nor of a
box that starts with a capital, a digit or a bullet: a new sentence, list item or row.
"""
from __future__ import annotations

import re
from collections.abc import Collection

from ragkit.loaders.pdf_hyphens import BREAK

# a box that ends a sentence or clause, or opens a block of code ("const {")
_ENDED = re.compile(r"[.!?:;…)\]{}\"'”’»]\s*$")
_HYPHENATED = re.compile(r"(?<=[^\W\d_])[-\u00ad]$")  # "manip-" at a box's end


def rejoined(boxes: list[tuple[str, float]], headings: Collection[str] = ()
             ) -> list[tuple[str, float]]:
    """`boxes` with each mid-sentence break between two boxes closed (module docstring);
    a box keeps the top of its first part."""
    titles = {title.casefold() for title in headings}
    out: list[tuple[str, float]] = []
    for text, top in boxes:
        if out and text[:1].islower() and not _ENDED.search(out[-1][0]) \
                and out[-1][0].casefold() not in titles and text.casefold() not in titles:
            before, at = out[-1]
            cut = _HYPHENATED.search(before)  # a hyphen: for the document to decide
            mark = BREAK if cut and cut.group() == "-" else ""
            out[-1] = (before[:cut.start()] + mark + text if cut else f"{before} {text}", at)
        else:
            out.append((text, top))
    return out
