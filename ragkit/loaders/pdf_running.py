"""A PDF page's running header and footer: the lines a page prints in its top and bottom
bands that are not its text.

What it is: `without_running(pages)`, each page's boxes (`ragkit.loaders.pdf_headings.Box`,
band "top" or "bottom" for a box in that margin band) without the page numbers there ("12",
"iv", "Page 3 of 9") and without the lines whose text, numbers at its ends aside, recurs in
the same band on `RUNNING_PAGES` or more pages ("Chapter 4: Function reference").

Why: they split paragraphs that run on across pages and repeat in every chunk.

What it is not: a check of the body: a box outside the bands is kept whatever it says.
"""
from __future__ import annotations

import re

from ragkit.loaders.pdf_headings import Box

RUNNING_PAGES = 3  # pages a header or footer line recurs on before it counts as one
# a page number alone in a band: "12", "- 3 -", "Page 2 of 9", or a Roman numeral as front
# matter is numbered ("xiv"; a well-formed numeral only, so "mid", "civic", "dim" are text)
_ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_PAGE_NUMBER = re.compile(rf"^[-–—\s]*(?:page\s*)?(?:\d+|{_ROMAN})(?:\s*(?:/|of)\s*\d+)?"
                          r"[-–—\s]*$", re.I)
_ENDS = re.compile(r"^[\d\s|·•–—-]+|[\d\s|·•–—-]+$")  # "12 | Manual", "Manual — 12"


def without_running(pages: list[list[Box]]) -> list[list[Box]]:
    """Each page's boxes without its running header and footer: page numbers in
    the margin bands, and margin lines whose text, numbers at its ends aside, recurs in the
    same band on `RUNNING_PAGES` or more pages (a number inside, "Q1 results", is kept:
    slide titles differ so)."""
    def key(text: str, band: str) -> tuple[str, str]:  # a page number at either end aside
        return band, _ENDS.sub("", text.casefold())
    seen: dict[tuple[str, str], int] = {}
    for boxes in pages:
        for k in {key(text, band) for text, _, band, _ in boxes if band}:
            seen[k] = seen.get(k, 0) + 1
    return [[box for box in boxes
             if not box[2] or not (_PAGE_NUMBER.match(box[0])
                                   or seen[key(box[0], box[2])] >= RUNNING_PAGES)]
            for boxes in pages]
