"""A Word file (.docx) as a document.

What it is: the body's paragraphs and tables in order (python-docx opens the file; the
text is read from its XML). A paragraph in a `Heading N` style becomes a `#`*N line (`Title`
a `#` line): the heading path; so does one whose style (or a style it is based on) has an
outline level, as Word's heading styles have whatever they are called ("Überschrift 1",
"Titre 2", a template's "Chapter Head"). `List ...` styles get `- ` (or `1. ` for numbered
lists; a paragraph in a list of Word's own numbering, as on "List Paragraph", gets its
number, letter or `- ` from that list's format), a table row becomes `| a | b |` (a merged
cell once). Text Word shows is text here: tracked insertions (not deletions), content
controls (forms, templates) and text boxes (a paragraph each, after the paragraph anchoring
them). The title is the file's core property,
else the first heading. A template (.dotx) or macro-enabled file (.docm, .dotm) is read as a
document — its macros are not run — under any of the Word suffixes (a .dotx renamed .docx
is common).

Hostile files are bounded before python-docx opens them (`ragkit.loaders.docx_archive`: no
zip archive, no `word/document.xml`, a zip bomb, more XML elements than python-docx can
hold, an XML part declaring a DTD), and a body of more than `MAX_BLOCKS` paragraphs and
tables is one error line too. A large file's tree is freed once it is read
(`COLLECT_ELEMENTS`), not left for a later one to add to. Each paragraph style is
looked up and measured once (`_Styles`): python-docx's own lookup scans every style of the
file for every paragraph.

What it is not: a reader of the old binary `.doc`, of headers, footers, footnotes or
comments, nor of page numbers (a Word file has none until it is laid out).
"""
from __future__ import annotations

import gc
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.docx_archive import check_zip
from ragkit.loaders.markdown import TextBuilder

MAX_BLOCKS = 500_000  # paragraphs and tables of the body; a 1,000-page book has ~20,000
# XML elements (`check_zip`'s count) past which a file's tree is freed as soon as it is read:
# python-docx's package, parts and relationships refer to each other, so the tree waited for
# Python's cycle collector — two files of 4 million one-letter runs read in one process
# peaked at 1.7 GB, one at 0.94 GB. A full collection costs ~20 ms: small files skip it
COLLECT_ELEMENTS = 100_000
_WORD_MAINS = tuple(f"application/{kind}.main+xml" for kind in (
    "vnd.openxmlformats-officedocument.wordprocessingml.template",
    "vnd.ms-word.document.macroEnabled", "vnd.ms-word.template.macroEnabledTemplate"))
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# what a run's text is made of; everything else under a paragraph is walked into, except:
_CHARS = {_W + "t": None, _W + "tab": " ", _W + "br": " ", _W + "cr": " ",
          _W + "noBreakHyphen": "-"}
_SKIP = {_W + "del", _W + "txbxContent", _MC + "Fallback", _W + "pPr", _W + "rPr",
         _W + "instrText", _W + "delText"}


def _outline_level(ppr) -> int:
    """1 + the `w:outlineLvl` of a paragraph's or style's properties; 0 for none (or 9,
    Word's "body text")."""
    found = ppr.find(_W + "outlineLvl") if ppr is not None else None
    value = found.get(_W + "val", "") if found is not None else ""
    return int(value) + 1 if _digits(value) and int(value) < 9 else 0


def _digits(text: str) -> bool:
    """Whether `text` is a small whole number in ASCII digits: `"²".isdigit()` is True but
    `int("²")` raises (a style named "Heading ²" refused the whole file)."""
    return text.isascii() and text.isdigit() and len(text) < 4


def _style_level(style) -> int:
    """The heading level a paragraph style gives: its name (`Title`, `Heading N`), else the
    outline level of it or a style it is based on; 0 for none."""
    for _ in range(10):  # a based-on chain; a loop in a damaged file ends here
        if style is None:
            return 0
        name = style.name or ""
        if name == "Title":
            return 1
        tail = name.removeprefix("Heading ").strip()
        if name.startswith("Heading ") and _digits(tail):
            return int(tail)
        level = _outline_level(style.element.pPr)
        if level:
            return level
        style = style.base_style
    return 0


