"""Underlined headings of Markdown and reStructuredText files, written as `#` heading lines.

What it is: `atx_headings(text, name)` — the text of the file `name` with each heading its
format marks by underlining rewritten as the `#` line every loader writes for a heading, so
it titles the document and heads its sections for the chunker, the structural
contextualizer and the `[Source | Section]` tags, which read `#` lines only (before, such a
heading was a line of text and a line of `=`): a Markdown file's (`.md`, `.markdown`)
setext headings (`ragkit.loaders.setext`) and a reStructuredText file's (`.rst`) section
titles (`ragkit.loaders.rst_titles`), and a plain-text file's (`.txt`, `.text`) titles
underlined to their own length (`text_headings`), or, for a manual page saved as text, its
title and sections (`ragkit.loaders.man_pages`). A text without an underline-shaped line is
not read line by line, and comes back unchanged, as does one of any other suffix.

What it is not: a reader of every `---` and `===` line of a plain-text file, which means
whatever its author meant: only a short line that starts a block, with an underline of
`=`, `-` or `~` as long as it (give or take two characters), is a title there ("Version
3.2.0 (released 14 March 2025)" over 38 dashes was a line of text, so a release note's
items named no version); a rule of another length under a line is a rule. Nor a reader of
source files (a docstring's `Parameters` over `----------` is code's text).
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from ragkit.loaders.man_pages import man_headings
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
    if suffix in (".txt", ".text"):
        if (page := man_headings(text)) is not None:
            return page
        if _TEXT_UNDERLINE.search(text):
            return text_headings(text)
    return text


_TEXT_UNDERLINE = re.compile(r"^([=~-])\1{2,}[ \t]*$", re.M)
_TEXT_TITLE = 100  # characters: a longer line over an underline is a paragraph over a rule


def text_headings(text: str) -> str:
    """A plain text's underlined titles as `#` lines, one level per underline character in
    the order first seen (as reStructuredText ranks them): a line of at most `_TEXT_TITLE`
    characters after a blank line (or the start), under which a line of one of `=`, `-`,
    `~` is as long as the title, give or take two characters. Unchanged without one."""
    lines = text.split("\n")
    styles: list[str] = []
    out: list[str] = []
    at = 0
    while at < len(lines):
        title, under = lines[at].strip(), lines[at + 1].strip() if at + 1 < len(lines) else ""
        if (title and (not at or not lines[at - 1].strip()) and len(title) <= _TEXT_TITLE
                and not lines[at][:1].isspace() and _TEXT_UNDERLINE.fullmatch(under)
                and abs(len(under) - len(title)) <= 2 and not _TEXT_UNDERLINE.fullmatch(title)):
            styles += [under[0]] if under[0] not in styles else []
            out.append("#" * min(styles.index(under[0]) + 1, 6) + " " + title)
            at += 2
            continue
        out.append(lines[at])
        at += 1
    return "\n".join(out) if styles else text
