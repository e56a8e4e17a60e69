"""A Word file (.docx) as a document.

What it is: the body's paragraphs and tables in order (python-docx). A paragraph in a
`Heading N` style becomes a `#`*N line (`Title` a `#` line): the heading path. `List ...`
styles get `- ` (or `1. ` for numbered lists), a table row becomes `| a | b |`. The title is
the file's core property, else the first heading.

Hostile files are bounded before python-docx opens them: a file that is no zip archive, has
no `word/document.xml`, or would unpack to more than `MAX_UNPACKED` bytes (a zip bomb) is one
error line. lxml, under python-docx, refuses XML nested deeper than 256 levels.

What it is not: a reader of the old binary `.doc`, of headers, footers, footnotes, comments
or text boxes, nor of page numbers (a Word file has none until it is laid out).
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.markdown import TextBuilder

MAX_UNPACKED = 512 * 2**20  # bytes all members would unpack to; a 300-page report is ~5 MB


def _check_zip(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise RagkitError(f"{path}: not a valid Word file (not a zip archive: {exc})") from None
    if not any(m.filename == "word/document.xml" for m in members):
        raise RagkitError(f"{path}: not a valid Word file (no word/document.xml)")
    unpacked = sum(m.file_size for m in members)
    if unpacked > MAX_UNPACKED:
        raise RagkitError(f"{path}: would unpack to {unpacked / 2**20:,.0f} MB, over the "
                          f"{MAX_UNPACKED // 2**20} MB limit (a zip bomb?)")


def _heading_level(style: str) -> int:
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        tail = style.removeprefix("Heading ").strip()
        return int(tail) if tail.isdigit() else 0
    return 0


def load(path: Path, rel: str) -> Document:
    """The document of the Word file `path` (id `rel`)."""
    _check_zip(path)
    import docx  # deferred: python-docx (and lxml) only when a Word file is met
    from docx.table import Table
    try:
        document = docx.Document(str(path))
        out, number = TextBuilder(), 0
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                out.rows([[cell.text for cell in row.cells] for row in block.rows])
                number = 0
                continue
            style = block.style.name if block.style is not None else ""
            level = _heading_level(style)
            if level:
                out.heading(level, block.text)
            elif style.startswith("List Number"):
                number += 1
                out.paragraph(block.text, f"{number}. ")
            elif style.startswith("List"):
                out.paragraph(block.text, "- ")
            else:
                out.paragraph(block.text)
            number = number if style.startswith("List Number") else 0
        core_title = document.core_properties.title
    except RagkitError:
        raise
    except Exception as exc:  # python-docx and lxml raise many kinds on a damaged file
        raise RagkitError(f"{path}: not a valid Word file ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None
    text = out.text()
    if not text.strip():
        raise RagkitError(f"{path}: no text")
    title = out.title(core_title) or rel
    return Document(rel, text, title, {"path": rel, "format": "docx", "title": title})
