"""Page maps: which page of the source file an offset of a document's text sits on.

What it is: a PDF's document carries `metadata["pages"] = [[page, offset], ...]`, page
`page` (1-based) starting at `offset` of its text, ascending. `page_at` answers for one
offset; `chunk_pages` cuts the map down to one chunk (offsets relative to the chunk's text),
which the chunker stores in the chunk's metadata so a citation can name the page it quotes
(`ragkit.answer`). `composed` puts a document's text in NFC without invisible characters (a
soft hyphen, a zero-width space: `ragkit.documents.composed`) and moves its page map with it;
every loaded file passes through it (`ragkit.document_folder`), whatever its format.

What it is not: a layout map — an offset's page is the page whose text holds it, not a
position on that page.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace
from itertools import accumulate
from typing import Any

from ragkit.documents import Document
from ragkit.documents import composed as nfc

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


def composed(doc: Document) -> Document:
    """`doc` with its text, title and string metadata (but its path, the file's name) in
    Unicode's NFC form without invisible characters (`ragkit.documents.composed`), its page
    map moved to the composed text: each page is composed on its own."""
    def value(key: str, item: Any) -> Any:
        if key == "path":
            return item
        if isinstance(item, list):
            return [nfc(x) if isinstance(x, str) else x for x in item]
        return nfc(item) if isinstance(item, str) else item
    metadata = {key: value(key, item) for key, item in doc.metadata.items()}
    if nfc(doc.text) == doc.text and nfc(doc.title) == doc.title and metadata == doc.metadata:
        return doc
    pages = doc.metadata.get("pages") or []
    bounds = sorted({0, len(doc.text), *(int(at) for _, at in pages)})
    parts = [nfc(doc.text[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    moved = dict(zip(bounds, accumulate((len(part) for part in parts), initial=0)))
    if pages:
        metadata["pages"] = [[page, moved[int(at)]] for page, at in pages]
    return replace(doc, text="".join(parts), title=nfc(doc.title), metadata=metadata)
