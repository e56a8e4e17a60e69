"""Where an offset sits in a document: the Markdown headings and the code definitions in
force there, found without rescanning the text before it.

What it is: `Outline(text)` scans a document once and then answers `headings(offset)` and
`symbols(offset)` for any number of offsets, each in time proportional to the text near the
offset, not to the offset. Chunk contexts (`ragkit.contextualize.structural`) and chunk
sections (`ragkit.chunking`) ask for every chunk; rescanning `text[:offset]` each time made
both quadratic in a document's length (1 / 2 / 4 MB took 5 / 11 / 38 s to contextualize,
a 50 MB one-line file did not finish in ten minutes).

What it is not: a parser, nor a new rule. The answers are exactly those of scanning
`text[:offset]` with `HEADING` / `SYMBOL` (what ragkit always did), quirks included: a chunk
that starts inside a heading line sees that heading cut at its start; a fenced code block's
`#` lines are no headings (`ragkit.fences.unfenced`).

How: a scan of `text[:offset]` finds the same matches as a scan of the whole text, except
where a match attempt (only at line starts: both patterns open with `^`) reads at or past
`offset`, where the cut text ends. A relaxed pattern, greedy where the real one backtracks,
bounds how far each line start's attempt can read (`ragkit.outline_replay.Replay.reach`).
The whole-text matches before the first line start whose bound passes `offset` are kept,
each linked to the match under it on the stack, so the stack there is a walk up those links;
only the text from that line start to `offset` is scanned again, cut, and only at line
starts an attempt can match at (`Replay.rescan`). Offsets up to `DIRECT` are simply rescanned
(cheaper for small documents). Where that line is a heading and `offset` sits in its title's
line, the cut scan's one match is read off the title instead (`_TitleLine`): rescanning from
the line start for every chunk of a 1 MB one-line heading was quadratic (21 s to index it).
"""
from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from functools import lru_cache

from ragkit.fences import unfenced
from ragkit.outline_replay import Replay, push, scan

