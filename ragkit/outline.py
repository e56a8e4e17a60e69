"""Where an offset sits in a document: the Markdown headings and the code definitions in
force there, found without rescanning the text before it.

What it is: `Outline(text)` scans a document once and then answers `headings(offset)` and
`symbols(offset)` for any number of offsets, each in time proportional to the text near the
offset (or to the depth of the heading path), not to the offset. Chunk contexts
(`ragkit.contextualize.structural`) and chunk sections (`ragkit.chunking`) ask for every
chunk; rescanning `text[:offset]` each time made both quadratic in a document's length
(1 / 2 / 4 MB took 5 / 11 / 38 s to contextualize, a 50 MB one-line file did not finish in
ten minutes).

The rules. Headings: the path in force at the line holding `offset` — every heading that
`HEADING` finds in the whole text starting at or before that line's start, so a heading line
the offset sits on counts, whole. (Before, the answer was that of scanning `text[:offset]`: a
chunk starting at a heading's `#` got the heading before it as its section, and one starting
inside a heading line got that heading cut where the chunk starts, "Segment" for "Segment
results".) Symbols: what scanning `text[:offset]` with `SYMBOL` finds, as ragkit always did.

What it is not: a parser. Whether a document's `#` lines are headings at all (not a source
file's comments) is the caller's to decide (`ragkit.chunking.is_code`).

How: the headings are the whole text's matches, each linked to the match under it on the
stack, so the path at a line is a bisection and a walk up those links. For symbols, a scan of
`text[:offset]` finds the same matches as a scan of the whole text, except where a match
attempt (only at line starts: the pattern opens with `^`) reads at or past `offset`, where
the cut text ends. A relaxed pattern, greedy where the real one backtracks, bounds how far
each line start's attempt can read (`_Replay.reach`). The whole-text matches before the
first line start whose bound passes `offset` are kept, the stack there a walk up their
links; only the text from that line start to `offset` is scanned again, cut. Offsets up to
`DIRECT` are simply rescanned: cheaper than an outline for the many small documents.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from functools import lru_cache

LABEL_CHARS = 200  # a title, heading or definition as it labels a chunk (`label`)


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` cut to `limit` characters with "…": how a title, heading or definition labels
    each chunk (metadata, context, answer tags). A 1.2 MB `<title>` was copied into every
    chunk of its page — a 230 MB index and a megabyte printed by each `ragkit ask`."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def one_line(text: str) -> str:
    """`text` on one line: each run of white space one space, none at either end. For a
    metadata value or path in a structural context, a title where it is read (its chunks'
    `[Source: …]` tag), a loader's block: a block scalar's or a JSONL title's line breaks
    broke those lines. Not a cut (`label`); not for chunk text or headings (own spacing)."""
    return " ".join(text.split())

# A Markdown heading: what `^(#{1,6})\s+(.+?)\s*#*\s*$` (re.M) matches, the same matches,
# groups and ends, in time linear in the line. That pattern backtracked over every way of
# splitting a run of white space between its two `\s*` at each character of the title: a
# heading holding 3,200 spaces took 35 s to index, one of 10,000 would take twenty minutes.
# Here the title stops at the first place the closing part (`_HEADING_END`) can match, and a
# run of white space, of `#` or of other characters is crossed at once (where the closing part
# fails at a run's first character it fails at all of them); `_HEADING_END` takes what the old
# closing part took first: after white space and `#`s, the white space to the end, else to
# its last newline (where `$` matches); else white space to the end; else to the last newline
# of the run.
_TO_LAST_NEWLINE = r"[^\S\n]*+(?:\n[^\S\n]*+(?=\n))*+(?=\n)"
_HEADING_END = rf"(?:\s*+#++(?:\s*+\Z|{_TO_LAST_NEWLINE})|\s*+\Z|{_TO_LAST_NEWLINE})"
HEADING = re.compile(rf"^(#{{1,6}})\s+(.(?:(?!{_HEADING_END})(?>#+|[^\S\n]+|[^\s#]+))*+)"
                     rf"{_HEADING_END}", re.M)
SYMBOL = re.compile(r"^([ \t]*)(?:pub(?:\([^)]*\))?\s+|export\s+|async\s+)*"
                    r"(class|def|fn|struct|impl|trait|enum|func|function|interface|mod)"
                    r"(?:<[^>\n]*>)?\s+([A-Za-z_]\w*)", re.M)
DIRECT = 4096  # offsets up to this are rescanned directly (bounded work per chunk)

# Line starts whose attempt may read past their own line, and a bound of what it reads:
# every part of the real pattern, each taken greedily and as far as it can go.
_KEYWORDS = r"(?:pub|export|async|class|def|fn|struct|impl|trait|enum|func|function|interface|mod)"
_SYMBOL_LINES = re.compile(rf"^[ \t]*{_KEYWORDS}", re.M)
_SYMBOL_REACH = re.compile(r"[ \t]*(?:(?:pub(?:\([^)]*\)?)?|export|async)\s*)*"
                           r"(?:(?:class|def|fn|struct|impl|trait|enum|func|function|interface"
                           r"|mod)\w*(?:<[^>\n]*>?)?\s*\w*)?")
_SPACE = re.compile(r"\s*")

Stack = list[tuple[int, str]]  # (level or indent, label), outermost first


def _heading(match: re.Match) -> tuple[int, str]:
    return len(match.group(1)), match.group(2)


def _symbol(match: re.Match) -> tuple[int, str]:
    return len(match.group(1).expandtabs(4)), f"{match.group(2)} {match.group(3)}"


def push(stack: Stack, key: int, label: str) -> None:
    """Close what `key` closes (entries at its level or deeper), then open it."""
    while stack and stack[-1][0] >= key:
        stack.pop()
    stack.append((key, label))


def scan(pattern: re.Pattern, entry: Callable[[re.Match], tuple[int, str]], text: str,
         start: int, end: int, stack: Stack) -> Stack:
    """`stack` after each match of `pattern` in text[start:end] (the text cut at `end`)."""
    for match in pattern.finditer(text, start, end):
        push(stack, *entry(match))
    return stack


class _Matches:
    """One pattern's whole-text matches in order, each linked to the match under it on the
    stack (its parent), so the stack after any of them is a walk up the links."""

    def __init__(self, text: str, pattern: re.Pattern,
                 entry: Callable[[re.Match], tuple[int, str]]) -> None:
        self.text, self.pattern, self.entry = text, pattern, entry
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.items: list[tuple[int, str]] = []
        self.parents: list[int] = []
        open_: list[int] = []  # indices of the matches on the stack, keys increasing
        for match in pattern.finditer(text):
            key, label = entry(match)
            while open_ and self.items[open_[-1]][0] >= key:
                open_.pop()
            self.parents.append(open_[-1] if open_ else -1)
            open_.append(len(self.items))
            self.starts.append(match.start())
            self.ends.append(match.end())
            self.items.append((key, label))

    def chain(self, top: int) -> Stack:
        """The stack after match `top` (none for -1), outermost first."""
        chain: Stack = []
        while top >= 0:
            chain.append(self.items[top])
            top = self.parents[top]
        chain.reverse()
        return chain


class _Replay(_Matches):
    """One pattern's whole-text matches, replayed as a scan of `text[:offset]` would see them."""

    def __init__(self, text: str, newlines: list[int], pattern: re.Pattern,
                 entry: Callable[[re.Match], tuple[int, str]], lines: re.Pattern,
                 reach: re.Pattern, slack: int) -> None:
        super().__init__(text, pattern, entry)
        self.newlines, self._reach, self.slack = newlines, reach, slack
        # line starts whose attempt may read past their own line, with the running maximum
        # of what they read (non-decreasing, so the first one reaching an offset bisects)
        self.far: list[int] = []
        self.far_reach: list[int] = []
        for line in lines.finditer(text):
            q = line.start()
            r = self.reach(q)
            if r > self.line_end(q) + 1:
                self.far.append(q)
                self.far_reach.append(max(r, self.far_reach[-1] if self.far_reach else 0))

    def reach(self, q: int) -> int:
        """An exclusive bound of the positions the attempt at line start `q` reads."""
        return self._reach.match(self.text, q).end() + self.slack

    def line_end(self, q: int) -> int:
        i = bisect_left(self.newlines, q)
        return self.newlines[i] if i < len(self.newlines) else len(self.text)

    def stack(self, offset: int, line_start: int) -> Stack:
        """The stack a scan of `text[:offset]` ends with; `line_start` is offset's line's."""
        first = offset  # the first line start whose attempt may read at or past offset
        i = bisect_right(self.far_reach, offset)
        if i < len(self.far) and self.far[i] < offset:
            first = self.far[i]
        if line_start < first and self.reach(line_start) > offset:
            first = line_start
        top = bisect_left(self.starts, first) - 1  # the last match that reads before offset
        resume = max(first, self.ends[top]) if top >= 0 else first
        return scan(self.pattern, self.entry, self.text, resume, offset, self.chain(top))


