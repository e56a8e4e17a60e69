r"""The Markdown-shaped text every loader writes, built block by block.

What it is: `TextBuilder` collects headings (`#` lines), paragraphs and table rows with a
blank line between blocks, white space inside a block collapsed, and records where each
page starts (`pages`), so the PDF, HTML and Word loaders write the same text for the same
content — the chunker then cuts them at the same places.

A paragraph that starts with `#` (a shell comment or a config line a PDF prints as text) is
written `\#...`, Markdown's escape, so that only a file's own headings (outline entries,
`<h1>`-`<h6>`, heading styles) are heading lines to the chunker: in a real PDF
(shared-mime-info's specification) such a line had become the section of every chunk after it.

What it is not: a Markdown escaper beyond that (`*`, `_`, `|` in text are kept as they are).
"""
from __future__ import annotations

from ragkit.outline import one_line


class TextBuilder:
    """Blocks in, Markdown-shaped text out, with heading and page bookkeeping."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.headings: list[tuple[int, str]] = []
        self.pages: list[list[int]] = []

    def _add(self, block: str) -> None:
        if self.parts:
            self.parts.append("\n\n")
            self.size += 2
        self.parts.append(block)
        self.size += len(block)

    def page(self, number: int) -> None:
        """Page `number` starts at the next block."""
        start = self.size + (2 if self.parts else 0)
        if self.pages and self.pages[-1][1] == start:
            self.pages[-1][0] = number  # the previous page added no text
        else:
            self.pages.append([number, start])

    def heading(self, level: int, text: str) -> None:
        text = one_line(text)
        if text:
            level = min(max(level, 1), 6)
            self.headings.append((level, text))
            self._add("#" * level + " " + text)

    def paragraph(self, text: str, prefix: str = "") -> None:
        text = one_line(text)
        if text:
            self._add(prefix + ("\\" + text if not prefix and text.startswith("#") else text))

    def preformatted(self, text: str) -> None:
        """Code or a listing: its lines kept, each indented four spaces (as a Markdown code
        block), so a `# comment` line is no heading to the chunker."""
        lines = [line.rstrip() for line in text.strip("\n").splitlines()]
        if any(lines):
            self._add("\n".join("    " + line if line else "" for line in lines))

    def rows(self, rows: list[list[str]], header: bool = False) -> None:
        """A table: one `| a | b |` line per row with any text; with `header` (the file marks
        its first row as the column names: `<th>` cells, Word's header row), a Markdown rule
        row under that first row, so the answerer shows a row under its columns' names
        ("Tool: Chainsaw | Deposit: 50 euros") and never quotes the names as an answer."""
        kept = [row for row in rows if any(one_line(c) for c in row)]
        lines = ["| " + " | ".join(one_line(c) for c in row) + " |" for row in kept]
        if header and len(kept) > 1 and kept[0] is rows[0]:
            lines.insert(1, "|" + " --- |" * len(kept[0]))
        if lines:
            self._add("\n".join(lines))

    def text(self) -> str:
        return "".join(self.parts)

    def title(self, *candidates: str | None) -> str:
        """The first non-empty candidate, else the first heading, else ''."""
        for candidate in candidates:
            if candidate and one_line(candidate):
                return one_line(candidate)
        return self.headings[0][1] if self.headings else ""
