"""The bounds on an HTML page's nesting and attributes, checked before the HTML5 parser
builds its tree.

What it is: `closed(page)` writes each self-closed element that is not void as an empty
pair, as the parser would otherwise nest what follows inside it; `check_depth(path, page)`
refuses, in one line naming the file, a page whose elements nest more than `MAX_DEPTH`
deep, reading tags as HTML's tokenizer does and closing elements as its tree builder does
(an end tag closes what its element holds, and nothing past a scope boundary), or whose
element holds more than `MAX_ATTRIBUTES` attributes of different names — counting, for
`<html>` and `<body>`, the names of every such start tag, which the parser adds to the one
element — in time linear in the page, so a hostile page is refused in well under a second.

What it is not: a parser. Where it and HTML disagree, a review found pages that nested
10,000 deep unrefused; each such case is a test in tests/test_owndocs_html.py.
"""
from __future__ import annotations

import re
from pathlib import Path

from ragkit.documents import RagkitError

MAX_DEPTH = 1000  # elements open at once; real pages stay under ~100
# attributes of different names on one element; real ones hold a few dozen. The parser's time
# grows with the square of an element's count: 40,000 took 7 s, 80,000 35 s (a 1 MB page), 2
# million one not parsed in five minutes; 256 on every element of a 60 MB page took 3.7 s
MAX_ATTRIBUTES = 256
_MERGED = ("html", "body")  # every start tag of these adds its attributes to the one element
# an attribute as HTML's tokenizer reads it: a name (a "=" may start it), then maybe a value
_ATTRIBUTE = re.compile(r"""([^\s/>][^\s/>=]*)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]*))?""")


def _attributes(outside: str = ">=") -> str:
    """A tag's attributes as HTML's tokenizer reads them, as a pattern: a quote opens a value
    only after "=" (atomic: never taken back to end the tag at a ">" inside `title="/>"`), a
    quote elsewhere is part of a name (`<x a"<div>` is one tag); `outside`: the characters
    the text outside values lacks. They end before the first "/>" or ">" outside a value,
    taken in runs and never given back (possessive): matched one character at a time, with
    a way back kept at each, a 25 MB start tag of bare attribute names took 2.8 GB and 14 s
    to reach the refusal of its attributes."""
    return rf"""(?:[^{outside}/]++|/(?!>)|(?>=\s*(?:"[^"]*"|'[^']*'|[^\s>]*)))*+"""


# a start or end tag, attributes and all; group 3 a slash before ">" (`_self_closing` decides).
# A name runs to a space, "/" or ">" as HTML reads it (`<x_y>`, `<o:p>`), and a slash may part
# it from the attributes (`<div/x>` is `<div x>`).
_TAG = re.compile(rf"<(/?)([a-zA-Z][^\s/>]*)(?:[\s/]{_attributes()})??(/)?>")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr", "param", "keygen"}  # elements that never hold anything
# void elements and those whose end tag may be left out: they do not count as nesting
_UNNESTED = _VOID | {"p", "li", "td", "th", "tr", "dt", "dd", "option", "tbody", "thead",
                     "colgroup"}
# (its attributes hold no "<" outside values: a run of "<" with no ">" was rescanned from
# each, and a tag holding one is never a self-closed element's)
_SELF_CLOSED = re.compile(rf"<([a-zA-Z][^\s/<>]*)(?:[\s/]{_attributes('<>=')})??/>")
# elements an end tag does not reach past (HTML's "in scope"): `<div><marquee></div>` leaves
# the div open
_SCOPE = {"applet", "caption", "html", "table", "td", "th", "marquee", "object", "template",
          "mi", "mo", "mn", "ms", "mtext", "annotation-xml", "foreignobject"}
# an unquoted attribute value takes a slash before ">" as its own: `<a href=/docs/>` opens
# ("=" left out of the value: tried from every "=" of a tag of 160,000 of them, it took 40 s)
_UNQUOTED_LAST = re.compile(r"""=\s*[^\s"'>=]*/>$""")


def check_depth(path: Path, page: str) -> None:
    """Refuse a page nested deeper than `MAX_DEPTH`: the HTML5 tree builder's work grows
    with the square of the depth (200,000 nested `<div>`s took five minutes to parse). Run
    on the page `closed` returns, where every `/>` does close its element."""
    open_tags: list[str] = []  # the elements open, innermost last
    at: dict[str, list[int]] = {}  # where each name is open in `open_tags`
    bounds: list[int] = []  # where scope boundaries are open
    merged: dict[str, set[str]] = {name: set() for name in _MERGED}
    # no tag ends past the last ">": a page of "<a x" without one was rescanned from each "<"
    for tag in _TAG.finditer(page, 0, page.rfind(">") + 1):
        name = tag.group(2).lower()
        if not tag.group(1) and (name in merged or len(tag.group(0)) > 2 * MAX_ATTRIBUTES):
            _check_attributes(path, tag, merged.get(name, set()))
        if (tag.group(3) and _self_closing(tag.group(0))) or name in _UNNESTED:
            continue
        if not tag.group(1):
            at.setdefault(name, []).append(len(open_tags))
            bounds += [len(open_tags)] if name in _SCOPE else []
            open_tags.append(name)
            if len(open_tags) > MAX_DEPTH:
                raise RagkitError(f"{path}: elements nested more than {MAX_DEPTH:,} deep "
                                  f"(a hostile page?)")
        elif at.get(name) and not (bounds and bounds[-1] > at[name][-1]):
            # an end tag closes its element and all opened inside it, as HTML does; one
            # that closes nothing (`</span>` alone, `</div>` past a `<marquee>`) is ignored
            while True:
                inner = open_tags.pop()
                at[inner].pop()
                if bounds and bounds[-1] == len(open_tags):
                    bounds.pop()
                if inner == name:
                    break


def _check_attributes(path: Path, tag: re.Match, names: set[str]) -> None:
    """Add the attribute names of the start tag `tag` to `names` (the element's: empty for
    any element but `<html>` and `<body>`), refusing more than `MAX_ATTRIBUTES` of them. Only
    a tag longer than twice the bound can hold that many on its own (a name and a space
    each), so others are not read."""
    for attribute in _ATTRIBUTE.finditer(tag.string, tag.end(2), tag.end() - 1):
        names.add(attribute.group(1).lower())
        if len(names) > MAX_ATTRIBUTES:  # at once: a tag may hold millions
            raise RagkitError(f"{path}: an element with more than {MAX_ATTRIBUTES} "
                              f"attributes (<{tag.group(2)}>: a hostile page?)")


def _self_closing(tag: str) -> bool:
    """Whether a start tag ending in "/>" closes itself as HTML reads it: not when the slash
    ends an unquoted attribute value (`<a href=/x/>` is a link to "/x/" holding what
    follows); `<div/>`, `<a name="n"/>` and `<br />` do."""
    return not _UNQUOTED_LAST.search(tag)


def closed(page: str) -> str:
    """`page` with each self-closed element that is not void (`<div/>`, `<span .../>`)
    written as an empty pair (`<div></div>`). HTML ignores that slash — `<div/>` opens a div
    that swallows what follows, and 200,000 of them hung a build past the depth check, which
    took them as closed — while inside `<svg>` it closes. Closing them everywhere makes the
    parse match the check; the text read is the same."""
    def pair(tag: re.Match) -> str:
        name = tag.group(1)
        if name.lower() in _VOID or not _self_closing(tag.group(0)):
            return tag.group(0)
        return f"{tag.group(0)[:-2].rstrip()}></{name}>"
    return _SELF_CLOSED.sub(pair, page)
