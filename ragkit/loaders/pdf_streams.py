"""A size limit on every stream pdfminer decodes: decompression bombs refused, not unpacked.

What it is: `bounded_streams(path)`, a context in which each `PDFStream` that pdfminer
decodes — page contents, Form XObjects, fonts, CMaps, images, whatever a page draws — is
first measured through its whole filter chain at bounded cost: Flate (`/FlateDecode` or
`/Fl`) with `zlib.decompressobj().decompress(data, limit)`, LZW code by code, RunLength by
its length bytes, the ASCII filters (which only shrink) as they are. A stream that would
unpack past `MAX_STREAM`, or a file whose streams together would pass `MAX_FILE`, raises
`RagkitError` naming the file; only then does pdfminer's own `decode` run. Why measure before
decoding: pdfminer calls `zlib.decompress` on the whole stream, so 2 KB of doubly deflated
zeros become a gigabyte in memory before any check could look at it. Why every stream and
every layer: a limit on the first filter of a page's own contents is passed by the short name
`/Fl`, by a second `/FlateDecode`, by an `/ASCIIHexDecode` in front, or by a bomb in a Form
XObject the page draws.

What it is not: a sandbox. The measuring costs a second decompression of each stream (zlib
runs at hundreds of MB/s; pdfminer's layout analysis dominates a page's time), and the
check patches `PDFStream.decode` for the length of the context only, in this process.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

from ragkit.documents import RagkitError

MAX_STREAM = 128 * 2**20  # bytes one stream may unpack to; real pages: < 5 MB
MAX_FILE = 1024 * 2**20  # bytes all of a file's streams may unpack to together


def _flate(data: bytes, limit: int) -> bytes:
    try:
        return zlib.decompressobj().decompress(data, limit + 1)
    except zlib.error:
        return b""  # pdfminer reads what it can of a damaged stream; nothing to bound here


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


def _run_length(data: bytes, limit: int) -> int:
    """The size RunLengthDecode would unpack `data` to, counted up to past `limit`."""
    size, at = 0, 0
    while at < len(data) and size <= limit:
        length = data[at]
        if length == 128:
            break
        if length < 128:
            size, at = size + length + 1, at + length + 2
        else:
            size, at = size + 257 - length, at + 2
    return size


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
            yield _run_length(data, limit)
            return  # what follows cannot grow past what the check has already allowed
        else:
            return  # images (DCT, JPX, JBIG2, CCITT) and unknown filters: pdfminer's call
        yield len(data)


class Reading:
    """Where the reader is: `page` (1-based) while a page is read, for the refusal's line."""

    def __init__(self) -> None:
        self.page: int | None = None
        self.total = 0


@contextmanager
def bounded_streams(path: Path) -> Iterator[Reading]:
    """pdfminer decodes no stream of `path` past `MAX_STREAM`, nor all of them past
    `MAX_FILE` together (see the module docstring); set `.page` of what it yields to name
    the page in the refusal."""
    from pdfminer.pdftypes import PDFStream
    original = PDFStream.decode
    reading = Reading()

    def decode(stream) -> None:
        if stream.rawdata is not None and stream.get_filters():
            largest = max(_sizes(stream, MAX_STREAM), default=0)
            where = f"{path}: page {reading.page}" if reading.page else f"{path}"
            if largest > MAX_STREAM:
                raise RagkitError(f"{where}: a stream unpacks to more than "
                                  f"{MAX_STREAM // 2**20} MB (a decompression bomb?)")
            reading.total += largest
            if reading.total > MAX_FILE:
                raise RagkitError(f"{where}: the file's streams unpack to more than "
                                  f"{MAX_FILE // 2**20} MB together (a decompression bomb?)")
        original(stream)

    PDFStream.decode = decode
    try:
        yield reading
    finally:
        PDFStream.decode = original
