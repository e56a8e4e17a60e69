"""Markdown code fences: a `# comment` inside one is no heading.

What it is: `unfenced(text)` — `text` with the `#` that opens each line inside a fenced code
block replaced by a space: the same length and offsets, so the heading scans read it instead
of the text (`ragkit.outline`'s chunk sections and structural contexts, the `[Source |
Section]` path of a citation in `ragkit.assemble`, a Markdown file's title). A README's
```` ```bash ```` block holding `# install the client` had made that comment the section of
every chunk after it (and a note's title, where it had no heading of its own). A fence is
CommonMark's: a line of at least three backticks or tildes after at most three spaces (a
backtick fence's info string holds no backtick), closed by a line of the same character at
least as long and nothing else; one never closed runs to the end of the text. A text
without a fence comes back as the same object.

What it is not: a Markdown parser. A fence inside a list item or a block quote counts where
its line starts with the fence (a `>` before it does not), and an indented code block needs
nothing: a heading line starts at its line's first character. Text is never changed: only
what a heading scan reads.
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.M)
_LINE_HASH = re.compile(r"^#", re.M)


def unfenced(text: str) -> str:
    """`text` with each line inside a fenced code block starting with a space for its `#`
    (module docstring); `text` itself when no fence opens in it."""
    if "```" not in text and "~~~" not in text:
        return text
    parts: list[str] = []
    done = 0  # text before this is in parts
    opened: str | None = None  # the open fence's marks
    for fence in _FENCE.finditer(text):
        marks, rest = fence.group(1), fence.group(2)
        if opened is None:
            if not (marks[0] == "`" and "`" in rest):
                opened = marks
                parts.append(text[done:fence.end()])
                done = fence.end()
        elif marks[0] == opened[0] and len(marks) >= len(opened) and not rest.strip():
            parts.append(_LINE_HASH.sub(" ", text[done:fence.start()]))
            done, opened = fence.start(), None
    if opened is not None:
        parts.append(_LINE_HASH.sub(" ", text[done:]))
    else:
        parts.append(text[done:])
    out = "".join(parts)
    return out if out != text else text
