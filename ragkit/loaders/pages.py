"""Page maps: which page of the source file an offset of a document's text sits on.

What it is: a PDF's document carries `metadata["pages"] = [[page, offset], ...]`, page
`page` (1-based) starting at `offset` of its text, ascending. `page_at` answers for one
offset; `chunk_pages` cuts the map down to one chunk (offsets relative to the chunk's text),
which the chunker stores in the chunk's metadata so a citation can name the page it quotes
(`ragkit.answer`).

What it is not: a layout map — an offset's page is the page whose text holds it, not a
position on that page.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

PageMap = Sequence[Sequence[int]]  # [[page, start offset], ...], offsets ascending


def page_at(pages: PageMap, offset: int) -> int | None:
    """The page holding `offset`, None for an empty map."""
    if not pages:
        return None
    index = bisect_right([start for _, start in pages], offset) - 1
    return int(pages[max(index, 0)][0])


def chunk_pages(pages: PageMap, start: int, end: int) -> list[list[int]]:
    """The page map of text[start:end], offsets relative to `start`: the page in force at
    `start` (at 0), then each page that begins inside the chunk."""
    first = page_at(pages, start)
    if first is None:
        return []
    out = [[first, 0]]
    out += [[int(page), int(at) - start] for page, at in pages if start < at < end]
    return out
