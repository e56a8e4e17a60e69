"""One Markdown document of the sample collection written as HTML, Word or PDF.

What it is: the Markdown subset the shipped corpus's documents use, read into blocks
(`parse`: front matter, headings, paragraphs, bullet and numbered items, table rows, fenced
code blocks), and
the three writers of those blocks — `to_html` (a saved web page, boilerplate around the
document), `write_docx` (python-docx: heading and list styles, real tables, the title
property) and `write_pdf` (reportlab: an outline entry per heading, a table row as one
line). A table's header row is marked as each format marks it — `<th>` cells, bold runs in
Word, a rule line printed under it in the PDF (a text layer has no table) — so that the
three load to the same text. `make_sample_formats.py` chooses the documents, the formats
and the folders.

What it is not: a Markdown renderer (only this subset), nor the choice of what the sample
collection holds.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace
from pathlib import Path

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_INLINE = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`")


@dataclass(frozen=True)
class Block:
    """One block of a Markdown document: heading (level 1-6), para, bullet, number, row or
    code (a fenced block: its lines as they are, the fence and its language left out). A
    row that a rule row (`|---|`) follows is its table's `header`: the columns' names."""

    kind: str
    text: str = ""
    level: int = 0
    cells: tuple[str, ...] = ()
    header: bool = False


def parse(markdown: str) -> tuple[dict[str, str], list[Block]]:
    """Front matter and blocks of the Markdown subset the sample documents use."""
    meta: dict[str, str] = {}
    match = _FRONT.match(markdown)
    if match:
        for line in match.group(1).splitlines():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
        markdown = markdown[match.end():]
    blocks: list[Block] = []
    para: list[str] = []
    code: list[str] | None = None  # the lines of an open fenced block

    def flush() -> None:
        if para:
            blocks.append(Block("para", " ".join(para)))
            para.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if code is not None:  # inside a fence: every line as it is, until the closing fence
            if stripped.startswith("```"):
                blocks.append(Block("code", "\n".join(code)))
                code = None
            else:
                code.append(line)
            continue
        heading = re.match(r"(#{1,6})\s+(.+?)\s*$", stripped)
        if stripped.startswith("```"):
            flush()
            code = []
        elif not stripped:
            flush()
        elif heading:
            flush()
            blocks.append(Block("heading", heading.group(2), len(heading.group(1))))
        elif stripped.startswith("|"):
            flush()
            cells = tuple(c.strip() for c in stripped.strip("|").split("|"))
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                blocks.append(Block("row", cells=cells))
            elif blocks and blocks[-1].kind == "row":
                blocks[-1] = replace(blocks[-1], header=True)
        elif re.match(r"[-*]\s", stripped):
            flush()
            blocks.append(Block("bullet", stripped[2:].strip()))
        elif re.match(r"\d+\.\s", stripped):
            flush()
            blocks.append(Block("number", stripped.split(None, 1)[1]))
        else:
            para.append(stripped)
    flush()
    return meta, blocks


def plain(text: str) -> str:
    """Inline Markdown marks removed: the text a reader sees."""
    return _INLINE.sub(lambda m: m.group(1) or m.group(2), text)


def row_line(cells: tuple[str, ...]) -> str:
    """A table row as one line of text, as the PDF prints it and the loaders read any row."""
    return "| " + " | ".join(plain(c) for c in cells) + " |"


def rule_line(cells: tuple[str, ...]) -> str:
    """The rule row under a header row, as the loaders write it for a table that names its
    columns (`<th>` cells, a Word table's bold first row): the PDF prints it as text."""
    return "|" + " --- |" * len(cells)


def _runs(text: str) -> list[tuple[str, str]]:
    """(style, text) pieces of a line: '' plain, 'b' bold, 'c' code."""
    out, pos = [], 0
    for match in _INLINE.finditer(text):
        out.append(("", text[pos:match.start()]))
        out.append(("b", match.group(1)) if match.group(1) else ("c", match.group(2)))
        pos = match.end()
    out.append(("", text[pos:]))
    return [piece for piece in out if piece[1]]


# --------------------------------------------------------------------------- HTML

_NAV = ('<header class="site"><a href="/">Home</a> | <a href="/docs">Docs</a> | '
        '<a href="/support">Support</a></header>\n<nav><ul><li><a href="/">Home</a></li>'
        '<li><a href="/docs">All documents</a></li><li><a href="/search">Search</a></li>'
        '</ul></nav>\n')
_FOOT = ('<aside><h3>Related pages</h3><p>See also our other documents.</p></aside>\n'
         '<footer><p>Copyright 2026. All rights reserved. Privacy | Cookies</p></footer>\n'
         '<script>console.log("analytics");</script>\n')


def _inline_html(text: str) -> str:
    tags = {"": "{}", "b": "<strong>{}</strong>", "c": "<code>{}</code>"}
    return "".join(tags[style].format(html.escape(piece, quote=False))
                   for style, piece in _runs(text))


def to_html(meta: dict[str, str], blocks: list[Block]) -> str:
    """A saved web page: boilerplate around a `<main>` holding the document."""
    body, open_list, rows = [], "", []

    def close() -> None:
        nonlocal open_list
        if open_list:
            body.append(f"</{open_list}>")
            open_list = ""
        if rows:
            body.append("<table>" + "".join(rows) + "</table>")
            rows.clear()

    for block in blocks:
        if block.kind in ("bullet", "number"):
            tag = "ul" if block.kind == "bullet" else "ol"
            if open_list != tag:
                close()
                body.append(f"<{tag}>")
                open_list = tag
            body.append(f"<li>{_inline_html(block.text)}</li>")
            continue
        if block.kind == "row":
            cell = "th" if block.header else "td"
            rows.append("<tr>" + "".join(f"<{cell}>{_inline_html(c)}</{cell}>"
                                         for c in block.cells) + "</tr>")
            continue
        close()
        if block.kind == "heading":
            body.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif block.kind == "code":
            body.append(f"<pre><code>{html.escape(block.text, quote=False)}</code></pre>")
        else:
            body.append(f"<p>{_inline_html(block.text)}</p>")
    close()
    title = html.escape(meta.get("title", ""))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{title}</title><style>body {{ font-family: sans-serif; }}</style>"
            f"</head>\n<body>\n{_NAV}<main>\n" + "\n".join(body) + f"\n</main>\n{_FOOT}"
            "</body></html>\n")


