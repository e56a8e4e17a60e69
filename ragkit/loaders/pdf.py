"""A PDF's text layer as a document, with its page map and its outline as headings.

What it is: pdfminer.six's layout analysis reads each page's text boxes (a box is a
paragraph: wrapped lines joined, a blank line between boxes); each outline (bookmark) entry
becomes a `#` line at its level, in place of the box that prints it (or, when no box prints
it, where its destination points): the heading path. `metadata["pages"]` maps each page to
the offset where its text starts (`ragkit.loaders.pages`), so a citation names its page. The
title is the PDF's Title field, else the first text box of 200 characters or fewer (on a
cover, the title; an outline's first entry is more often "1 Introduction"), else the file's
path. A word hyphenated across two lines of a box is joined when the next line goes on in
lower case ("manip-" "ulation"), and pdfminer's `(cid:N)` marks for glyphs with no text
are dropped.

Why pdfminer.six rather than pypdf: on the sample collection (data/generators/
make_sample_formats.py) both read every word right, but only pdfminer's boxes keep the
paragraphs (212 breaks for the manual's 210 blocks; pypdf 11, its text one line after
another), and the chunker cuts a long section at paragraphs; pdfminer costs about 5x
pypdf's time (on 1,016 pages 25-26 ms a page against 4.6, benchmarks/bench_loaders.py),
spread over the cores by `ragkit.document_folder` and small beside embedding the text.

Refused, each as one line naming the file: no text layer (a scan: ragkit does no OCR), a
password it cannot open with the empty password, a damaged file, a page whose content stream
unpacks past `MAX_STREAM` (a decompression bomb). A file whose objects nest too deep for
Python's stack is "not a valid PDF".

What it is not: OCR, a table extractor (a table comes out as its text lines), nor a remover
of running headers and footers.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.markdown import TextBuilder, squash

_NO_TITLE = {"", "untitled", "(unspecified)", "(anonymous)"}
MAX_STREAM = 128 * 2**20  # bytes a page's content stream may unpack to; real pages: < 5 MB


def _check_streams(path: Path, page, number: int) -> None:
    """Refuse a page whose Flate content stream unpacks past `MAX_STREAM` (a decompression
    bomb: 3 MB of file can unpack to 3 GB), reading at most that much of it."""
    import zlib
    from pdfminer.pdftypes import resolve1
    for stream in page.contents or ():
        stream = resolve1(stream)
        raw = getattr(stream, "rawdata", None)
        filters = stream.get_filters() if raw is not None else []
        if not raw or not filters or getattr(filters[0][0], "name", "") != "FlateDecode":
            continue
        try:
            size = len(zlib.decompressobj().decompress(raw, MAX_STREAM + 1))
        except zlib.error:
            continue  # pdfminer reads what it can of a damaged stream
        if size > MAX_STREAM:
            raise RagkitError(f"{path}: page {number}: a content stream unpacks to more than "
                              f"{MAX_STREAM // 2**20} MB (a decompression bomb?)")


def _text(value) -> str:
    from pdfminer.utils import decode_text
    if isinstance(value, bytes):
        return decode_text(value)
    return value if isinstance(value, str) else ""


def _outline(document, page_index: dict[int, int]) -> dict[int, list[tuple[int, str, float]]]:
    """Outline entries by page index: (level, title, top or inf), in outline order."""
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral
    found: dict[int, list[tuple[int, str, float]]] = {}
    try:
        entries = list(document.get_outlines())
    except PDFNoOutlines:
        return found
    except Exception:  # a damaged outline: the text is still worth reading, headings aside
        return found
    for level, title, dest, action, _ in entries:
        try:
            if dest is None and action is not None:
                dest = resolve1(action).get("D")
            dest = resolve1(dest)
            if isinstance(dest, (str, bytes, PSLiteral)):
                name = dest.name if isinstance(dest, PSLiteral) else dest
                dest = resolve1(document.get_dest(name))
            if isinstance(dest, dict):
                dest = resolve1(dest.get("D"))
            page = page_index.get(getattr(dest[0], "objid", None))
            top = dest[3] if len(dest) > 3 and isinstance(dest[3], (int, float)) else None
        except Exception:  # an entry pointing nowhere is left out
            continue
        if page is not None and squash(_text(title)):
            found.setdefault(page, []).append((level, squash(_text(title)),
                                               float("inf") if top is None else float(top)))
    return found


_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u00ad]\n(?=[^\W\d_A-Z])")  # "manip-\nulation"
_CID = re.compile(r"\(cid:\d+\)")  # pdfminer's mark for a glyph it cannot map to text


def _clean(text: str) -> str:
    """A box's text: a word hyphenated across lines joined (when the next line goes on in
    lower case), unmappable glyphs dropped, white space squashed."""
    return squash(_CID.sub("", _HYPHEN.sub("", text)))


def _boxes(layout) -> list[tuple[str, float]]:
    """(text, top) of each text box of a page, in pdfminer's reading order."""
    from pdfminer.layout import LTTextBox
    boxes = ((_clean(el.get_text()), el.y1) for el in layout if isinstance(el, LTTextBox))
    return [(text, top) for text, top in boxes if text]


def _page(out: TextBuilder, boxes: list[tuple[str, float]],
          heads: list[tuple[int, str, float]]) -> None:
    """One page's boxes, each outline entry as a heading in place of the box printing it."""
    heads = list(heads)
    for text, top in boxes:
        while heads and heads[0][2] != float("inf") and top < heads[0][2] - 2 \
                and not text.casefold().startswith(heads[0][1].casefold()):
            level, title, _ = heads.pop(0)  # its place is passed: no box printed it
            out.heading(level, title)
        if heads and text.casefold().startswith(heads[0][1].casefold()):
            level, title, _ = heads.pop(0)
            out.heading(level, title)
            text = text[len(title):]
        out.paragraph(text)
    for level, title, _ in heads:
        out.heading(level, title)


def load(path: Path, rel: str) -> Document:
    """The document of the PDF file `path` (id `rel`); see the module's refusals."""
    # deferred: pdfminer.six loads only when a PDF is met
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its per-object warnings
    out, first = TextBuilder(), ""
    try:
        with path.open("rb") as handle:
            document = PDFDocument(PDFParser(handle), password="")
            pages = list(PDFPage.create_pages(document))
            heads = _outline(document, {p.pageid: n for n, p in enumerate(pages)})
            info = document.info[0] if document.info else {}
            resources = PDFResourceManager(caching=True)
            device = PDFPageAggregator(resources, laparams=LAParams())
            interpreter = PDFPageInterpreter(resources, device)
            for n, page in enumerate(pages):
                _check_streams(path, page, n + 1)
                interpreter.process_page(page)
                out.page(n + 1)
                boxes = _boxes(device.get_result())
                first = first or next((text for text, _ in boxes if len(text) <= 200), "")
                _page(out, boxes, heads.get(n, []))
            title = _text(info.get("Title")) if isinstance(info, dict) else ""
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise RagkitError(f"{path}: encrypted (opening it needs a password)") from None
    except RagkitError:
        raise
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except RecursionError:
        raise RagkitError(f"{path}: not a valid PDF (objects nested too deep)") from None
    except Exception as exc:  # pdfminer raises many kinds on a damaged file
        raise RagkitError(f"{path}: not a valid PDF ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None
    text = out.text()
    if not text.strip():
        raise RagkitError(f"{path}: no text layer (scanned? ragkit does not OCR)")
    title = ("" if squash(title).casefold() in _NO_TITLE else title) or first or rel
    return Document(rel, text, title, {"path": rel, "format": "pdf", "title": title,
                                       "pages": out.pages})
