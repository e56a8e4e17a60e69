"""An HTML page (a saved web page, exported documentation) as a document.

What it is: the page's main content — `<main>`, else `<article>` (every one of a page of
several, in order), else the element marked `role="main"` (Sphinx's `<div class="body">`),
else a `#content`-like box, the first of them holding half the body's text or more, else
`<body>` — without the boilerplate
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

from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.html_charset import decoded_page
from ragkit.loaders.html_depth import check_depth, closed
from ragkit.loaders.html_tables import table
from ragkit.loaders.markdown import TextBuilder
from ragkit.loaders.text import read_regular
from ragkit.outline import one_line

_DROP = ("script", "style", "noscript", "template", "nav", "aside", "form", "iframe", "svg",
         "button", "select", "head", "[role=navigation]", "[role=banner]",
         "[role=contentinfo]", "[aria-hidden=true]", "a.headerlink", "a.copiable-anchor",
         "a.copiable-link", ".sphinxsidebar")
_ROOTS = ("main", "article", "[role=main]")  # the first that is it: its outermost elements
_MARKED_MAIN = ("main", "[role=main]")  # taken when they hold any text; others need half
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
_ASIDE = {"aside", "nav", "header", "footer"}
MAX_HTML_BYTES = 64 * 2**20  # one page; parsing holds ~15× its size (52 MB took 808 MB)
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


def _words(node) -> int:
    return len(node.text(deep=True).split())


def _content_words(body) -> int:
    """The words of `body` outside its navigation, sidebars, headers and footers (`_DROP`,
    `_OUTSIDE`): what reading the whole body would index. One walk that steps over those
    elements (a walk up from each of them had been quadratic in the page's depth: 95 s for
    a million `<svg>`s 990 elements deep)."""
    skip = {node.mem_id for node in body.css(", ".join(_DROP + _OUTSIDE))}
    if not skip:
        return _words(body)
    pieces: list[str] = []
    stack = [body.child] if body.child is not None else []
    while stack:
        node = stack.pop()
        if node.next is not None:
            stack.append(node.next)
        if node.tag == "-text":
            pieces.append(node.text(deep=False))
        elif node.child is not None and node.mem_id not in skip:
            stack.append(node.child)
    return len("".join(pieces).split())


def _roots(tree) -> list:
    """The page's main content (module docstring): the first of `<main>`, the `<article>`s,
    `role="main"` and `_GUESSED_ROOTS` that is it — a marked main holding any text, the others
    at least half the body's content words (`_content_words`); else [] (the body). A comment
    thread or an embedded post marked up as `<article>` had been the whole document, and an
    app shell's empty `<main>` had left "no body text"."""
    if tree.body is None:
        return []
    whole = None
    for selector in (*_ROOTS, *_GUESSED_ROOTS):
        found = (_outermost(tree.css(selector)) if selector in _ROOTS
                 else [node for node in [tree.css_first(selector)] if node is not None])
        words = sum(map(_words, found))
        if not words:
            continue
        if selector in _MARKED_MAIN:  # the page says so: even a short stub page is it
            return found
        whole = _content_words(tree.body) if whole is None else whole
        if words * 2 >= whole:
            return found
    return []


def load(path: Path, rel: str) -> Document:
    """The document of the HTML file `path` (id `rel`); no body text is one error line."""
    from selectolax.lexbor import LexborHTMLParser  # deferred: only when a page is met
    page = closed(decoded_page(path, read_regular(path, MAX_HTML_BYTES)))
    check_depth(path, page)
    tree = LexborHTMLParser(page)
    title_node = tree.css_first("title")
    title = title_node.text(deep=True) if title_node is not None else ""
    for node in tree.css("script, style, noscript, template"):
        node.decompose()  # first: their text must not count toward `_roots`' shares
    roots = _roots(tree)
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
