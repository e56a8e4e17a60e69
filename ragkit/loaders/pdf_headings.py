"""Headings of a PDF that has no outline, read from its type sizes.

What it is: `lines(box)` gives each line of a pdfminer text box with its top and its type
size (the size most of its characters are set in), and `by_size(pages, clean)` finds the
lines set larger than the body text (`RATIO` times the size most of the document's
characters are set in) that read as a heading — one or two lines of at most `MAX_WORDS`
words, with a letter, not ending as a clause does (",", ";", ":") — and returns the pages'
boxes cut before and after each such line, and the headings as outline entries
(`ragkit.loaders.pdf_outline.Head`), level 1 for the largest size, 2 for the next and so
on. `ragkit.loaders.pdf` places them as it places a bookmark's, so a chunk's section is
"2 Maintenance › 2.1 Tools" and not the document alone.

Why: a PDF exported without bookmarks (a Word file saved without its heading bookmarks,
LaTeX without hyperref, a page printed from a browser) had no headings at all, and pdfminer
often laid a heading out in one box with the paragraph above or below it ("… every flange
bolt. 2 Maintenance The maintenance of the pump …"), so the heading was lost in the text.

What it is not: a reader of headings set in the body's size (bold or capitals alone: the
body has bold words too), nor used when the PDF has an outline (the author's own headings).
A line the document opens with, set at the largest heading size, is left as text: it is the
document's title (a cover's), not a section of it. Three or more large lines in a row (a
paragraph or a list set large) are no heading.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from ragkit.loaders.pdf_outline import Head

RATIO = 1.15  # a heading's size over the body's: 11 pt against 9.5, 12 against 10
MAX_WORDS = 15
MAX_LEVELS = 6
Line = tuple[str, float, float]  # (the line's text as pdfminer gives it, top, size)
Box = tuple[str, float, str, tuple[Line, ...]]  # (text, top, band, lines), `pdf._boxes`
_LETTER = re.compile(r"[^\W\d_]")
_CONTENTS = re.compile(r"…\s*(?:\d+|[ivxlcdm]+)$", re.I)  # a leader, then a page number


def lines(box) -> tuple[Line, ...]:
    """(text, top, size) of each line of the pdfminer text box `box`; size is the size most
    of the line's characters are set in (a superscript or a symbol aside), 0 for a line
    with no character."""
    from pdfminer.layout import LTChar  # deferred: pdfminer loads only for a PDF
    out = []
    for line in box:
        get_text = getattr(line, "get_text", None)
        if get_text is None:
            continue
        sizes = Counter(round(c.size, 1) for c in line if isinstance(c, LTChar))
        out.append((get_text(), line.y1, sizes.most_common(1)[0][0] if sizes else 0.0))
    return tuple(out)


def _body(pages: list[list[Box]]) -> float:
    """The size most characters of the document's body (outside the margin bands) are set
    in; 0 for none."""
    weight: Counter[float] = Counter()
    for boxes in pages:
        for _, _, band, box_lines in boxes:
            if not band:
                for text, _, size in box_lines:
                    weight[size] += len(text.strip())
    return weight.most_common(1)[0][0] if weight else 0.0


def _reads_as_heading(text: str) -> bool:
    """One to `MAX_WORDS` words with a letter, not ending as a clause does, and not a line
    of a table of contents ("2 Installation … 12": `pdf._clean` writes dot leaders so)."""
    words = text.split()
    return (0 < len(words) <= MAX_WORDS and bool(_LETTER.search(text))
            and not text.endswith((",", ";", ":")) and not _CONTENTS.search(text))


def _runs(sizes: list[float], large: Callable[[float], bool]) -> list[tuple[int, int]]:
    """(first, end) of each run of consecutive equal `sizes` that `large` accepts."""
    out, n = [], 0
    while n < len(sizes):
        end = n + 1
        if large(sizes[n]):
            while end < len(sizes) and sizes[end] == sizes[n]:
                end += 1
            out.append((n, end))
        n = end
    return out


def by_size(pages: list[list[Box]], clean: Callable[[str], str]
            ) -> tuple[list[list[Box]], dict[int, list[Head]]]:
    """`pages` with every box holding a heading line (module docstring) cut into the text
    before it, the heading and the text after it (each piece's text `clean`ed), and the
    headings by page index as (level, title, top). Unchanged, with no headings, when no
    line is set larger than the body."""
    body = _body(pages)
    if body <= 0:
        return pages, {}
    large = lambda size: size >= body * RATIO  # noqa: E731
    found: list[tuple[int, int, int, int, str]] = []  # page, box, first line, end, title
    for p, boxes in enumerate(pages):
        flat = [(b, n, size) for b, box in enumerate(boxes) for n, (_, _, size) in
                enumerate(box[3])]
        for first, end in _runs([size for _, _, size in flat], large):
            if end - first > 2:  # three lines or more: a paragraph set large, or a list
                continue
            for b in dict.fromkeys(b for b, _, _ in flat[first:end]):  # each box's part
                n = [n for box, n, _ in flat[first:end] if box == b]
                title = clean("".join(pages[p][b][3][i][0] for i in n))
                if _reads_as_heading(title):
                    found.append((p, b, n[0], n[-1] + 1, title))

    def size(item: tuple[int, int, int, int, str]) -> float:
        return pages[item[0]][item[1]][3][item[2]][2]
    if found and found[0][:3] == (0, 0, 0) and size(found[0]) == max(map(size, found)):
        found.pop(0)  # the document opens with it, set largest: its title, not a section
    levels = {one: min(n + 1, MAX_LEVELS)
              for n, one in enumerate(sorted({size(f) for f in found}, reverse=True))}
    heads: dict[int, list[Head]] = {}
    cuts: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for p, b, first, end, title in found:
        top = pages[p][b][3][first][1]
        heads.setdefault(p, []).append((levels[size((p, b, first, end, title))], title, top))
        cuts.setdefault((p, b), []).append((first, end))
    out = [[piece for b, box in enumerate(boxes)
            for piece in _cut(box, cuts.get((p, b), []), clean)] for p, boxes in enumerate(pages)]
    return out, heads


def _cut(box: Box, runs: list[tuple[int, int]], clean: Callable[[str], str]) -> list[Box]:
    """`box` cut before and after each heading run of its lines (`runs`, in line order)."""
    if not runs:
        return [box]
    _, _, band, box_lines = box
    bounds = sorted({0, len(box_lines), *(n for run in runs for n in run)})
    pieces = []
    for first, end in zip(bounds, bounds[1:]):
        text = clean("".join(t for t, _, _ in box_lines[first:end]))
        if text:
            pieces.append((text, box_lines[first][1], band, box_lines[first:end]))
    return pieces
