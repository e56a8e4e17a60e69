"""Open a PDF whose end is missing, as a viewer does: its trailer rebuilt from its objects.

What it is: `open_document(handle, path)`, pdfminer's `PDFDocument` of the file, and a note
when it had to be repaired. A file cut short (a download that stopped, a copy off a full
disk) loses its cross-reference table and trailer, which name the document's catalog.
pdfminer rebuilds the table by scanning for objects, but finds no trailer (and none at all
in a PDF 1.5 file, whose trailer is its cross-reference stream) or stops at the object cut
in two: "No /Root object! - Is this really a PDF?" or "Unexpected EOF", which ragkit
reported as "not a valid PDF" while every viewer opened the file. Here the file is read
again up to its last `endobj`, with a trailer naming its catalog: an object whose dictionary
says `/Type /Catalog`, written plainly or inside a compressed object stream (`/FlateDecode`,
what PDF writers use). Candidates are tried from the end of the file back (an incremental
update's catalog comes last), and one is taken only when pdfminer reads it as a catalog with
`/Pages`: the words "/Type /Catalog" printed on a page are not one. Pages whose objects were
cut off are missing; the note says they may be.

What it is not: a repair of anything else. A catalog that was itself cut off, or is in a
stream of another filter, is not found: the file stays "not a valid PDF", and one without
its `%%EOF` end mark is said to be cut short (pdfminer's "PSEOF: Unexpected EOF" said
nothing a user could act on); an encrypted file
is not repaired (its trailer's key would be lost: its text would be read as ciphertext); no
damaged object is mended; the file on disk is never written. Bounded: files up to 256 MB,
object streams unpacked to 64 MB together, regular expressions that match in linear time
(a run of 80,000 digits took 32 s with unbounded ones).
"""
from __future__ import annotations

import io
import re
import zlib
from pathlib import Path
from typing import BinaryIO

from ragkit.documents import RagkitError

_CATALOG = re.compile(rb"/Type\s{0,64}/Catalog\b")
_OBJECT = re.compile(rb"(?<!\d)(\d{1,10})\s{1,64}(\d{1,5})\s{1,64}obj\b")
_STREAM = re.compile(rb"(?<!\d)(\d{1,10})\s{1,64}\d{1,5}\s{1,64}obj\s{0,64}<<(.{0,600}?)>>"
                     rb"\s{0,64}stream\r?\n", re.S)
_FIRST = re.compile(rb"/First\s{1,64}(\d{1,10})")
_LENGTH = re.compile(rb"/Length\s{1,64}(\d{1,10})(?!\d)(?!\s{1,64}\d{1,5}\s{1,64}R)")
_REACH = 4096  # bytes before `/Type /Catalog` its object's `N G obj` may start
_UNPACKED = 64 * 2**20  # bytes the object streams of a file may unpack to here, together
_LARGEST = 256 * 2**20  # bytes of the largest file repaired (it is read whole)
_PIECE = 2**16  # bytes of a stream fed to zlib at a time
_TRIES = 8  # catalogs tried, the last in the file first: each try reads the file again
NOTE = ("its end is missing (cut short?): read from the objects it holds, as a viewer "
        "rebuilds it; pages at its end may be missing")


