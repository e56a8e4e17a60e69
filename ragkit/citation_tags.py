"""A passage's `[Source: <title> | Section: <heading path>]` tag: the Section in force at a
cited block, and the tag as people read it.

What it is: `cited_tag(tag, before, name)` is the tag a citation shows. A passage's tag
names the heading path where its chunk starts, but a chunk can run on under later headings,
so the Section of a cited block follows the Markdown heading lines of the passage's text
before it (`section_at`); a configuration file's follows the keys over the cited line
(`ragkit.config_keys.within`); a source file's stays. `place`, `tag_place` and `tags_place`
write a tag for people ("Refund policy / Deadline; Payment"), as `ragkit ask` lists its
sources; `section_list` reads a tag's Section back into labels.

What it is not: the tag's maker (`ragkit.assemble` labels each passage from its chunk's
metadata) nor a Markdown parser (a heading is a `#` line outside a code fence).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.config_keys import is_config_name, within
from ragkit.fences import passage_unfenced
from ragkit.file_kinds import is_code_name
from ragkit.outline import label as short_label

NO_SECTION = "—"
# A heading line: its marks, the blanks after them, and the rest of the line, whose closing
# blanks and `#`s `_heading_title` drops. One pattern doing both, "(.+?)[ \t]*#*[ \t]*$",
# backtracked over every split of a run of blanks: 10,000 spaces in a heading held `ask`.
_HEADING = re.compile(r"^(#{1,6})[ \t]+([^\n]+)$", re.M)
_TAG = re.compile(r"\[Source: (?P<title>.*) \| Section: (?P<section>.*)\]", re.S)


def section_at(section: Sequence[str], before: Sequence[str]) -> list[str]:
    """The heading path in force after the texts `before`, given the path `section` in force
    where they start: each Markdown heading line (`#` to `######`) replaces the headings of
    its level and deeper.

    What it assumes: the starting path's headings have levels 1, 2, 3, ... in order (a tag
    keeps titles, not levels), true of documents that nest their headings one level at a
    time; in a document that skips levels (an HTML page's `<h1>` then `<h3>`s) one of them
    may be kept one step too long. The headings read from `before` keep their own levels:
    taken as levels 1, 2, 3, the second `###` of a page was nested under the first.
    """
    path = list(enumerate(section, 1))  # (level, title)
    # as one text: `blocks` cuts "## 2. Cooling-off period" after "2." (a sentence end), so
    # block by block the heading read as "2."
    for match in _HEADING.finditer(passage_unfenced("".join(before))):  # no fenced comment
        level = len(match.group(1))
        path = [kept for kept in path if kept[0] < level] + [
            (level, _heading_title(match.group(2)))]
    return [title for _, title in path]


def _heading_title(rest: str) -> str:
    """A heading line's title: `rest` (after its marks and blanks) without its closing
    blanks, `#`s and blanks — its first character at least, as the one pattern read it —
    cut to a label as the chunks' sections are (`ragkit.outline.label`, 200 characters)."""
    return short_label(rest.rstrip(" \t").rstrip("#").rstrip(" \t") or rest[:1])


def _section_shown(title: str, section: str) -> str:
    """`section` as `place` shows it under `title`: "" when it is none or only repeats the
    title; a leading heading that repeats the title, or is the title's head before its
    subtitle ("Varroa control" of "Varroa control: the treatment calendar"), left out."""
    if section == NO_SECTION:
        return ""
    head, sep, rest = section.partition(" > ")
    if head != title and not re.match(rf"{re.escape(head)}\s*(?::|\s[-–—])\s", title):
        return section
    return rest if sep else ""


def place(title: str, section: str) -> str:
    """`title / section` for people (`ragkit ask`'s source list): a leading heading that
    repeats the title (a Markdown H1, or the title's head before a subtitle) is left out,
    and so is a section that is none (`NO_SECTION`: the passage comes before any heading),
    which showed as "notes.md / —"."""
    shown = _section_shown(title, section)
    return f"{title} / {shown}" if shown else title


def tag_place(tag: str) -> str:
    """`place` of a `[Source: … | Section: …]` tag, e.g. a citation's `cited_tag`; a string
    that is no tag comes back as it is."""
    match = _TAG.fullmatch(tag)
    return place(match["title"], match["section"]) if match else tag


def tags_place(tags: Sequence[str]) -> str:
    """`tag_place` of one source's cited tags, the title said once: "Refund policy /
    Deadline; Payment", not "Refund policy / Deadline; Refund policy / Payment" (sentences
    cited under two headings of one chunk). Each section once, in `tags` order; tags of
    other titles, or no tags, are shown whole after a "; "."""
    parsed = [_TAG.fullmatch(tag) for tag in tags]
    title = parsed[0]["title"] if parsed and parsed[0] else None
    shown: list[str] = []
    for tag, match in zip(tags, parsed):
        one = (_section_shown(title, match["section"]) if match and match["title"] == title
               else tag_place(tag))
        if one not in shown:
            shown.append(one)
    if title is None:
        return "; ".join(shown)
    sections = "; ".join(s for s in shown if s)
    return f"{title} / {sections}" if sections else title


def cited_tag(tag: str, before: Sequence[str], name: str = "") -> str:
    """`tag` (`[Source: … | Section: …]`) with the Section in force after the texts `before`
    (the passage's blocks up to and including a cited one) of document `name`. A source
    file's passage keeps its tag: its Section names enclosing definitions, and a `#` line in
    code is a comment. A configuration file's gets the keys or table over the cited line
    (`ragkit.config_keys.within`): "deploy.yaml / database" for "pool_size: 25"."""
    match = _TAG.fullmatch(tag)
    config = is_config_name(name)
    if not match or (is_code_name(name) and not config):
        return tag
    start = section_list(match["section"])
    if config:
        text = "".join(before)
        path = within(name, start, text, len(text) - len(before[-1]) if before else 0)
    else:
        path = section_at(start, before)
    return f"[Source: {match['title']} | Section: {' > '.join(path) or NO_SECTION}]"


def section_list(section: str) -> list[str]:
    """A passage's Section as its labels: "A > B" is ["A", "B"], `NO_SECTION` none."""
    return [] if section == NO_SECTION else section.split(" > ")
