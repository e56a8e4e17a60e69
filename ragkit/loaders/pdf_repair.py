"""Open a PDF whose end is missing, as a viewer does: its trailer rebuilt from its objects.

What it is: `open_document(handle, path)`, pdfminer's `PDFDocument` of the file, and a note
when it had to be repaired. A file cut short (a download that stopped, a copy off a full
disk) loses its cross-reference table and trailer, which name the document's catalog.
pdfminer rebuilds the table by scanning for objects, but finds no trailer (and none at all
in a PDF 1.5 file, whose trailer is its cross-reference stream) or stops at the object cut
in two: "No /Root object! - Is this really a PDF?" or "Unexpected EOF", which ragkit
reported as "not a valid PDF" while every viewer opened the file. Here the file is read
again up to its last whole object, with a trailer naming its catalog: an object of
`/Type /Catalog`, written plainly or inside a compressed object stream (`/FlateDecode`,
what PDF writers use). Pages whose objects were cut off are missing; the note says they
may be.

What it is not: a repair of anything else. A catalog that was itself cut off, or is in a
stream of another filter, is not found (the file stays "not a valid PDF"), nor is a damaged
object mended; the file on disk is never written.
"""
from __future__ import annotations

import io
import re
import zlib
from pathlib import Path
from typing import BinaryIO

_CATALOG = re.compile(rb"/Type\s*/Catalog\b")
_OBJECT = re.compile(rb"(\d+)\s+(\d+)\s+obj\b")
_STREAM = re.compile(rb"(\d+)\s+\d+\s+obj\s*<<(.{0,600}?)>>\s*stream\r?\n", re.S)
_FIRST = re.compile(rb"/First\s+(\d+)")
_REACH = 4096  # bytes before `/Type /Catalog` its object's `N G obj` may start
_UNPACKED = 64 * 2**20  # bytes the object streams of a file may unpack to here, together
_LARGEST = 256 * 2**20  # bytes of the largest file repaired (it is read whole)
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
        if (fixed := _with_trailer(path)) is None:
            raise
        error = exc
    try:
        return PDFDocument(PDFParser(fixed), password=""), NOTE
    except (PDFSyntaxError, PSEOF):
        raise error from None


def _with_trailer(path: Path) -> io.BytesIO | None:
    """The file's bytes up to its last whole object, with a trailer naming its catalog;
    None when it has no catalog to name."""
    if path.stat().st_size > _LARGEST:
        return None
    data = path.read_bytes()
    data = data[:data.rfind(b"endobj") + len(b"endobj")]
    found = _plain_catalog(data) or _packed_catalog(data)
    if found is None:
        return None
    return io.BytesIO(data + b"\ntrailer\n<< /Root %s %s R >>\n" % found)


def _plain_catalog(data: bytes) -> tuple[bytes, bytes] | None:
    """(number, generation) of the last catalog written as an object of its own."""
    found = None
    for catalog in _CATALOG.finditer(data):
        before = data[max(0, catalog.start() - _REACH):catalog.start()]
        start = None
        for start in _OBJECT.finditer(before):
            pass
        if start is not None and b"endobj" not in before[start.end():]:
            found = start.group(1), start.group(2)
    return found


def _packed_catalog(data: bytes) -> tuple[bytes, bytes] | None:
    """(number, 0) of the last catalog inside a flate-compressed object stream, whose head
    lists each object's number and offset after `/First`."""
    found, budget, view = None, _UNPACKED, memoryview(data)  # a slice of a view copies nothing
    for stream in _STREAM.finditer(data):
        head = stream.group(2)
        first = _FIRST.search(head)
        if b"/ObjStm" not in head or b"/FlateDecode" not in head or first is None:
            continue
        try:
            body = zlib.decompressobj().decompress(view[stream.end():], budget)
        except zlib.error:
            continue
        budget -= len(body)
        if budget <= 0:  # a bomb, or more streams than a catalog is looked for in
            return found
        start = int(first.group(1))
        numbers = body[:start].split()
        places = {int(at): number for number, at in zip(numbers[::2], numbers[1::2])
                  if at.isdigit() and number.isdigit()}
        for catalog in _CATALOG.finditer(body, start):
            before = [at for at in places if at <= catalog.start() - start]
            if before:
                found = places[max(before)], b"0"
    return found
