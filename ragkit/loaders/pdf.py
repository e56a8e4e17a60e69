"""A PDF's text layer as a document, with its page map and its outline as headings.

What it is: pdfminer.six's layout analysis reads each page's text boxes (a box is a
paragraph: wrapped lines joined, a blank line between boxes), also those a figure draws (a
page imported from another PDF is a Form XObject: its text was lost); each outline
(bookmark) entry becomes a `#` line at its level, in place of the text that prints it (a
box's start, or a sentence's start inside a box: `pdf_outline.printed_at`) (or,
when no box prints it, where its destination points: the top of its page for one that names
no place on it, a /Fit bookmark; `ragkit.loaders.pdf_outline`): the heading path; with
no outline, lines set larger than the body are (`ragkit.loaders.pdf_headings`).
`metadata["pages"]` maps each page to the offset where its text starts
(`ragkit.loaders.pages`), so a citation names its page. The title is the PDF's Title field,
else the first text box of 200 characters or fewer (on a cover, the title; an outline's
first entry is more often "1 Introduction") unless it reads as a sentence of the body, else
the file's path. A sentence (four words or more, ending in "." or "!", most of them in lower
case: "The engine oil must be changed every 250 hours.") is what a page without a cover
opens with; as the title it was stated in every chunk's context, "Document: The engine oil …
hours.", and named the file in every citation, where its path ("manual.pdf") says which file
it is. A cover's title has no full stop or is in title case ("EG-400 Tractor Manual",
"Kestrel Systems Ltd."). A line ending in a hyphen before a line going on in lower case is
a broken word ("manip-" "ulation", joined) or a compound ("branch-" "prediction", kept), as
the rest of the document prints it (`ragkit.loaders.pdf_hyphens`); ligature glyphs read as
their letters ("ﬁ" as "fi", so "different" finds "di\ufb00erent"), and pdfminer's `(cid:N)`
marks for glyphs with no text are dropped. Running headers and footers are left out: a box
in the top or bottom eighth of a page that is a page number, or a line recurring in that
band on several pages (`ragkit.loaders.pdf_running`). A table of contents' dot leaders ("Safety . . . . 1") become " … ". A Title
field that is a file name ("Binder1.pdf") or says nothing is not the title; "Microsoft Word
- name.docx" is "name".

Why pdfminer.six rather than pypdf: on the sample collection (data/generators/
make_sample_formats.py) both read every word right, but only pdfminer's boxes keep the
paragraphs (212 breaks for the manual's 210 blocks; pypdf 11, its text one line after
another), and the chunker cuts a long section at paragraphs; pdfminer costs about 5x
pypdf's time (on 1,016 pages 25-26 ms a page against 4.6, benchmarks/bench_loaders.py),
spread over the cores by `ragkit.document_folder` and small beside embedding the text.

Refused, each as one line naming the file: no text layer (a scan: ragkit does no OCR), a
password it cannot open with the empty password, a damaged file, a stream that would unpack
past 128 MB or streams past 1 GB together (a decompression bomb; `ragkit.loaders.pdf_streams`
measures every stream pdfminer decodes before it does), a page drawing more than 200,000
characters, a file drawing more than 10 million, or running more than 100,000 content
streams, 256 MB of them once or 16 MB again (a stream shared by many pages, a form drawn
over and over; `ragkit.loaders.pdf_layout`, which also lays out a page of thousands of
scattered words without pdfminer's quadratic box grouping). A file whose objects nest too
deep for Python's stack is "not a valid PDF".

What it is not: OCR, a table extractor (a table comes out as its text lines), nor a reader of
rotated or vertical text (it comes out as letters one space apart, "t o p").
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders import note
from ragkit.loaders.markdown import TextBuilder
from ragkit.loaders import pdf_layout
from ragkit.loaders.pdf_headings import Box, by_size, lines
from ragkit.loaders.pdf_hyphens import BREAK, Hyphens
from ragkit.loaders.pdf_layout import DrawnTooMuch, page_device, page_interpreter
from ragkit.loaders.pdf_outline import Head, outline, pdf_text, placed, printed_at
from ragkit.loaders.pdf_paragraphs import rejoined
from ragkit.loaders.pdf_repair import cut_off, cut_short, open_document
from ragkit.loaders.pdf_running import without_running
from ragkit.loaders.pdf_streams import bounded_streams
from ragkit.outline import one_line

_NO_TITLE = {"", "untitled", "untitled document", "(unspecified)", "(anonymous)"}
_FILE_TITLE = re.compile(r"^(?:Microsoft (?:Word|PowerPoint|Excel) - )?(.*?)"
                         r"(\.(?:docx?|pptx?|xlsx?|pdf|odt|rtf|tex|dvi|ps|indd|qxd|txt))?$", re.I)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
UNMAPPED_SHARE = 0.01  # glyphs with no Unicode map a file may hold unnoted: a GNU manual's ©
MARGIN = 0.125  # the top and bottom bands of a page, as a share of its height
_LEADER = re.compile(r"(?:\s*\.){4,}\s*")  # "Safety . . . . 1": a contents line's dots


def _check_header(path: Path) -> None:
    """Refuse a file with no `%PDF-` in its first KB (where readers look for it) as not a
    PDF, naming what it starts with: a web page saved under a .pdf name is common."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"%PDF-" in head:
        return
    if head.startswith(b"PK\x03\x04"):
        raise RagkitError(f"{path}: not a PDF (it is a zip archive: a Word file named .pdf?)")
    start = head.lstrip().split(b"\n")[0][:40].decode("latin-1").strip()
    if start.startswith("<"):
        raise RagkitError(f"{path}: not a PDF (it starts with '{start}': an HTML page named "
                          f".pdf?)")
    raise RagkitError(f"{path}: not a PDF (no %PDF- header in its first 1 KB)")


