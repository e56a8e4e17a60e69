"""Markdown code fences: a `# comment` inside one is no heading, a `| a | b |` line no row.

What it is: `unfenced(text)` — `text` with the `#` that opens each line inside a fenced code
block replaced by a space (and the `|` that opens a table row's line: the offline answerer's
table rows, `ragkit.markdown_tables.row_headers`, read a syntax example in a fence as its own
table): the same length and offsets, so the heading scans read it instead
of the text (`ragkit.outline`'s chunk sections and structural contexts, the chunker's cuts
at headings, the `[Source | Section]` path of a citation in `ragkit.citation_tags`, the offline
answerer's headings, a Markdown file's title). A README's ```` ```bash ```` block holding
`# install the client` had made that comment the section of every chunk after it (and a
note's title, where it had no heading of its own). A fence is CommonMark's: a line of at
least three backticks or tildes (a backtick fence's info string holds no backtick), closed
by a line of the same character at least as long and nothing else; one never closed runs
to the end of the text. A text without a fence comes back as the same object.

What it is not: a Markdown parser. A fence counts after any indentation or a list item's
marker ("- ```bash"), not after a block quote's `>`; an indented code block needs nothing: a
heading line starts at its line's first character. Text is never changed: only what a
heading scan reads. A passage cut from a document (`passage_unfenced`) may start inside a
fence; which it does is a guess from its fence lines.
"""
from __future__ import annotations

import re

# a fence line: after blanks, or a list item's marker ("- ```bash", "1. ```sh"), the marks
_FENCE = re.compile(r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})([^\n]*)$", re.M)
_LINE_MARK = re.compile(r"^(#|[ \t]{0,3}\|)", re.M)  # a heading's or a table row's opening


def _blanked(fenced: str) -> str:
    """`fenced`, the lines inside a fence, with their opening `#` or `|` a space."""
    return _LINE_MARK.sub(lambda m: m[1][:-1] + " ", fenced)


def unfenced(text: str, inside: bool = False) -> str:
    """`text` with each line inside a fenced code block starting with a space for its `#` or
    its table row's `|` (module docstring); `text` itself when no fence opens in it.
    `inside`: the text starts in a fence opened before it, which its first fence line
    without an info string closes."""
    if "```" not in text and "~~~" not in text:
        return text
    parts: list[str] = []
    done = 0  # text before this is in parts
    opened: str | None = "" if inside else None  # the open fence's marks; "": opened before
    for fence in _FENCE.finditer(text):
        marks, rest = fence.group(1), fence.group(2)
        if opened is None:
            if not (marks[0] == "`" and "`" in rest):
                opened = marks
                parts.append(text[done:fence.end()])
                done = fence.end()
        elif not rest.strip() and (not opened or marks[0] == opened[0]
                                   and len(marks) >= len(opened)):
            parts.append(_blanked(text[done:fence.start()]))
            done, opened = fence.start(), None
    if opened is not None:
        parts.append(_blanked(text[done:]))
    else:
        parts.append(text[done:])
    out = "".join(parts)
    return out if out != text else text


def passage_unfenced(text: str) -> str:
    """`unfenced` of a passage, a chunk's text, which may start inside a fence (the chunker
    cut a long code block): taken so when its first fence line has no info string and
    either it has an odd number of them or the second has one ("```" closing, "```bash"
    opening the next). Read as opening, such a closing line blanked every heading after it.
    Not sure: a passage ending inside a fence it opened with a bare "```" is read the other
    way round."""
    if "```" not in text and "~~~" not in text:
        return text
    infos = [m.group(2).strip() for m in _FENCE.finditer(text)]
    inside = bool(infos) and not infos[0] and (len(infos) % 2 == 1
                                               or len(infos) > 1 and bool(infos[1]))
    return unfenced(text, inside)