class _Styles:
    """A document's paragraph styles, each looked up and measured once. Why: python-docx
    finds a paragraph's style by scanning every style of the file, so a 143 KB file with
    20,000 styles took minutes when each paragraph asked again."""

    def __init__(self, document) -> None:
        from docx.enum.style import WD_STYLE_TYPE
        self.by_id = {style.style_id: style for style in document.styles}
        self.default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self.levels: dict[str | None, int] = {}

    def of(self, element):
        """The style of paragraph `element`: its `w:pStyle`, else the default (as Word)."""
        return self.by_id.get(element.style, self.default) if element.style else self.default

    def heading_level(self, element, style) -> int:
        """The paragraph's own outline level, else its style's (`_style_level`)."""
        level = _outline_level(element.pPr)
        key = style.style_id if style is not None else None
        if not level and key not in self.levels:
            self.levels[key] = _style_level(style)
        return level or self.levels[key]


def _text(element, boxes: list | None = None) -> str:
    """The text Word shows for a paragraph (or a table cell): runs at any depth —
    hyperlinks, tracked insertions, content controls, fields' results — without deleted
    text and field codes. The paragraphs of text boxes go to `boxes` (once, not again
    from the compatibility copy Word stores beside them), or are left out when None."""
    parts: list[str] = []
    stack = [element]
    while stack:
        node = stack.pop()
        tag = node.tag
        if tag in _CHARS:
            parts.append(node.text or "" if _CHARS[tag] is None else _CHARS[tag])
            continue
        if tag == _W + "txbxContent" and boxes is not None:
            boxes.extend(_text(p) for p in node.iter(_W + "p"))
        if tag in _SKIP and node is not element:
            continue
        stack.extend(reversed(node))
    return "".join(parts)


def _cell(cell) -> str:
    """A table cell's paragraphs (with those of tables and text boxes in it), a space apart."""
    return " ".join(_text(p) for p in cell.iter(_W + "p")
                    if not any(a.tag == _MC + "Fallback" for a in p.iterancestors()))


def _on(flag) -> bool:
    """Whether a Word on/off property (`<w:b/>`, `<w:tblHeader w:val="0"/>`) is there and on."""
    return flag is not None and flag.get(_W + "val", "1") not in ("0", "false", "off")


def _names_columns(table, styles: _Styles) -> bool:
    """Whether a Word table's first row holds its columns' names: it is marked as the header
    row (repeated on each page), or it shows bold — every run of it, or the table style's
    first-row formatting, switched on in the table's `w:tblLook`. Word switches that on by
    default, so a style's bold first row is not enough unless the style has one: a form of
    "label | value" rows in a plain grid names no columns."""
    first = table.find(_W + "tr")
    if first is None:
        return False
    runs = [run for run in first.iter(_W + "r") if run.find(_W + "t") is not None]
    if _on(first.find(f"{_W}trPr/{_W}tblHeader")) or runs and all(
            _on(run.find(f"{_W}rPr/{_W}b")) for run in runs):
        return True
    look, named = table.find(f"{_W}tblPr/{_W}tblLook"), table.find(f"{_W}tblPr/{_W}tblStyle")
    if look is None or named is None or not (look.get(_W + "firstRow") == "1" or (
            look.get(_W + "firstRow") is None and look.get(_W + "val", "")[-2:-1] in
            tuple("2367abefABEF"))):  # the val's 0x0020 bit: first row
        return False
    style = styles.by_id.get(named.get(_W + "val"))
    return style is not None and any(
        part.get(_W + "type") == "firstRow" and _on(part.find(f"{_W}rPr/{_W}b"))
        for part in style.element.iterchildren(_W + "tblStylePr"))


def _numbering(document) -> dict[str, dict[str, str]]:
    """numId -> {ilvl: numFmt} of the file's numbering part ("bullet", "decimal", ...)."""
    try:
        root = document.part.numbering_part.element
    except (KeyError, NotImplementedError):  # a file with no list
        return {}
    formats = {}
    for abstract in root.iterchildren(_W + "abstractNum"):
        formats[abstract.get(_W + "abstractNumId")] = {
            lvl.get(_W + "ilvl"): (fmt.get(_W + "val") if fmt is not None else "decimal")
            for lvl in abstract.iterchildren(_W + "lvl") for fmt in [lvl.find(_W + "numFmt")]}
    out = {}
    for num in root.iterchildren(_W + "num"):
        ref = num.find(_W + "abstractNumId")
        out[num.get(_W + "numId")] = formats.get(ref.get(_W + "val") if ref is not None else "", {})
    return out


def _list_ref(element, style) -> tuple[str, str] | None:
    """(numId, ilvl) of the Word list paragraph `element` is an item of (its own or its
    style's numbering), None when it is none (numId 0 switches a style's numbering off)."""
    for ppr in [element.pPr] + [style.element.pPr if style is not None else None]:
        found = ppr.find(_W + "numPr") if ppr is not None else None
        num = found.find(_W + "numId") if found is not None else None
        if num is not None:
            level = found.find(_W + "ilvl")
            ref = num.get(_W + "val"), level.get(_W + "val") if level is not None else "0"
            return ref if ref[0] != "0" else None
    return None


