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

What it is not: a Markdown renderer. Inline markup stays as written, and only top-level
headings are rewritten (a `#` line inside a list item would end the item).
"""
from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt

_SENTENCE_ENDS = (".", "。")  # a line ending so is a sentence, not a heading's label


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """CommonMark with GFM tables, blocks only: no inline markup is parsed (half the time)."""
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def setext_headings(text: str) -> str:
    """Markdown `text` with its setext headings as `#` / `##` lines (module docstring).
    Written in one pass, in the order the headings come: rewriting each in place in the
    list of lines moved every line after it, 37 s for 5 MB of short sections."""
    tokens = _parser().parse(text)
    lines = text.split("\n")
    out: list[str] = []
    at = 0  # the first line of `lines` not yet in `out`
    for opened, inline in zip(tokens, tokens[1:]):
        if (opened.type != "heading_open" or opened.level != 0 or opened.markup not in ("=", "-")
                or not opened.map or inline.content.startswith("|")):
            continue
        start, end = opened.map  # the paragraph's lines and, last, its underline
        if opened.markup == "-" and (end - start > 2 or lines[end - 2].rstrip().endswith(
                _SENTENCE_ENDS)):
            continue  # sentences over a rule written without a blank line: text, as written
        out.extend(lines[at:start])
        heading = " ".join(line.strip() for line in lines[start:end - 1])
        out.append(("#" if opened.markup == "=" else "##") + " " + heading)
        at = end
    if not at:
        return text
    out.extend(lines[at:])
    return "\n".join(out)
