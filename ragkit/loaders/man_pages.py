"""A manual page saved as plain text (`man ln > ln.txt`), read with its title and sections.

What it is: `man_headings(text)` — for a text whose first line is man's header (`LN(1)
User Commands LN(1)`: the page's name and section at both ends, set apart by runs of
spaces) and whose next line is a section name in capitals at the margin (`NAME`), the text
a folder's other documents are made of:

- a `# ` title from the NAME section (without one, the first: `BEZEICHNUNG`, `이름`),
  `ln - make links between files` (the file's path
  titled every chunk's context before, `ln.txt`, and nothing said what the page was about);
- each section name man prints at the left margin (NAME, SYNOPSIS, DESCRIPTION, OPTIONS) a
  `## ` heading, and each subsection (indented three spaces, as man prints `.SS`) a `### `
  one, so a chunk's context and a citation's `[Source | Section]` name them;
- the header and footer lines left out (they repeat the name in every chunk they fall in;
  a footer ends in the page's name, or has the same words at both ends, as BSD's);
- the body's indent and the spaces man pads justified lines with removed: Markdown reads a
  line indented four spaces as code, and `In  the  1st form` is words one space apart; a
  line that then opens with `#` (bash's `$#`, listed as `#`) written `\\#`, as every loader
  writes one, so it heads no section;
- a word man hyphenated across two lines joined, `su‐` `peruser` as `superuser` (U+2010,
  the hyphen groff prints in UTF-8, at a line's end between letters of one case): before,
  its halves were two search terms, and a quote or a question's span ended at `su‐`;
- a terminal's bold and underline overstrikes (`N\\bNA\\bA`, written when
  MAN_KEEP_FORMATTING is set) removed.

None for any other text. What it is not: a reader of man's source (`ln.1`, troff), of a
page rendered to HTML or PDF (their loaders read those), nor of info pages.
"""
from __future__ import annotations

import re

# man's header: NAME(SECTION) at both ends, the manual's name between ("LN(1) User Commands")
_HEADER = re.compile(r"\A\s*(?P<page>[^\s()][^()\n]*?\([^()\s]*\))(?:[ \t]{2,}.*?)?[ \t]{2,}"
                     r"(?P=page)[ \t]*$", re.M)
_COLUMNS = re.compile(r"[ \t]{2,}")  # what man sets a header's or footer's parts apart with
_SUBSECTION = re.compile(r"   (?=\S)(?P<title>.{1,80})")  # `.SS`, three spaces in
_HYPHENATED = re.compile(r"([^\W\d_])\u2010[ \t]*\n[ \t]*([^\W\d_])")
_OVERSTRUCK = re.compile(r".\x08")  # "N\bN" bold, "_\bN" underlined
_PADDING = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
SECTION_CHARS = 80  # a section name at the margin: "SEE ALSO", "BESCHREIBUNG"
TITLE_CHARS = 200  # a NAME section longer than this is cut at a word for the title


def _joined(found: re.Match[str]) -> str:
    """A word hyphenated at a line's end, joined when both halves are in one case: `su‐`
    `peruser`, `INVOCA‐` `TION`; `Non‐` `Unix` keeps its hyphen (the line break a space)."""
    left, right = found.group(1), found.group(2)
    if left.islower() == right.islower():
        return left + right
    return f"{left}\u2010{right}"


def _section_next(rest: str) -> bool:
    """Whether the first line with text after a header is a section name at the margin, in
    capitals (`NAME`, `BEZEICHNUNG`) or in a script without case (`이름`, `名前`: a Korean
    page was read as plain text, its header and footer kept): "f(x)  bounds  f(x)" over a
    sentence is no man page."""
    filled = [line for line in rest.split("\n") if line.strip()]
    line, body = (filled + ["", ""])[:2]
    caseless = (len(line) <= SECTION_CHARS and any(c.isalpha() for c in line)
                and not any(c.isupper() or c.islower() for c in line)
                and body[:1] in (" ", "\t"))  # under it, man's indented body, not prose
    return line[:1].strip() != "" and (line.isupper() or caseless)


def _footer(line: str, page: str) -> bool:
    """Whether `line` is man's footer: ending in the page's name (`GNU coreutils 9.1
    September 2022  LN(1)`), or with the same words at both ends (BSD's `BSD  November 28,
    2022  BSD`)."""
    parts = _COLUMNS.split(line.strip())
    return line.rstrip().endswith(page) or (len(parts) > 1 and parts[0] == parts[-1])


def man_headings(text: str) -> str | None:
    """`text` as a document with headings when it is a manual page saved as text (module
    docstring), else None."""
    if "\x08" in text:
        text = _OVERSTRUCK.sub("", text)
    header = _HEADER.match(text)
    if header is None or not _section_next(text[header.end():]):
        return None
    page = header["page"]
    lines = _HYPHENATED.sub(_joined, text[header.end():]).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _footer(lines[-1], page):
        lines.pop()
    out: list[str] = []
    name: list[str] = []  # the NAME section's words: the title
    section = ""
    sections = [line.strip() for line in lines if line[:1].strip()]
    first = "NAME" if "NAME" in sections else next(iter(sections), "")  # BEZEICHNUNG, 이름
    opened = True  # after a blank line or a section name: where man starts a `.SS`
    for line in lines:
        if line[:1].strip() and len(line) <= SECTION_CHARS:  # man indents all but these
            section = line.strip()
            out += ["", f"## {section}", ""]
            opened = True  # grep(1)'s "OPTIONS" then "   Generic Program Information"
            continue
        if opened and (sub := _SUBSECTION.fullmatch(line.rstrip())):
            out += ["", f"### {_PADDING.sub(' ', sub['title'])}", ""]
        else:
            body = _PADDING.sub(" ", line.strip())
            out.append("\\" + body if body.startswith("#") else body)  # `#  Expands to …`
            if section == first and body:  # NAME, else man's first section
                name.append(body)
        opened = not line.strip()
    title = " ".join(name) or page
    if len(title) > TITLE_CHARS:
        title = title[:TITLE_CHARS].rsplit(" ", 1)[0] + " …"
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return f"# {title}\n\n{body}\n"