def _marker(fmt: str, n: int) -> str:
    """An item's prefix: `- ` for a bullet, else its number (a letter for a lettered list)."""
    if fmt in ("bullet", "none"):
        return "- "
    if fmt in ("lowerLetter", "upperLetter") and n <= 26:
        return chr((96 if fmt == "lowerLetter" else 64) + n) + ". "
    return f"{n}. "


def _blocks(parent):
    """The paragraphs and tables of the body (or a content control in it), in order."""
    for child in parent:
        if child.tag in (_W + "p", _W + "tbl"):
            yield child
        elif child.tag in (_W + "sdt", _W + "customXml", _W + "sdtContent"):
            yield from _blocks(child)


_CORE = ("http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
         "core-properties")  # python-docx's RELATIONSHIP_TYPE.CORE_PROPERTIES


def _core_title(document) -> str | None:
    """The title property, or None when the file has no core properties part: python-docx
    then makes default ones titled "Word Document", which every such file was called."""
    package = document.part.package
    if not any(rel.reltype == _CORE for rel in package.rels.values()):
        return None
    return document.core_properties.title


def _read(path: Path) -> tuple[TextBuilder, str | None]:
    """The body of the Word file `path` as Markdown-shaped blocks, and its title property
    (`_core_title`); python-docx's and lxml's errors are the caller's to word."""
    # deferred: python-docx (and lxml) only when a Word file is met
    from docx.opc.part import PartFactory
    from docx.package import Package
    from docx.parts.document import DocumentPart
    for kind in _WORD_MAINS:  # python-docx's own registry; docx.Document takes only .docx
        PartFactory.part_type_for.setdefault(kind, DocumentPart)
    part = Package.open(str(path)).main_document_part
    if not isinstance(part, DocumentPart):
        raise ValueError(f"its main part is {part.content_type}")
    document = part.document
    out, number = TextBuilder(), 0
    lists, counts = _numbering(document), {}  # Word's lists; each list's count per level
    styles = _Styles(document)
    for n, element in enumerate(_blocks(document.element.body)):
        if n >= MAX_BLOCKS:
            raise RagkitError(f"{path}: more than {MAX_BLOCKS:,} paragraphs and tables (a "
                              f"hostile file?)")
        if element.tag == _W + "tbl":
            out.rows([[_cell(cell) for cell in row.iterchildren(_W + "tc")]
                      for row in element.iterchildren(_W + "tr")],
                     header=_names_columns(element, styles))
            number = 0
            continue
        boxes: list[str] = []
        text = _text(element, boxes)
        found = styles.of(element)
        style = (found.name or "") if found is not None else ""
        level = styles.heading_level(element, found)
        if level:
            out.heading(level, text)
        elif style.startswith("List Number"):
            number += 1
            out.paragraph(text, f"{number}. ")
        elif ref := _list_ref(element, found):  # Word's numbering ("List Paragraph")
            formats = lists.get(ref[0], {})
            levels = counts.setdefault(ref[0], {})  # this list's count per level
            levels[ref[1]] = levels.get(ref[1], 0) + 1  # Word goes on counting after a break
            for deeper in [k for k in levels if k > ref[1]]:
                del levels[deeper]  # a sub-list starts again under each item
            out.paragraph(text, _marker(formats.get(ref[1], "decimal"), levels[ref[1]]))
        elif style.startswith("List"):
            out.paragraph(text, "- ")
        else:
            out.paragraph(text)
        for box in boxes:
            out.paragraph(box)
        number = number if style.startswith("List Number") else 0
    return out, _core_title(document)


def load(path: Path, rel: str) -> Document:
    """The document of the Word file `path` (id `rel`)."""
    elements = check_zip(path)
    try:
        out, core_title = _read(path)
    except RagkitError:
        raise
    except Exception as exc:  # python-docx and lxml raise many kinds on a damaged file
        raise RagkitError(f"{path}: not a valid Word file ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None
    finally:
        if elements > COLLECT_ELEMENTS:  # its tree, held in reference cycles: freed now
            gc.collect()
    text = out.text()
    if not text.strip():
        raise RagkitError(f"{path}: no text")
    title = out.title(core_title) or rel
    return Document(rel, text, title, {"path": rel, "format": "docx", "title": title})
