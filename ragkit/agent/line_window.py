"""A range of lines of a text file too large to read whole, read as a stream: `read_file`
with `start_line` and `end_line` on a file over `MAX_FILE_BYTES`.

What it is: `read_window(fd, shown, first, last, width)`, lines `first`..`last` (1-based) of
the open file `fd` — each cut at `width` + 1 characters, which `read_file` then marks as cut
— with the file's number of lines. Lines are what `str.splitlines` makes of the whole text
(`\\n`, `\\r\\n`, `\\r` and Unicode's other line ends), so a file reads the same whether it
is read whole or streamed, and a NUL byte or bytes that are not UTF-8 anywhere in what was
read are refused with `read_text`'s words.

Why: grep skips files over 1 MB and `read_file` refused them, so no tool reached a 1.5 MB log
at all. Memory stays bounded whatever the file: 64 KB read at a time, and only the lines of
the range are kept (at most `width` + 1 characters each), never the file or a long line.

What it is not: a search (grep does not stream: a regular expression over a whole large file
is what its byte cap prevents), nor a reader of a file's every line. Counting stops
`SCAN_BYTES` into the file once the range is read, and reading stops `MAX_SCAN_BYTES` into
it in any case; the count is then a lower bound (`complete` False). Why the second bound: a
`start_line` past the end of a 4 GB log (the model chooses it) read all of it, and one a
writer grows faster than it is read, without end.
"""
from __future__ import annotations

import codecs
import os
from dataclasses import dataclass, field

from ragkit.agent.safe_open import short
from ragkit.agent.tool import ToolError

BLOCK = 1 << 16  # bytes read at a time
SCAN_BYTES = 1 << 28  # bytes read to count lines once the range is read (256 MiB, ~3 s)
MAX_SCAN_BYTES = 1 << 30  # bytes read at most, for a range too (1 GiB, a few seconds)
_ENDS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what ends a line for str.splitlines


@dataclass
class Window:
    """Lines `first`.. of a file (`rows`), and how many lines it has (`total`): all of them
    when `complete`, else at least that many (counting stopped at `SCAN_BYTES`)."""

    first: int
    last: int
    width: int
    rows: list[str] = field(default_factory=list)
    total: int = 0
    complete: bool = True
    _line: list[str] = field(default_factory=list)  # kept text of the line being read
    _kept: int = 0
    _open: bool = False  # part of a line was read, its end not yet

    def take(self, text: str) -> None:
        """Count and keep the lines of `text`, a piece of the file (not ending in a lone
        `\\r` unless the file does: a `\\r\\n` is one line end)."""
        parts = text.splitlines(keepends=True)
        if not parts:
            return
        still_open = parts[-1][-1] not in _ENDS
        ends = len(parts) - still_open
        if self.total + 1 > self.last or self.total + ends + 1 < self.first:  # none in range
            self.total += ends
            if ends:
                self._line, self._kept = [], 0
            self._open = still_open
            return
        for part in parts:
            ended = part[-1] in _ENDS
            body = part[:-2] if part.endswith("\r\n") else part[:-1] if ended else part
            if self.first <= self.total + 1 <= self.last and self._kept <= self.width:
                piece = body[:self.width + 1 - self._kept]
                self._line.append(piece)
                self._kept += len(piece)
            self._open = not ended
            if ended:
                self._end()

    def finish(self) -> None:
        """The file ended: a last line without a line end is a line too."""
        if self._open:
            self._end()

    def _end(self) -> None:
        self.total += 1
        if self.first <= self.total <= self.last:
            self.rows.append("".join(self._line))
        self._line, self._kept, self._open = [], 0, False


def read_window(fd: int, shown: str, first: int, last: int, width: int) -> Window:
    """Lines `first`..`last` of the file open at `fd` (module docstring), or ToolError for a
    binary file or one that is not UTF-8 (named as `shown`)."""
    window = Window(first, last, width)
    decoder = codecs.getincrementaldecoder("utf-8")()
    held, offset = "", 0
    while True:
        try:
            data = os.read(fd, BLOCK)
        except OSError as exc:
            raise ToolError(f"'{short(shown)}' could not be read ({exc.strerror})") from None
        if b"\x00" in data:
            raise ToolError(f"'{short(shown)}' is a binary file (it contains NUL bytes); these "
                            f"tools read text files only — look for a text file that "
                            f"describes it instead")
        pending = len(decoder.getstate()[0])
        try:
            text = held + decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise ToolError(f"'{short(shown)}' is not UTF-8 text (undecodable byte at offset "
                            f"{offset - pending + exc.start}); these tools read UTF-8 text "
                            f"files only") from None
        offset += len(data)
        held = "\r" if data and text.endswith("\r") else ""  # its "\n" may come next
        window.take(text[:-1] if held else text)
        if not data:
            window.finish()
            return window
        if (offset > SCAN_BYTES and window.total >= last) or offset >= MAX_SCAN_BYTES:
            window.complete = False
            return window
