"""The checks a Word file passes before python-docx opens it: hostile files bounded.

What it is: `check_zip(path)` refuses, each in one line naming the file, a file that is no
zip archive (an old binary .doc or a password-protected .docx, told so; a PDF named .docx,
told so), would unpack to more than `MAX_UNPACKED` bytes (a zip bomb) or its parts other
than images (by their content types, whatever their names: `_images`) to more than `MAX_XML`
or hold more than `MAX_ELEMENTS` XML elements (counted as they stream past, before any tree
is built: tiny runs cost python-docx far more than their bytes), has a part of any name whose
DTD, before its root element, has an internal subset (Word writes none; a billion-laughs file's
entities live there; `<!DOCTYPE html>` of an HTML altChunk part has none), or lacks the
main part `_rels/.rels` names (`word/document.xml` when it names none). The prolog is read
to its root element, past comments of any length and in UTF-16 or UTF-32 too.

What it is not: the reader (`ragkit.loaders.docx`), nor a limit on XML depth (lxml, under
python-docx, refuses XML nested deeper than 256 levels).
"""
from __future__ import annotations

import codecs
import posixpath
import re
import zipfile
import zlib
from pathlib import Path
from urllib.parse import unquote

from ragkit.documents import RagkitError

_PROLOG = 64 * 2**10  # bytes read at a time while looking for a DTD before the root element
MAX_UNPACKED = 512 * 2**20  # bytes all members would unpack to; a 300-page report is ~5 MB
# bytes the parts other than images would unpack to: a 3,000-page book's XML is ~30 MB, and
# 200 MB of it (an 805 KB file) took 3 GB to index
MAX_XML = 128 * 2**20
# XML elements of those parts: python-docx holds each as a node, about 230 bytes apiece when
# indexed (a 345 KB file of 11 million one-letter runs, 127 MB of XML, peaked at 2.6 GB and
# took 40 s), where a 3,000-page book written in Word has about a million
MAX_ELEMENTS = 4_000_000
_IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".emf", ".wmf", ".svg")
_TYPES = 2**20  # bytes of `[Content_Types].xml` read (Word's are a few KB)
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE2: a .doc, or Word's encrypted .docx


def check_zip(path: Path) -> int:
    """Refuse, in one line naming `path`, a file python-docx must not open (module
    docstring); else the number of XML elements it holds (at most `MAX_ELEMENTS`)."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(8)
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic == _OLE2:
        raise RagkitError(f"{path}: not a valid Word file (an old binary .doc, or a .docx "
                          f"with a password: save it as .docx without one)")
    if magic.startswith(b"%PDF-"):
        raise RagkitError(f"{path}: not a Word file (it is a PDF: rename it .pdf)")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise RagkitError(f"{path}: not a valid Word file (not a zip archive: {exc})") from None
    with archive:  # opened once: the sizes, the main part and every part's prolog
        try:
            return _check_parts(path, archive)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
                zlib.error) as exc:
            raise RagkitError(f"{path}: not a valid Word file (damaged zip archive: {exc})"
                              ) from None


def _check_parts(path: Path, archive: zipfile.ZipFile) -> int:
    """The refusals of `check_zip` that read the archive's members; the elements counted."""
    members = archive.infolist()
    unpacked = sum(m.file_size for m in members)
    if unpacked > MAX_UNPACKED:
        raise RagkitError(f"{path}: would unpack to {unpacked / 2**20:,.0f} MB, over the "
                          f"{MAX_UNPACKED // 2**20} MB limit (a zip bomb?)")
    main = _main_part(archive, members)
    images = _images(archive, members) - {main}
    parsed = [m for m in members if not m.is_dir() and m.filename not in images]
    xml, xml_parts = sum(m.file_size for m in parsed), {m.filename for m in parsed}
    if xml > MAX_XML:
        raise RagkitError(f"{path}: its text parts would unpack to {xml / 2**20:,.0f} MB, over "
                          f"the {MAX_XML // 2**20} MB limit (indexing holds many times the "
                          f"text in memory: split the document, or leave it out with "
                          f"--skip-bad)")
    elements = 0
    for member in members:  # any name: a main part may be "word/main.png"
        if member.is_dir():
            continue
        with archive.open(member) as part:
            if _declares_dtd(part):
                raise RagkitError(f"{path}: not a valid Word file (its XML declares "
                                  f"entities, which Word never writes: a billion-laughs "
                                  f"file?)")
        if member.filename in xml_parts:
            with archive.open(member) as part:  # from its start: the prolog check read on
                elements += _elements(part, MAX_ELEMENTS - elements)
            if elements > MAX_ELEMENTS:
                raise RagkitError(f"{path}: its XML holds more than {MAX_ELEMENTS:,} elements "
                                  f"(indexing holds each in memory, about 230 bytes apiece: "
                                  f"split the document, or leave it out with --skip-bad)")
    if main not in {m.filename for m in members}:
        raise RagkitError(f"{path}: not a valid Word file (no {main})")
    return elements


