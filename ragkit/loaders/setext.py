"""A Markdown file's underlined (setext) headings, written as `#` / `##` heading lines.

What it is: `setext_headings(text)` — CommonMark's setext headings, a paragraph followed by
a line of `=` (level 1) or `-` (level 2), each rewritten as one `#` / `##` line holding the
paragraph's lines joined by a space, so the chunker, the structural contextualizer and the
`[Source | Section]` tags (which read `#` lines only) see it. Which lines are such headings
is markdown-it-py's answer (CommonMark with GFM tables), not a rule of ours: a `---` after a
blank line is a thematic break (and at the top, front matter, split off before); a heading
inside a list item or block quote, and text in an HTML block or a code block, is left alone.
So is one whose first line opens with `|`: a table row without its separator row, which a
reader means as a table; and one over a line of `-` whose paragraph is more than one line or
ends with a full stop: sentences over a rule written without the blank line before it
(`The limit is 3 bar.` over `---`), which as a heading became a label no offline answer
quotes, and `ragkit ask` declined what it had answered. `=` is no rule: its paragraph is
always a heading.

A text without such a heading comes back as the same object, unchanged.

How: markdown-it-py reads only the parts of the text that may hold such a heading, each
on its own. Read whole, 6 MB of prose with a `---` between chapters took 1.2 s for lines
that hold no heading, and 6 MB of short sections held 640 MB of blocks at once
(`benchmarks/bench_loaders.py --markdown`). A part starts at a line where no block can be
open (`_SYNC`: after a blank line, not indented, not a list item: the blank line closed
every paragraph, table, block quote and HTML block that ends at one, the unindented line
every list and indented code block) and holds the lines that may matter (`_MARK`): each
underline-shaped line (`UNDERLINE`), the part ending after it (the heading is read from the
lines above), and each line that may open a block a blank line does not close (a code
fence, `<pre>`, `<!--`...), the part ending where no block is open again. Text without such
lines is only searched. A fence or HTML block that markdown-it-py ran to the end of a part
(it may go on past it) makes the part longer, so a `---` inside a code block stays text.
Parts closer than `_JOIN` are read as one, up to `_PART` characters. A text with a carriage
return (which markdown-it-py counts as a line end) is read whole, as before.

What it is not: a Markdown renderer. Inline markup stays as written, and only top-level
headings are rewritten (a `#` line inside a list item would end the item).
"""
from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_SENTENCE_ENDS = (".", "。")  # a line ending so is a sentence, not a heading's label
UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.M)  # may underline a heading
# an underline-shaped line, or one that may open a fence or an HTML block a blank line does
# not close (CommonMark's types 1-5)
_MARK = re.compile(r"^(?=[ =\-`~<]) {0,3}(?:(?:=+|-+)[ \t]*$|```|~~~"
                   r"|<(?i:script|pre|style|textarea|!|\?))", re.M)
# where no block is open: a line after a blank line (`_BLANK`), not indented, not a list item
_BLANK = re.compile(r"^[ \t]*\n", re.M)
_SYNC = re.compile(r"(?=[^ \t\n])(?![-+*](?:[ \t\n]|\Z)|\d{1,9}[.)](?:[ \t\n]|\Z))")
_JOIN = 512  # parts this close are read as one (a call costs what ~100 characters do)
_PART = 1 << 16  # ... up to this size: the blocks of one part are held at a time


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """CommonMark with GFM tables, blocks only: no inline markup is parsed (half the time)."""
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def _headings(text: str, start: int, tokens: list[Token]) -> Iterator[tuple[int, int, str]]:
    """(start, end, `#` line) of each top-level setext heading in `tokens`, markdown-it-py's
    blocks of the part of `text` from `start`: its paragraph's lines and its underline,
    without the underline's newline."""
    end = text.find("\n", start)
    lines = [start]  # where each line of the part starts, as far as a heading needs
    for opened, inline in zip(tokens, tokens[1:]):
        if (opened.type != "heading_open" or opened.level != 0 or opened.markup not in ("=", "-")
                or not opened.map or inline.content.startswith("|")):
            continue
        first, last = opened.map  # the paragraph's lines and, last, its underline
        while len(lines) <= last:
            lines.append(end + 1 if end >= 0 else len(text) + 1)
            end = text.find("\n", end + 1) if end >= 0 else -1
        if opened.markup == "-" and (last - first > 2 or text[
                lines[last - 2]:lines[last - 1] - 1].rstrip().endswith(_SENTENCE_ENDS)):
            continue  # sentences over a rule written without a blank line: text, as written
        heading = " ".join(text[lines[n]:lines[n + 1] - 1].strip()
                           for n in range(first, last - 1))
        yield lines[first], lines[last] - 1, ("##" if opened.markup == "-" else "#") + " " + heading


