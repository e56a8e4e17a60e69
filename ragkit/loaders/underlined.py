"""Underlined headings of Markdown and reStructuredText files, written as `#` heading lines.

What it is: `atx_headings(text, name)` — the text of the file `name` with each heading its
format marks by underlining rewritten as the `#` line every loader writes for a heading, so
it titles the document and heads its sections for the chunker, the structural
contextualizer and the `[Source | Section]` tags, which read `#` lines only (before, such a
heading was a line of text and a line of `=`): a Markdown file's (`.md`, `.markdown`)
setext headings (`ragkit.loaders.setext`) and a reStructuredText file's (`.rst`) section
titles (`ragkit.loaders.rst_titles`). A text without an underline-shaped line is not read
line by line, and comes back unchanged, as does one of any other suffix.

What it is not: a reader of plain `.txt` files, whose `---` and `===` lines mean whatever
their author meant, nor of source files (a docstring's `Parameters` over `----------` is
code's text).
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from ragkit.loaders.rst_titles import rst_headings
from ragkit.loaders.setext import UNDERLINE, setext_headings

# a line that may underline a title, anywhere (Markdown's: `UNDERLINE`): a text without one
# is left as it is
_RST_CANDIDATE = re.compile(r"^([!-/:-@\[-`{-~])\1*[ \t]*$", re.M)


def atx_headings(text: str, name: str) -> str:
    """`text` of the file `name` with its underlined headings as `#` lines (see the module
    docstring); unchanged for a suffix other than `.md`, `.markdown` and `.rst`."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in (".md", ".markdown") and UNDERLINE.search(text):
        return setext_headings(text)
    if suffix == ".rst" and _RST_CANDIDATE.search(text):
        return rst_headings(text)
    return text
