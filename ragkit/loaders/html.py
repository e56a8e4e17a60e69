"""An HTML page (a saved web page, exported documentation) as a document.

What it is: the page's main content — `<main>`, else `<article>` (every one of a page of
several, in order), else the element marked `role="main"` (Sphinx's `<div class="body">`),
else `<body>` — without the boilerplate
around it: navigation, sidebars (`<aside>`, Sphinx's sidebar), scripts, styles, forms,
permalink anchors (Sphinx's `¶` after each heading, Texinfo's after each definition) and,
outside the main element, the page header and footer (`<header>`/`<footer>` and Texinfo's or
Sphinx's `<div class="header">`/`"footer"`, which hold "Next: ... Up: ..." bars and copyright
lines). `<h1>`-`<h6>` become `#` lines (the
heading path), `<p>`, list items (`- `, `1. `), table rows (`| a | b |`) and loose text
become paragraphs; `<pre>` keeps its lines, indented as a Markdown code block. The title
is `<title>`, else the first heading.

Why selectolax (the Lexbor engine): it parses a 50 MB page in seconds and installs
as one small wheel; trafilatura, which guesses the main content with heuristics, brings
about 70 MB of dependencies (lxml, dateparser, regex, babel, ...). A page marked up with
`<main>`/`<article>`/`<nav>` — what HTML5 generators write — needs no guessing.

A page nested deeper than 1,000 elements or with an element of more than 256 attributes
(`ragkit.loaders.html_depth`), or over `MAX_HTML_BYTES`, or gzip-compressed or binary bytes,
is refused before parsing (one line); a `<meta charset>` naming UTF-16 or an unknown codec is
not believed; one naming EUC-KR is read as CP949, as browsers read it, and a few bytes the
named charset cannot read become U+FFFD rather than sending the page to Windows-1252. A
title, heading or definition labels each chunk cut to 200 characters (`ragkit.outline.label`).

What it is not: a renderer (CSS is ignored: text hidden by a style sheet is kept) nor a
readability heuristic for pages whose navigation is plain `<div>`s.
"""
from __future__ import annotations

import codecs
import re
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.html_depth import check_depth, closed
from ragkit.loaders.html_tables import table
from ragkit.loaders.markdown import TextBuilder
from ragkit.loaders.text import korean_legacy, read_regular
from ragkit.outline import one_line

_DROP = ("script", "style", "noscript", "template", "nav", "aside", "form", "iframe", "svg",
         "button", "select", "head", "[role=navigation]", "[role=banner]",
         "[role=contentinfo]", "[aria-hidden=true]", "a.headerlink", "a.copiable-anchor",
         "a.copiable-link", ".sphinxsidebar")
_ROOTS = ("main", "article", "[role=main]")  # the first present: all its outermost elements
# in <div> soup: the content's usual ids, taken when they hold most of the page's text
_GUESSED_ROOTS = ("#content", "#main-content", "#main", "div.content", "div.main-content")
_OUTSIDE = ("header", "footer", "div.header", "div.footer", "div.nav-panel", "#header",
            "#footer", "#nav", "#navigation", "#navbar", "#menu", "#sidebar", "div.sidebar",
            "div.navbar", "div.breadcrumbs", "div.breadcrumb", "#breadcrumbs")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_WHOLE = {"p", "li", "dt", "dd", "pre", "blockquote", "figcaption", "caption", "address",
          "summary", "td", "th"}
_BLOCKS = _WHOLE | set(_HEADINGS) | {"div", "section", "article", "main", "ul", "ol", "dl",
                                     "table", "tr", "br", "hr", "header", "footer", "figure",
                                     "details", "body", "tbody", "thead"}
_INNER_BLOCKS = "p, div, li, br, table, tr, td, th, ul, ol, dl, dt, dd, pre, blockquote, h1, " \
    "h2, h3, h4, h5, h6, section"