# a line ending in a hyphen inside a word: "manip-\nulation", "branch-\nprediction"
_HYPHEN = re.compile(r"(?<=[^\W\d_])(-|\u00ad)\n(?=[^\W\d_A-Z])")
_CID = re.compile(r"\(cid:\d+\)")  # pdfminer's mark for a glyph it cannot map to text
# TeX's and InDesign's "ff", "fi", "fl", "ffi", "ffl", "ft", "st" glyphs, as their letters
_LIGATURES = str.maketrans({chr(0xFB00 + n): s for n, s in enumerate(
    ("ff", "fi", "fl", "ffi", "ffl", "ft", "st"))})


def _clean(text: str) -> str:
    """A box's text: a line ending in a hyphen inside a word (the next line goes on in lower
    case) marked `pdf_hyphens.BREAK` for the document to decide (a soft hyphen joined),
    unmappable glyphs dropped, white space as one space (`ragkit.outline.one_line`)."""
    text = text.replace(BREAK, "").translate(_LIGATURES)
    text = _HYPHEN.sub(lambda m: BREAK if m.group(1) == "-" else "", text)
    return one_line(_LEADER.sub(" … ", _CID.sub("", text)))


def _text_boxes(layout):
    """The text boxes of a page in pdfminer's order, also those inside figures (a Form
    XObject: a page imported from another PDF, a stamped template), laid out `all_texts`."""
    from pdfminer.layout import LTFigure, LTTextBox
    for el in layout:
        if isinstance(el, LTTextBox):
            yield el
        elif isinstance(el, LTFigure):
            yield from _text_boxes(el)


def _boxes(layout) -> list[Box]:
    """(text, top, band, `pdf_headings.lines`) of each text box of a page in reading order;
    band is "top" or "bottom" for a box inside that margin band of the page, else ""."""
    low, high = layout.y0, layout.y1
    margin = (high - low) * MARGIN
    boxes = []
    for el in _text_boxes(layout):
        text = _clean(el.get_text())
        if text:
            band = "top" if el.y0 >= high - margin else "bottom" if el.y1 <= low + margin else ""
            boxes.append((text, el.y1, band, lines(el)))
    return boxes


