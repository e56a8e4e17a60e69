"""A size limit on every stream pdfminer decodes: decompression bombs refused, not unpacked.

What it is: `bounded_streams(path)`, a context in which each `PDFStream` that pdfminer
decodes — page contents, Form XObjects, fonts, CMaps, images, whatever a page draws — is
first measured through its whole filter chain at bounded cost: Flate (`/FlateDecode` or
`/Fl`) in pieces of at most the limit (a damaged stream up to its damage, as pdfminer reads
it), LZW code by code, RunLength run by run, the ASCII filters (which only shrink) as they
are. A stream that would unpack past `MAX_STREAM`, or a file whose streams together would
pass `MAX_FILE`, raises `RagkitError` naming the file; only then does pdfminer's own
`decode` run. Why measure before
decoding: pdfminer calls `zlib.decompress` on the whole stream, so 2 KB of doubly deflated
zeros become a gigabyte in memory before any check could look at it. Why every stream and
every layer: a limit on the first filter of a page's own contents is passed by the short name
`/Fl`, by a second `/FlateDecode`, by an `/ASCIIHexDecode` or `/RunLengthDecode` in front, by
a flipped checksum byte, or by a bomb in a Form XObject the page draws.

A reference that leads back to itself (`6 0 obj 7 0 R`, `7 0 obj 6 0 R`) is refused too, in
the same context (`_resolved`): pdfminer follows it for ever.

A CCITT fax image is not decoded at all (it holds no text, and pdfminer's decoder is pure
Python: a 1 KB stream took minutes).

What it is not: a sandbox. The measuring costs a second decompression of each stream (zlib
runs at hundreds of MB/s; pdfminer's layout analysis dominates a page's time).
`PDFStream.decode` is wrapped once per process; the wrapper checks only the streams of a
thread inside `bounded_streams`, so other threads and other users of pdfminer are unchanged.
"""
from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

from ragkit.documents import RagkitError

MAX_STREAM = 128 * 2**20  # bytes one stream may unpack to; real pages: < 5 MB
MAX_FILE = 1024 * 2**20  # bytes all of a file's streams may unpack to together


def _flate(data: bytes, limit: int) -> bytes:
    """Flate-decoded `data`, at most `limit` + 1 bytes; a damaged stream up to its damage,
    as pdfminer's own fallback reads it (a flipped checksum byte must not count as 0)."""
    inflate, out, size = zlib.decompressobj(), [], 0
    try:
        for at in range(0, len(data), 1 << 16):
            pending = data[at:at + (1 << 16)]
            while pending and size <= limit:
                piece = inflate.decompress(pending, limit + 1 - size)
                out.append(piece)
                size += len(piece)
                pending = inflate.unconsumed_tail
            if size > limit:
                break
    except zlib.error:
        pass
    return b"".join(out)


def _lzw(data: bytes, limit: int) -> bytes:
    from pdfminer.lzw import LZWDecoder
    out, size = [], 0
    try:
        for piece in LZWDecoder(BytesIO(data)).run():
            out.append(piece)
            size += len(piece)
            if size > limit:
                break
    except Exception:  # noqa: BLE001 - pdfminer's own decode reports a damaged stream
        pass
    return b"".join(out)


def _run_length(data: bytes, limit: int) -> bytes:
    """RunLength-decoded `data`, at most about `limit` bytes (the next filter may grow it)."""
    out, at = bytearray(), 0
    while at < len(data) and len(out) <= limit:
        length = data[at]
        if length == 128:
            break
        if length < 128:
            out += data[at + 1:at + length + 2]
            at += length + 2
        else:
            out += data[at + 1:at + 2] * (257 - length)
            at += 2
    return bytes(out)