def _images(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> set[str]:
    """The parts python-docx keeps as bytes, never parsing them: those `[Content_Types].xml`
    gives an `image/…` type (its override for the part, else its default for the part's
    extension; case aside, as OPC reads names), an SVG picture included — not by their
    names: styles with 30 million elements named `word/styles.png`, typed as styles, passed
    the bounds `styles.xml` gets (a 118 KB file indexed at 3.9 GB). Without a readable
    `[Content_Types].xml` (python-docx refuses such a file), by their names' suffixes. Read
    with patterns, not an XML parser: nothing in the file is trusted yet."""
    listed = next((m for m in members if m.filename == "[Content_Types].xml"
                   and m.file_size <= _TYPES), None)
    if listed is None:
        return {m.filename for m in members if m.filename.lower().endswith(_IMAGES)}
    types = archive.read(listed).decode("utf-8", "replace")
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}
    for tag, attributes in re.findall(r"<(Default|Override)\b([^>]*)>", types):
        named = dict(re.findall(r"""\b(\w+)\s*=\s*["']([^"']*)["']""", attributes))
        kind = named.get("ContentType", "").lower()
        if tag == "Default":
            defaults[named.get("Extension", "").lower()] = kind
        else:
            overrides[named.get("PartName", "").lstrip("/").lower()] = kind

    def kind(name: str) -> str:
        suffix = name.rpartition("/")[2].rpartition(".")[2].lower() if "." in name else ""
        return overrides.get(name.lower(), defaults.get(suffix, ""))
    return {m.filename for m in members if kind(m.filename).startswith("image/")}


def _main_part(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> str:
    """The document's main part as `_rels/.rels` names it (Word Online writes
    `word/document2.xml`), else Word's usual `word/document.xml`. Read with a pattern, not
    an XML parser: nothing in the file is trusted yet."""
    if not any(m.filename == "_rels/.rels" and m.file_size <= _PROLOG for m in members):
        return "word/document.xml"
    rels = archive.read("_rels/.rels").decode("utf-8", "replace")
    for tag in re.findall(r"<Relationship\b[^>]*>", rels):
        if re.search(r"""\bType\s*=\s*["'][^"']*/officeDocument["']""", tag):
            target = re.search(r"""\bTarget\s*=\s*["']/?([^"']+)["']""", tag)
            if target:  # "./word/document.xml", "word%20main.xml": as python-docx resolves
                return posixpath.normpath(unquote(target.group(1))).lstrip("/")
    return "word/document.xml"


def _encoding(head: bytes) -> str:
    """The encoding of an XML part whose first bytes are `head` (4 of them): by its
    byte-order mark or its first character `<`, else UTF-8 (XML's default)."""
    return ("utf-32" if head in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") else
            "utf-32-le" if head == b"<\x00\x00\x00" else
            "utf-32-be" if head == b"\x00\x00\x00<" else
            "utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else
            "utf-16-le" if head[:2] == b"<\x00" else
            "utf-16-be" if head[:2] == b"\x00<" else "utf-8")


def _elements(part, limit: int) -> int:
    """How many elements the XML `part` (a binary file) holds, counted as it streams past
    (a start or empty tag is a `<` not followed by `/`; a comment, instruction or CDATA
    `<` counts too: the count is never short), no tree built; reading stops once past
    `limit`. Why not an XML parser: nothing in the file is trusted yet, and counting is
    fast (127 MB of XML in 0.2 s, unpacking included)."""
    head = part.read(4)
    decoder = codecs.getincrementaldecoder(_encoding(head))("replace")
    count, last, text = 0, "", decoder.decode(head)
    while True:  # a "</" cut in two by a read is no start tag either
        count += text.count("<") - text.count("</") - (last == "<" and text[:1] == "/")
        last = text[-1:] or last
        more = part.read(_PROLOG * 16)
        if not more or count > limit:
            return count
        text = decoder.decode(more)


def _declares_dtd(part) -> bool:
    """Whether the XML `part` (a binary file) has a `<!DOCTYPE` before its root element: the
    prolog is read to its end, past comments and processing instructions of any length
    (only a comment's last characters are held), in UTF-8 or, by its byte-order mark or
    first bytes, UTF-16 or UTF-32 — a 64 KB comment or a UTF-16 part once hid the DTD."""
    head = part.read(4)
    decoder = codecs.getincrementaldecoder(_encoding(head))("replace")
    text, skip = decoder.decode(head), ""
    while True:
        text = text.lstrip("\ufeff \t\r\n")
        if skip:  # inside a comment or instruction: look for its end
            end = text.find(skip)
            if end < 0:
                text = text[-len(skip):]
            else:
                text, skip = text[end + len(skip):], ""
                continue
        elif text.startswith(("<!--", "<?")):
            text, skip = text[4 if text[1] == "!" else 2:], "-->" if text[1] == "!" else "?>"
            continue
        elif text and not "<!--".startswith(text):  # not a comment's opening, cut short
            # a DOCTYPE, or else the root element (or no XML)
            return text.startswith("<!") and _has_subset(text, part, decoder)
        more = part.read(_PROLOG)
        if not more:
            return False
        text += decoder.decode(more)


def _has_subset(text: str, part, decoder) -> bool:
    """Whether the DOCTYPE that `text` starts with has an internal subset ("[" before its
    closing ">", quoted literals aside; unclosed counts as one). Entities are declared only
    there — lxml under python-docx loads no external DTD — so `<!DOCTYPE html>` (an HTML
    altChunk part) and an SVG image's `<!DOCTYPE svg PUBLIC …>` pass."""
    quote, i = "", 2
    while True:
        for i in range(i, len(text)):
            c = text[i]
            if quote:
                quote = "" if c == quote else quote
            elif c in "\"'":
                quote = c
            elif c in "[>":
                return c == "["
        more = part.read(_PROLOG)
        if not more:
            return True
        text, i = decoder.decode(more), 0