def _spelled_out(boxes: list[Box]) -> float:
    """The share of a page's words that are one character: about 0.05 for prose, near 1
    for text laid out across its direction ("T h e"); 0 for a page of under 20 words."""
    words = " ".join(text for text, *_ in boxes).split()
    return sum(len(w) == 1 for w in words) / len(words) if len(words) >= 20 else 0.0


def _process(interpreter, device, page) -> None:
    """`interpreter.process_page(page)`; a page drawing over `pdf_layout.MAX_PAGE_SHAPES`
    paths or images is laid out as far as it was read, and named in `device.cut`."""
    try:
        interpreter.process_page(page)
    except DrawnTooMuch:
        while device._stack:  # pdfminer's open figures (forms being drawn)
            device.end_figure("")
        device.end_page(page)
        device.cut.add(device.where[1].page)


def _laid_out(interpreter, device, page) -> list[Box]:
    """A page's boxes (`_boxes`). A page whose words come out spelled out letter by letter
    (`_spelled_out` over half; a page turned by its /Rotate entry) is laid out again turned
    each other way, and the turn that reads as words kept."""
    _process(interpreter, device, page)
    boxes = _boxes(device.get_result())
    score, turn = _spelled_out(boxes), page.rotate
    for rotate in (0, 90, 270):
        if score <= 0.5:
            break
        if rotate != turn:
            page.rotate, device.relayout = rotate, True  # not counted again (`pdf_layout`)
            try:
                _process(interpreter, device, page)
            finally:
                device.relayout = False
            other = _boxes(device.get_result())
            if _spelled_out(other) < min(score, 0.5):  # reads as words, not a bit better
                boxes, score = other, _spelled_out(other)
    return boxes


def _sentence(text: str) -> bool:
    """Whether a box reads as a sentence of the body, not a title (module docstring)."""
    words = text.split()
    lower = sum(word[:1].islower() for word in words)
    return len(words) >= 4 and text.endswith((".", "!")) and 2 * lower > len(words)


def _title(field: str) -> str:
    """The PDF's Title field unless it says nothing or names a file ("Microsoft Word -
    report.docx" is "report", "Binder1.pdf" no title)."""
    field = one_line(_CONTROL.sub(" ", field))
    match = _FILE_TITLE.match(field)
    if match and (match.group(2) or match.group(1) != field):
        field = match.group(1).strip() if not re.fullmatch(r"\w*\d+", match.group(1)) else ""
    return "" if field.casefold() in _NO_TITLE else field


def _alone(text: str) -> str:
    """`text` as `_page` compares a box with a heading: white space one space, case aside."""
    return " ".join(text.split()).casefold()


def _page(out: TextBuilder, boxes: list[tuple[str, float]], heads: list[Head]) -> None:
    """One page's boxes, each outline entry as a heading in place of the text printing it
    (`printed_at`), or where its destination points (`pdf_outline.placed`) unless a later
    box above the one passed prints it alone (`held`)."""
    heads = placed(boxes, heads)
    alone: dict[str, list[tuple[int, float]]] = {}  # a box's text: (index, top) of each
    for n, (text, top) in enumerate(boxes):
        alone.setdefault(_alone(text), []).append((n, top))

    def held(n: int, top: float, title: str) -> bool:  # by its top alone, a two-column
        # page's headings were stacked before the first column's end, their lines kept
        return any(m > n and at > top for m, at in alone.get(_alone(title), ()))
    for n, (text, top) in enumerate(boxes):
        while (heads and top < heads[0][2] - 2 and printed_at(text, heads[0][1]) is None
               and not held(n, top, heads[0][1])):
            level, title, _ = heads.pop(0)  # its place is passed: no box printed it
            out.heading(level, title)
        while heads and (at := printed_at(text, heads[0][1])) is not None:
            level, title, _ = heads.pop(0)
            if text[:at].strip():
                out.paragraph(text[:at].rstrip())
            out.heading(level, title)
            text = text[at + len(title):].lstrip()
        out.paragraph(text)
    for level, title, _ in heads:
        out.heading(level, title)