# --------------------------------------------------------------------------- DOCX

def write_docx(meta: dict[str, str], blocks: list[Block], path: Path) -> None:
    """A Word file: heading styles, list styles, real tables, the title in its properties."""
    import docx  # python-docx, a dev dependency: only this generator writes Word files
    document = docx.Document()
    document.core_properties.title = meta.get("title", "")
    table_rows: list[tuple[str, ...]] = []
    header: list[bool] = []  # per row of table_rows: it names the columns (shown bold)

    def flush_table() -> None:
        if table_rows:
            table = document.add_table(rows=len(table_rows), cols=len(table_rows[0]))
            for r, cells in enumerate(table_rows):
                for c, text in enumerate(cells):
                    table.cell(r, c).paragraphs[0].add_run(plain(text)).bold = header[r] or None
            table_rows.clear()
            header.clear()

    for block in blocks:
        if block.kind == "row":
            table_rows.append(block.cells)
            header.append(block.header)
            continue
        flush_table()
        if block.kind == "heading":
            document.add_heading(plain(block.text), level=block.level)
            continue
        if block.kind == "code":  # a line a paragraph, in a monospace face
            for line in block.text.split("\n"):
                document.add_paragraph().add_run(line).font.name = "Courier New"
            continue
        style = {"bullet": "List Bullet", "number": "List Number"}.get(block.kind)
        paragraph = document.add_paragraph(style=style)
        for kind, piece in _runs(block.text):
            run = paragraph.add_run(piece)
            run.bold = kind == "b" or None
            if kind == "c":
                run.font.name = "Courier New"
    flush_table()
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))


# --------------------------------------------------------------------------- PDF

def _font() -> tuple[str, str, str]:
    """Regular, bold and mono font names: Bitstream Vera (shipped inside reportlab), which
    has the corpus's €, − and × (the standard PDF fonts have no − )."""
    from reportlab import rl_config
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    if "Vera" not in pdfmetrics.getRegisteredFontNames():
        for name, file in (("Vera", "Vera.ttf"), ("VeraBd", "VeraBd.ttf"),
                           ("VeraMono", "VeraMono.ttf")):
            try:
                pdfmetrics.registerFont(TTFont(name, file))
            except Exception:  # no mono face in this reportlab: use the regular one
                pdfmetrics.registerFont(TTFont(name, "Vera.ttf"))
        rl_config.invariant = 1  # no creation date or random id: the same bytes each run
    return "Vera", "VeraBd", "VeraMono"


def write_pdf(meta: dict[str, str], blocks: list[Block], path: Path) -> None:
    """A PDF with an outline entry per heading (nested by level) and the title in its info."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, Preformatted, SimpleDocTemplate, Spacer
    regular, bold, mono = _font()
    body = ParagraphStyle("body", fontName=regular, fontSize=10, leading=13, spaceAfter=6)
    pre = ParagraphStyle("pre", fontName=mono, fontSize=8, leading=10, spaceAfter=6)
    heads = {n: ParagraphStyle(f"h{n}", fontName=bold, fontSize=20 - 2 * n, leading=24 - 2 * n,
                               spaceBefore=8, spaceAfter=6) for n in range(1, 7)}

    def markup(text: str) -> str:
        tags = {"": "{}", "b": f'<font face="{bold}">{{}}</font>',
                "c": f'<font face="{mono}">{{}}</font>'}
        return "".join(tags[k].format(html.escape(p, quote=False)) for k, p in _runs(text))

    class Heading(Paragraph):
        """A heading paragraph that adds its outline entry where it is drawn."""

        def __init__(self, text: str, level: int, key: str) -> None:
            super().__init__(html.escape(text, quote=False), heads[level])
            self.level, self.key, self.title = level, key, text

        def draw(self) -> None:
            canvas = self.canv
            canvas.bookmarkHorizontal(self.key, 0, self.height)
            canvas.addOutlineEntry(self.title, self.key, level=self.level - 1)
            super().draw()

    flow, levels = [], []
    for n, block in enumerate(blocks):
        if block.kind == "heading":
            # outline levels may only go one deeper at a time: clamp a skipped level
            level = min(block.level, (levels[-1] + 1) if levels else 1)
            levels.append(level)
            flow.append(Heading(plain(block.text), level, f"h{n}"))
        elif block.kind == "row":
            flow.append(Paragraph(html.escape(row_line(block.cells), quote=False), body))
            if block.header:
                flow.append(Paragraph(rule_line(block.cells), body))
        elif block.kind in ("bullet", "number"):
            flow.append(Paragraph("- " + markup(block.text), body))
        elif block.kind == "code":  # lines kept, never wrapped
            flow.append(Preformatted(block.text, pre))
        else:
            flow.append(Paragraph(markup(block.text), body))
    flow.append(Spacer(1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    SimpleDocTemplate(str(path), pagesize=A4, title=meta.get("title", ""),
                      author="ragkit sample collection").build(flow)