class Outline:
    """A document's headings and code definitions, to ask about any offset (module docstring).

    Each part is built on first use: a text whose chunks ask nothing pays nothing.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._newlines: list[int] | None = None
        self._headings: _Matches | None = None
        self._symbols: _Replay | None = None
        self._first_hash = text.find("#")

    @property
    def newlines(self) -> list[int]:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        return self._newlines

    def line_start(self, offset: int) -> int:
        """Where the line holding `offset` starts (after the last newline before it); a
        bisection past `DIRECT`, where reading back to the newline could cross a long line
        for every offset in it."""
        if offset <= DIRECT:
            return self.text.rfind("\n", 0, offset) + 1
        i = bisect_left(self.newlines, offset)
        return self.newlines[i - 1] + 1 if i else 0

    def headings(self, offset: int) -> list[str]:
        """Markdown headings in force at the line holding `offset`, outermost first: those
        starting at or before the line's start, a heading on that line included whole."""
        if self._first_hash < 0 or self._first_hash > offset:  # no heading above
            return []
        line_start = self.line_start(offset)
        if self._headings is None:
            self._headings = _Matches(self.text, HEADING, _heading)
        top = bisect_right(self._headings.starts, line_start) - 1
        return [label(title) for _, title in self._headings.chain(top)]

    def symbols(self, offset: int) -> list[str]:
        """Code definitions (by indentation) that enclose `offset`, outermost first."""
        if offset == 0:
            return []
        line_start = self.line_start(offset)
        if offset <= DIRECT:
            stack = scan(SYMBOL, _symbol, self.text, 0, offset, [])
        else:
            if self._symbols is None:
                self._symbols = _Replay(self.text, self.newlines, SYMBOL, _symbol,
                                        _SYMBOL_LINES, _SYMBOL_REACH, 12)
            stack = self._symbols.stack(offset, line_start)
        current = _SPACE.match(self.text, line_start, offset).end() - line_start
        return [label(name) for indent, name in stack if indent < current or indent == 0]


@lru_cache(maxsize=4)
def outline(text: str) -> Outline:
    """The `Outline` of `text`, kept for the last few texts (callers asking chunk by chunk
    about the same document share one)."""
    return Outline(text)