def load(path: Path, rel: str) -> Document:
    """The document of the PDF file `path` (id `rel`); see the module's refusals."""
    # deferred: pdfminer.six loads only when a PDF is met
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its per-object warnings
    _check_header(path)
    out, first, laid_out = TextBuilder(), "", []
    try:
        with path.open("rb") as handle, bounded_streams(path) as reading:
            document, repaired = open_document(handle, path)
            pages = list(PDFPage.create_pages(document))
            heads = outline(document, {p.pageid: n for n, p in enumerate(pages)})
            info = document.info[0] if document.info else {}
            resources = PDFResourceManager(caching=True)
            device = page_device(resources, path, reading)
            interpreter = page_interpreter(resources, device)
            for n, page in enumerate(pages):
                reading.page = n + 1
                laid_out.append(_laid_out(interpreter, device, page))
            title = pdf_text(info.get("Title")) if isinstance(info, dict) else ""
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise RagkitError(f"{path}: encrypted (opening it needs a password)") from None
    except RagkitError:
        raise
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except RecursionError:
        raise RagkitError(f"{path}: not a valid PDF (objects nested too deep)") from None
    except Exception as exc:  # pdfminer raises many kinds on a damaged file
        said = f": {str(exc)[:200]}" if str(exc).strip() else " in pdfminer"  # a bare assert
        raise RagkitError(f"{path}: not a valid PDF ({type(exc).__name__}{said})") from None
    if not laid_out:
        raise RagkitError(f"{path}: has no pages")
    kept = without_running(laid_out)
    if not any(text.strip() for boxes in kept for text, *_ in boxes):  # all of it "running":
        kept = laid_out  # keep it
    if not heads:  # no outline: headings from the type sizes (`pdf_headings`)
        kept, heads = by_size(kept, _clean)
    # a paragraph pdfminer split in two boxes, one (`rejoined`)
    pages = [rejoined([box[:2] for box in boxes], [h[1] for h in heads.get(n, [])])
             for n, boxes in enumerate(kept)]
    mend = Hyphens(text for boxes in pages for text, _ in boxes).mend  # line-end hyphens
    for n, boxes in enumerate(pages):
        out.page(n + 1)
        # a running header is often the document's name: the title looks at every box
        first = first or next((mend(text) for text, *_ in laid_out[n] if len(text) <= 200), "")
        here = [(level, mend(title), at) for level, title, at in heads.get(n, [])]
        _page(out, [(mend(text), top) for text, top in boxes], here)
    text = out.text()
    if not text.strip() and device.unmapped:  # it has text, in fonts with no Unicode map
        raise RagkitError(f"{path}: its text is in fonts that map no glyph to Unicode (pdfminer "
                          f"reads {device.unmapped:,} glyphs as cid codes only); re-export it "
                          f"with Unicode-mapped fonts, or OCR it")
    if not text.strip() and repaired and cut_short(path):  # its text was in the part cut off
        raise cut_off(path, "and what is left holds no text; get the whole file again")
    if not text.strip():
        raise RagkitError(f"{path}: no text layer (scanned? ragkit does not OCR)")
    title = _title(title) or (first if not _sentence(first) else "") or rel
    notes = [repaired] if repaired else []
    if device.cut:
        notes.append(f"page {', '.join(map(str, sorted(device.cut)))}: more than "
                     f"{pdf_layout.MAX_PAGE_SHAPES:,} paths or images drawn, read only that "
                     f"far (text drawn after them is missing)")
    if device.unmapped > UNMAPPED_SHARE * device.file_chars:
        notes.append(f"{device.unmapped:,} of its {device.file_chars:,} glyphs are in fonts "
                     f"with no Unicode map and were left out (words may be broken)")
    return Document(rel, text, title, {"path": rel, "format": "pdf", "title": title,
                                       "pages": out.pages, **note(notes)})