def open_document(handle: BinaryIO, path: Path):
    """(the `PDFDocument` of the open file `handle`, "" or `NOTE` when it was repaired);
    pdfminer's own error when it cannot be."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser, PDFSyntaxError
    from pdfminer.psexceptions import PSEOF
    try:
        return PDFDocument(PDFParser(handle), password=""), ""
    except (PDFSyntaxError, PSEOF) as exc:
        error = exc
    data = _whole_objects(path)
    for number, generation in _catalogs(data)[:_TRIES]:
        fixed = io.BytesIO(data)
        fixed.seek(0, io.SEEK_END)
        fixed.write(b"\ntrailer\n<< /Root %s %s R >>\n" % (number, generation))
        fixed.seek(0)
        try:
            document = PDFDocument(PDFParser(fixed), password="")
        except (PDFSyntaxError, PSEOF):
            continue
        if isinstance(document.catalog, dict) and "Pages" in document.catalog:
            return document, NOTE
    if cut_short(path):
        raise cut_off(path, f"with the part that says where its pages are; get the whole file "
                            f"again ({type(error).__name__}: {str(error)[:200]})")
    raise error


def cut_off(path: Path, lost: str) -> RagkitError:
    """The refusal of a file `cut_short`, saying what was `lost` with its end."""
    return RagkitError(f"{path}: not a valid PDF: its end is missing (cut short: a download or "
                       f"copy that did not finish?) {lost}")


def cut_short(path: Path) -> bool:
    """Whether the file lacks the `%%EOF` mark a PDF writer ends it with (in its last KB)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 1024))
        return b"%%EOF" not in handle.read()


def _whole_objects(path: Path) -> bytes:
    """The file's bytes up to its last `endobj`; none for a file too large to read whole or
    an encrypted one."""
    if path.stat().st_size > _LARGEST:
        return b""
    data = path.read_bytes()
    if b"/Encrypt" in data:
        return b""
    return data[:data.rfind(b"endobj") + len(b"endobj")] if b"endobj" in data else b""


def _catalogs(data: bytes) -> list[tuple[bytes, bytes]]:
    """(number, generation) of each object that may be the catalog, the last in the file
    first: one whose dictionary (before any `stream`) says `/Type /Catalog`, or one listed in
    a flate-compressed object stream at the place such words are unpacked."""
    found = []
    for catalog in _CATALOG.finditer(data):
        before = data[max(0, catalog.start() - _REACH):catalog.start()]
        start = None
        for start in _OBJECT.finditer(before):
            pass
        if start is not None and not re.search(rb"endobj|stream", before[start.end():]):
            found.append((catalog.start(), start.group(1), start.group(2)))
    found += _packed(data)
    return [(number, generation) for _, number, generation in sorted(found, reverse=True)]


def _packed(data: bytes) -> list[tuple[int, bytes, bytes]]:
    """(place, number, b"0") of each object of a flate-compressed object stream whose
    dictionary says `/Type /Catalog`; the stream's head lists each object's number and its
    offset after `/First`. The streams unpack to `_UNPACKED` bytes together, each fed to zlib
    in pieces (fed whole, zlib kept the rest of the file as unused input, a copy per stream)."""
    found, budget, view = [], _UNPACKED, memoryview(data)
    for stream in _STREAM.finditer(data):
        head, first = stream.group(2), _FIRST.search(stream.group(2))
        if b"/ObjStm" not in head or b"/FlateDecode" not in head or first is None:
            continue
        length = _LENGTH.search(head)
        end = stream.end() + int(length[1]) if length else len(data)
        body = _unpacked(view[stream.end():min(end, len(data))], budget)
        if body is None:
            continue
        budget -= len(body)
        start = int(first.group(1))
        numbers = body[:start].split()
        places = {int(at): number for number, at in zip(numbers[::2], numbers[1::2])
                  if at.isdigit() and number.isdigit()}
        for catalog in _CATALOG.finditer(body, start):
            before = [at for at in places if at <= catalog.start() - start]
            if before:
                found.append((stream.start(), places[max(before)], b"0"))
        if budget <= 0:  # a bomb, or more streams than a catalog is looked for in
            break
    return found


def _unpacked(stream: memoryview, budget: int) -> bytes | None:
    """At most `budget` bytes of the flate stream `stream`, fed in `_PIECE`s; None when it
    is not flate data."""
    inflater, out = zlib.decompressobj(), []
    try:
        for at in range(0, len(stream), _PIECE):
            out.append(inflater.decompress(stream[at:at + _PIECE], max(budget, 1)))
            budget -= len(out[-1])
            if inflater.eof or budget <= 0:
                break
    except zlib.error:
        return None
    return b"".join(out)