def _runs_to_end(tokens: list[Token], lines: int) -> bool:
    """Whether a top-level fence or HTML block of a part of `lines` lines runs to its end
    (markdown-it-py closes it there; in the whole text it may go on)."""
    return any(token.level == 0 and token.type in ("fence", "html_block") and token.map
               and token.map[1] >= lines for token in tokens)


def _parts(text: str) -> Iterator[tuple[int, list[Token]]]:
    """Where each part of `text` to read starts (module docstring), in order, with its
    blocks: each starts where no block is open, and together they hold every line that may
    underline a heading. Only the text near those lines is searched for where blocks end."""
    if "\r" in text:
        yield 0, _parser().parse(text)
        return
    marks = array("q", (m.start() for m in _MARK.finditer(text)))

    def before(at: int, floor: int) -> int:
        """The last line from `floor` (a line start) to `at` where no block is open, else
        -1 (a part that ended at `floor` may end in a block that goes on)."""
        found = -1
        for blank in _BLANK.finditer(text, text.rfind("\n", 0, floor - 1) + 1 if floor else 0,
                                     at):
            if _SYNC.match(text, blank.end()):
                found = blank.end()
        return found

    def after(at: int) -> int:
        """The first line after `at` where no block is open, else the text's end."""
        for blank in _BLANK.finditer(text, text.rfind("\n", 0, at) + 1):
            if blank.end() > at and _SYNC.match(text, blank.end()):
                return blank.end()
        return len(text)

    def past(mark: int) -> int:  # where a part holding `mark` may end: after an underline
        if UNDERLINE.match(text, mark):  # (a heading is read from the lines above it)
            line_end = text.find("\n", mark)
            return line_end + 1 if line_end >= 0 else len(text)
        return after(mark)  # after a fence or an HTML block: where no block is open

    k, start = 0, max(0, before(marks[0], 0)) if marks else 0
    while k < len(marks):
        end = past(marks[k])
        k = bisect_left(marks, end, k)
        next_start = len(text)
        while k < len(marks):
            next_start = before(marks[k], end)
            if next_start >= 0 and (end - start >= _PART or next_start - end > _JOIN):
                break
            end = max(end, past(marks[k]))  # read with this part: no part could start there
            k = bisect_left(marks, end, k)
        tokens = _parser().parse(text[start:end])
        if end < len(text) and _runs_to_end(tokens, text.count("\n", start, end)):
            while end < len(text) and _runs_to_end(tokens, text.count("\n", start, end)):
                end = after(start + 2 * (end - start))  # read on, twice as far each time
                tokens = _parser().parse(text[start:end])
            k = bisect_left(marks, end, k)
            next_start = before(marks[k], end) if k < len(marks) else end  # `end`, or after
        yield start, tokens
        start = next_start


def setext_headings(text: str) -> str:
    """Markdown `text` with its setext headings as `#` / `##` lines (module docstring).
    Written in one pass, in the order the headings come: rewriting each in place in the
    list of lines moved every line after it, 37 s for 5 MB of short sections."""
    out: list[str] = []
    at = 0  # the first character of `text` not yet in `out`
    for start, tokens in _parts(text):
        for first, last, heading in _headings(text, start, tokens):
            out += (text[at:first], heading)
            at = last
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)