_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([\w-]+)|<\?xml[^>]+encoding=["']([\w-]+)""",
                      re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_ASIDE = {"aside", "nav", "header", "footer"}
_BINARY = re.compile("[\x00-\x08\x0b\x0e-\x1f]")  # C0 control characters but \t\n\f\r
# codecs whose labels browsers read as a superset (WHATWG's encoding standard): every Latin-1
# and ASCII label is Windows-1252 (its quotes and dashes, 0x91-0x97, would be C1 controls
# otherwise), every EUC-KR label Windows-949 (CP949: Korean pages labelled euc-kr hold its
# 8,822 added syllables, 똠 or 샾, which strict EUC-KR refused, and the whole page became
# Windows-1252 mojibake)
_SUPERSET = {"iso8859-1": "cp1252", "ascii": "cp1252", "euc_kr": "cp949"}
# EUC-KR labels of the standard that Python does not know
_KOREAN_LABELS = ("cseuckr", "csksc56011987", "iso-ir-149", "ks_c_5601-1989", "ksc_5601",
                  "windows-949")


def _c1(error: UnicodeDecodeError) -> tuple[str, int]:
    """The 5 bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) as the C1
    code points browsers give them; one stray byte sent the whole page to Latin-1."""
    return chr(error.object[error.start]), error.start + 1


codecs.register_error("ragkit-c1", _c1)
MAX_HTML_BYTES = 64 * 2**20  # one page; parsing holds ~15× its size (52 MB took 808 MB)


def _decode(raw: bytes) -> str:
    """The encoding a byte order mark names (Windows saves "Unicode" pages as UTF-16), else
    UTF-8, else the charset a `<meta>` or an XML declaration names (a few bytes it cannot
    read become U+FFFD, as in a browser: one stray byte at the end of a Korean page sent the
    whole page to Windows-1252 mojibake), else CP949 for Korean bytes (`korean_legacy`: as a
    browser's detector reads them), else Windows-1252 (what browsers assume)."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                break
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    named = _CHARSET.search(raw[:4096])
    names = [(named.group(1) or named.group(2)).decode("ascii")] if named else []
    # a page whose <meta> is readable as ASCII is not UTF-16 or -32 whatever it says (the
    # WHATWG rule): decoded so, its tags and all turned into CJK characters
    names = [n for n in names if not _codec(n).startswith(("utf-16", "utf-32"))]
    names = ["cp949" if n.lower() in _KOREAN_LABELS else _SUPERSET.get(_codec(n), n)
             for n in names]
    for encoding in names:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeError):  # "undefined" raises a bare UnicodeError
            pass
        try:  # a few bad bytes (a page cut short) are U+FFFD, as browsers show them
            text = raw.decode(encoding, errors="replace")
        except (LookupError, UnicodeError):
            continue
        bad = text.count("\ufffd")  # kept when the charset read some of what is not ASCII:
        if bad <= max(8, len(text) // 1000) and _read_some(text, bad):  # else it is mislabelled
            return text
    if korean_legacy(raw):  # Korean without a usable charset: browsers detect CP949 too
        return raw.decode("cp949")
    return raw.decode("cp1252", errors="ragkit-c1")


def _read_some(text: str, bad: int) -> bool:
    """True when `text` holds a character beyond ASCII other than its `bad` U+FFFD: a page
    labelled UTF-8 but saved as Windows-1252 ('caf\\xe9') reads nothing but U+FFFD so."""
    return sum(not c.isascii() for c in text) > bad


def _decoded_page(path: Path, raw: bytes) -> str:
    """`_decode(raw)`, or one line when the bytes are no web page: a gzip file (a page saved by
    `curl` without `--compressed`) or binary data (more than 5 % control characters in its
    first 4 KB once decoded; C0 only, as a Windows-1252 page's quotes are C1 in Latin-1) —
    decoded as Windows-1252 they were indexed as garbage."""
    if raw.startswith(b"\x1f\x8b"):
        raise RagkitError(f"{path}: gzip-compressed, not HTML (saved without decompressing? "
                          f"gunzip it first)")
    page = _decode(raw)
    head = page[:4096]
    if len(_BINARY.findall(head)) > len(head) * 0.05:
        raise RagkitError(f"{path}: looks binary, not HTML")
    return page


def _codec(name: str) -> str:
    """Python's own name of the codec `name` ("u16", "UnicodeLittleUnmarked" -> utf-16…)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return name.lower()


def _list_prefix(node, numbers: dict[int, int]) -> str:
    """"- ", or "N. " for the N-th `<li>` of an `<ol>`. `numbers` holds each numbered item's
    number by node id, filled once per list (counting the items before each one, each time,
    made a 40,000-item list take four minutes)."""
    parent = node.parent
    if parent is None or parent.tag != "ol":
        return "- "
    if node.mem_id not in numbers:
        number, child = 0, parent.child
        while child is not None:
            if child.tag == "li":
                number += 1
                numbers[child.mem_id] = number
            child = child.next
    return f"{numbers.get(node.mem_id, 1)}. "


def _flat(node) -> str:
    """A block's text as one paragraph: inline pieces joined as they are ("Ctrl+C",
    "nas@debian.org"), a space where a block inside it (paragraphs in a list item, a table
    in a cell) starts or ends, so that the words of two blocks are not glued together."""
    # a selector matches the node itself: ask its children (no inner block: the C fast path)
    if all(child.css_first(_INNER_BLOCKS) is None for child in node.iter()):
        return node.text(deep=True)
    parts: list[str] = []
    stack = list(reversed(list(node.iter(include_text=True))))
    while stack:
        item = stack.pop()
        if item is None:  # the end of a block
            parts.append(" ")
        elif item.tag == "-text":
            parts.append(item.text(deep=False))
        else:
            if item.tag in _BLOCKS:
                parts.append(" ")
                stack.append(None)
            stack.extend(reversed(list(item.iter(include_text=True))))
    return "".join(parts)


def _walk(root, out: TextBuilder) -> None:
    """Blocks of `root` in document order, iteratively (a page nested 100,000 deep is fine)."""
    loose: list[str] = []
    numbers: dict[int, int] = {}  # each numbered list item's number (`_list_prefix`)

    def flush() -> None:
        if loose:
            out.paragraph(" ".join(loose))
            loose.clear()

    stack = [root.child] if root.child is not None else []
    while stack:
        node = stack.pop()
        if node.next is not None:
            stack.append(node.next)
        tag = node.tag
        if tag == "-text":
            loose.append(node.text(deep=False))
            continue
        if tag not in _BLOCKS:  # inline (a, b, span, ...) or unknown: walk into it
            if node.child is not None:
                stack.append(node.child)
            continue
        flush()
        if tag in _HEADINGS:
            out.heading(_HEADINGS[tag], node.text(deep=True))
        elif tag == "table":
            out.rows(*table(node, _flat))
        elif tag == "pre":
            out.preformatted(node.text(deep=True))
        elif tag in _WHOLE:
            out.paragraph(_flat(node), _list_prefix(node, numbers) if tag == "li" else "")
        elif node.child is not None:
            stack.append(node.child)
    flush()


def _outermost(nodes: list) -> list:
    """The `nodes` no other of them encloses, in page order: every `<article>` of a page of
    several (an FAQ, a blog's list; only the first was read), not the comments inside one,
    nor a "related posts" teaser in an `<aside>`, `<nav>`, `<header>` or `<footer>`."""
    ids = {node.mem_id for node in nodes}

    def enclosed(node) -> bool:  # in another of them, or in a sidebar, menu, header, footer
        parent = node.parent
        while parent is not None:
            if parent.mem_id in ids or parent.tag in _ASIDE:
                return True
            parent = parent.parent
        return False
    return [node for node in nodes if not enclosed(node)]


def _guessed_root(tree):
    """In a page without `<main>`, `<article>` or `role="main"`, the first `_GUESSED_ROOTS`
    element holding at least half of the body's text (a small "content" box is not it)."""
    whole = len(tree.body.text(deep=True).split())
    for selector in _GUESSED_ROOTS:
        node = tree.css_first(selector)
        if node is not None and len(node.text(deep=True).split()) * 2 >= whole:
            return node
    return None


def load(path: Path, rel: str) -> Document:
    """The document of the HTML file `path` (id `rel`); no body text is one error line."""
    from selectolax.lexbor import LexborHTMLParser  # deferred: only when a page is met
    page = closed(_decoded_page(path, read_regular(path, MAX_HTML_BYTES)))
    check_depth(path, page)
    tree = LexborHTMLParser(page)
    title_node = tree.css_first("title")
    title = title_node.text(deep=True) if title_node is not None else ""
    for node in tree.css("script, style, noscript, template"):
        node.decompose()  # first: their text must not count toward `_guessed_root`'s share
    roots = next((found for found in map(_outermost, map(tree.css, _ROOTS)) if found), [])
    if not roots and tree.body is not None:
        roots = [node for node in [_guessed_root(tree)] if node is not None]
    drop = _DROP if roots else _DROP + _OUTSIDE
    roots = roots or [node for node in [tree.body] if node is not None]
    if not roots:
        raise RagkitError(f"{path}: no body text")
    out = TextBuilder()
    for root in roots:
        for node in root.css(", ".join(drop)):
            node.decompose()
        _walk(root, out)
    text = out.text()
    if not text.strip():
        raise RagkitError(f"{path}: no body text")
    title = out.title(title) or rel
    return Document(rel, text, title, {"path": rel, "format": "html", "title": title})