LABEL_CHARS = 200  # a title, heading or definition as it labels a chunk (`label`)


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` cut to `limit` characters with "…": how a title, heading or definition labels
    each chunk (metadata, context, answer tags; a 1.2 MB `<title>` made a 230 MB index)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def one_line(text: str) -> str:
    """`text` on one line, each run of white space one space: a metadata value, path, title or
    loader's block whose line breaks broke the `[Source: …]` tag's line. Not a cut (`label`);
    not for chunk text or headings (own spacing)."""
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
_HEADING_LINES = re.compile(r"^#", re.M)
_HEADING_REACH = re.compile(r"#*\s*[^\n]*\s*#*\s*")
_KEYWORDS = r"(?:pub|export|async|class|def|fn|struct|impl|trait|enum|func|function|interface|mod)"
_SYMBOL_LINES = re.compile(rf"^[ \t]*{_KEYWORDS}", re.M)
_SYMBOL_REACH = re.compile(r"[ \t]*(?:(?:pub(?:\([^)]*\)?)?|export|async)\s*)*"
                           r"(?:(?:class|def|fn|struct|impl|trait|enum|func|function|interface"
                           r"|mod)\w*(?:<[^>\n]*>?)?\s*\w*)?")
_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"\S+")
_HASHES = re.compile(r"#+")

def _heading(match: re.Match) -> tuple[int, str]:
    return len(match.group(1)), match.group(2)


def _symbol(match: re.Match) -> tuple[int, str]:
    return len(match.group(1).expandtabs(4)), f"{match.group(2)} {match.group(3)}"


class _TitleLine:
    """A heading's title line, read as a scan of the text cut inside it reads it.

    `title(offset)`: the title the heading pattern takes from the text cut at `offset`, a
    position in the line after the title's first character: the line up to `offset` less
    what the closing part takes (white space, `#`s, white space), at least one character.
    Only its first `LABEL_CHARS + 1` characters come back, all `label` reads of it, so no
    answer copies a megabyte. The line's runs of non-space characters are indexed once (two
    integers a run), and each offset costs a bisection, not a read of the line.
    """

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start = text, start
        self.words = array("q")  # starts and ends of the runs of non-space characters
        self.ends = array("q")
        for match in _WORD.finditer(text, start, end):
            self.words.append(match.start())
            self.ends.append(match.end())
        self.hashes = array("q", (m.start() for m in _HASHES.finditer(text, start, end)))

    def title(self, offset: int) -> str:
        i = bisect_left(self.words, offset) - 1  # the last run starting before offset
        last = min(self.ends[i], offset) - 1  # the last non-space character before offset
        end = last + 1
        if self.text[last] == "#":  # closing `#`s: the title ends before them and the space
            hashes = self.hashes[bisect_right(self.hashes, last) - 1]
            if hashes > self.words[i]:
                end = hashes
            else:
                end = self.ends[i - 1] if i else self.start + 1
        end = max(end, self.start + 1)
        return self.text[self.start:min(end, self.start + LABEL_CHARS + 1)]


class Outline:
    """A document's headings and code definitions, to ask about any offset (module docstring).

    Each part is built on first use: a text whose chunks ask nothing pays nothing.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.marked = unfenced(text)  # what headings are read from: no fenced `# comment`
        self._newlines: list[int] | None = None
        self._headings: Replay | None = None
        self._symbols: Replay | None = None
        self._first_hash = self.marked.find("#")
        self._titles: dict[int, tuple[int, int, int, _TitleLine | None] | None] = {}

    @property
    def newlines(self) -> list[int]:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        return self._newlines

    def line_start(self, offset: int) -> int:
        """Where the line holding `offset` starts (after the last newline before it)."""
        i = bisect_left(self.newlines, offset)
        return self.newlines[i - 1] + 1 if i else 0

    def headings(self, offset: int) -> list[str]:
        """Markdown headings in force at `offset`, outermost first."""
        if self._first_hash < 0 or self._first_hash >= offset:  # no heading above
            return []
        if offset <= DIRECT:
            return [label(title) for _, title in scan(HEADING, _heading, self.marked, 0,
                                                      offset, [])]
        if self._headings is None:
            self._headings = Replay(self.marked, self.newlines, HEADING, _heading,
                                     _HEADING_LINES, _HEADING_REACH, 2)
        chain, resume = self._headings.cut(offset, self.line_start(offset))
        read = self._title(resume, offset)
        if read is None:
            chain = self._headings.rescan(chain, resume, offset)
        else:
            push(chain, *read)
        return [label(title) for _, title in chain]

    def _title(self, resume: int, offset: int) -> tuple[int, str] | None:
        """The one match a scan of `text[resume:offset]` finds when `resume` starts a heading
        and `offset` is in its title's line after its first character (that match reads to
        `offset`); None where the scan must be run."""
        if resume not in self._titles:
            self._titles[resume] = None
            text = self.marked
            if text.startswith("#", resume) and (not resume or text[resume - 1] == "\n"):
                level = _HASHES.match(text, resume).end() - resume
                start = _SPACE.match(text, resume + level).end()
                if level <= 6 and resume + level < start < len(text):
                    i = bisect_left(self.newlines, start)
                    end = self.newlines[i] if i < len(self.newlines) else len(text)
                    self._titles[resume] = (level, start, end, None)
        found = self._titles[resume]
        if found is None or not found[1] < offset <= found[2]:
            return None
        level, start, end, line = found
        if line is None:
            line = _TitleLine(self.marked, start, end)
            self._titles[resume] = (level, start, end, line)
        return level, line.title(offset)

    def symbols(self, offset: int) -> list[str]:
        """Code definitions (by indentation) that enclose `offset`, outermost first."""
        if offset == 0:
            return []
        line_start = self.line_start(offset) if offset > DIRECT else \
            self.text.rfind("\n", 0, offset) + 1
        if offset <= DIRECT:
            stack = scan(SYMBOL, _symbol, self.text, 0, offset, [])
        else:
            if self._symbols is None:
                self._symbols = Replay(self.text, self.newlines, SYMBOL, _symbol,
                                        _SYMBOL_LINES, _SYMBOL_REACH, 12)
            stack = self._symbols.stack(offset, line_start)
        current = _SPACE.match(self.text, line_start, offset).end() - line_start
        return [label(name) for indent, name in stack if indent < current or indent == 0]


@lru_cache(maxsize=4)
def outline(text: str) -> Outline:
    """The `Outline` of `text`, kept for the last few texts (callers asking chunk by chunk
    about the same document share one)."""
    return Outline(text)