def _sizes(stream, limit: int) -> Iterator[int]:
    """The size after each filter of `stream`'s chain, each step bounded by `limit`."""
    from pdfminer import pdftypes as t
    data = stream.rawdata
    if stream.decipher:
        data = stream.decipher(stream.objid, stream.genno, data, stream.attrs)
    for name, _ in stream.get_filters():
        if name in t.LITERALS_FLATE_DECODE:
            data = _flate(data, limit)
        elif name in t.LITERALS_LZW_DECODE:
            data = _lzw(data, limit)
        elif name in t.LITERALS_ASCIIHEX_DECODE:
            data = t.asciihexdecode(data)
        elif name in t.LITERALS_ASCII85_DECODE:
            data = t.ascii85decode(data)
        elif name in t.LITERALS_RUNLENGTH_DECODE:
            data = _run_length(data, limit)
        else:
            return  # images (DCT, JPX, JBIG2; CCITT is never decoded) and unknown filters
        yield len(data)


def _is_fax(stream) -> bool:
    from pdfminer.pdftypes import LITERALS_CCITTFAX_DECODE
    return any(name in LITERALS_CCITTFAX_DECODE for name, _ in stream.get_filters())


class Reading:
    """Where the reader is: `page` (1-based) while a page is read, for the refusal's line."""

    def __init__(self, path: Path) -> None:
        self.path, self.page, self.total = path, None, 0

    def check(self, stream) -> None:
        """Refuse `stream` before pdfminer decodes it (see the module docstring)."""
        largest = max(_sizes(stream, MAX_STREAM), default=0)
        where = f"{self.path}: page {self.page}" if self.page else f"{self.path}"
        if largest > MAX_STREAM:
            raise RagkitError(f"{where}: a stream unpacks to more than "
                              f"{MAX_STREAM // 2**20} MB (a decompression bomb?)")
        self.total += largest
        if self.total > MAX_FILE:
            raise RagkitError(f"{where}: the file's streams unpack to more than "
                              f"{MAX_FILE // 2**20} MB together (a decompression bomb?)")


_local = threading.local()  # the Reading of this thread's `bounded_streams`, if any
_install_lock = threading.Lock()
_installed: list = []  # pdfminer's own decode, once it is wrapped


def _resolved(resolve: Callable) -> Callable:
    """pdfminer's `PDFObjRef.resolve`, followed to the object in a thread inside
    `bounded_streams`, refusing a cycle: pdfminer's `resolve1` loops while the object is a
    reference, so `6 0 obj 7 0 R`, `7 0 obj 6 0 R` (a 632-byte file) held `ragkit index`
    for ever, `--skip-bad` too, wherever the page tree, contents, resources, fonts or
    outline reached it. A chain without a cycle ends at an object, as before."""
    from pdfminer.pdftypes import PDFObjRef

    def followed(ref, default: object = None):
        found = resolve(ref, default)
        reading = getattr(_local, "reading", None)
        if reading is None or not isinstance(found, PDFObjRef):
            return found
        seen = {ref.objid}
        while isinstance(found, PDFObjRef):
            if found.objid in seen:
                raise RagkitError(f"{reading.path}: not a valid PDF (object {found.objid} "
                                  f"is a reference that leads back to itself)")
            seen.add(found.objid)
            found = resolve(found, default)
        return found
    return followed


def _install() -> None:
    """Wrap `PDFStream.decode` and `PDFObjRef.resolve` (`_resolved`) once, for good: the
    wrappers check only a thread that is in `bounded_streams`, so threads and other pdfminer
    users are left as they were."""
    from pdfminer.pdftypes import PDFObjRef, PDFStream
    with _install_lock:
        if _installed:
            return
        original = PDFStream.decode
        PDFObjRef.resolve = _resolved(PDFObjRef.resolve)

        def decode(stream) -> None:
            reading = getattr(_local, "reading", None)
            if reading is not None and stream.rawdata is not None and stream.get_filters():
                if _is_fax(stream):  # a fax image: no text, and a slow pure-Python decoder
                    stream.data, stream.rawdata = b"", None
                    return
                reading.check(stream)
            original(stream)

        PDFStream.decode = decode
        _installed.append(original)


@contextmanager
def bounded_streams(path: Path) -> Iterator[Reading]:
    """In this thread, pdfminer decodes no stream of `path` past `MAX_STREAM`, nor all of
    them past `MAX_FILE` together (see the module docstring); set `.page` of what it yields
    to name the page in the refusal."""
    _install()
    before = getattr(_local, "reading", None)
    _local.reading = reading = Reading(path)
    try:
        yield reading
    finally:
        _local.reading = before
