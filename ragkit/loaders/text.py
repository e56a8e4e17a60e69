"""Reading one Markdown, text or source file of a folder as text, whatever editor saved it.

What it is: `read_text(path)` — the file's text with `\\n` line ends (Windows' `\\r\\n` and
old Macs' lone `\\r` turned into `\\n`). UTF-8, and any file that opens with a byte order mark:
UTF-8 with one (Notepad writes it; before, it hid a Markdown file's front matter and first
heading), UTF-16 and UTF-32 (Notepad's "Unicode"). A file is opened without blocking and
read only when it is a regular file (a FIFO swapped in after the folder was listed must not
hang the run) of at most `MAX_TEXT_BYTES` (indexing holds about 14 times a file's size in
memory: a 200 MB text file peaked at 2.9 GB).

A PDF, a Word file, an image, a program or an SQLite database named as text is refused as
what its first bytes say it is (`_SIGNATURES`), when it is not UTF-8; any other file with a
NUL byte in its first 4 KB (and no UTF-16 or UTF-32 byte order mark) as "looks binary",
before it is decoded: a database or random bytes named .txt were "not UTF-8 text (line 2:
byte 0xf8)", which sends a user looking for an encoding.

What it is not: a guesser of legacy encodings. Latin-1, Windows-1252 or UTF-16 without a
byte order mark are refused with one line saying which line and byte is not UTF-8 (or that
the file looks like UTF-16 without a mark), rather than read as mojibake. UTF-8 text whose
last character is cut short (a copy that did not finish) is refused as such.
"""
from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from ragkit.documents import RagkitError

MAX_TEXT_BYTES = 256 * 2**20  # one text file; a whole folder is bounded by nothing but memory
# longest first: UTF-32-LE's mark starts with UTF-16-LE's
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
# what a file that is not text starts with, said when it does not decode: "not UTF-8 (byte
# 0x89)" of a PNG named notes.md sends a user looking for an encoding
_SIGNATURES = ((b"%PDF-", "a PDF (name it .pdf to have it read)"),
               (b"PK\x03\x04", "a ZIP archive (a Word file? name it .docx to have it read)"),
               (b"\xd0\xcf\x11\xe0", "an old Office file (.doc, .xls: save it as .docx)"),
               (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
               (b"GIF8", "a GIF image"), (b"\x7fELF", "a program (ELF)"),
               (b"\x1f\x8b", "gzip-compressed"), (b"SQLite format 3\x00", "an SQLite database"))
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device",
          stat.S_IFBLK: "a device", stat.S_IFDIR: "a folder"}


def not_regular(mode: int) -> str | None:
    """Why a file of `mode` is not read (`not a regular file (a FIFO)…`), None when it is."""
    if stat.S_ISREG(mode):
        return None
    kind = _KINDS.get(stat.S_IFMT(mode), "a special file")
    return f"not a regular file ({kind}); ragkit reads only regular files"


def size_text(size: int) -> str:
    """A byte count as people read it: `1,400 bytes`, `300 MB`."""
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size:,} bytes"


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of `path`, a regular, non-empty file of at most `limit` bytes; anything else
    is a RagkitError naming it. Opened with O_NONBLOCK, so a FIFO is refused, never waited
    on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if why := not_regular(info.st_mode):
            raise RagkitError(f"{path}: {why}")
        if info.st_size == 0:
            raise RagkitError(f"{path}: empty file (0 bytes)")
        if info.st_size > limit:
            raise _too_large(path, info.st_size, limit)
        try:
            data = handle.read()  # read(limit) would allocate `limit` bytes for a tiny file
        except OSError as exc:
            raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:  # it grew while read
        raise _too_large(path, len(data), limit)
    return data


def _too_large(path: Path, size: int, limit: int) -> RagkitError:
    return RagkitError(f"{path}: {size_text(size)}, over the limit of {size_text(limit)} for "
                       f"one text file (split it, or leave it out with --skip-bad)")


def _looks_utf16(raw: bytes) -> bool:
    """Mostly ASCII text stored as UTF-16: a NUL in (nearly) every other byte, one side only."""
    head = raw[:4096]
    even, odd = head[0::2], head[1::2]
    if len(odd) < 2:
        return False
    return ((odd.count(0) > 0.3 * len(odd) and even.count(0) < 0.05 * len(even))
            or (even.count(0) > 0.3 * len(even) and odd.count(0) < 0.05 * len(odd)))


def _decodes(raw: bytes) -> bool:
    """Whether `raw` is UTF-8 without a NUL in its first 4 KB (text, not a binary file)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in raw[:4096]


def decode_text(raw: bytes, path: Path) -> str:
    """`raw` as text: by its byte order mark when it has one, else UTF-8 (see the module)."""
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8")
    kind = next((kind for magic, kind in _SIGNATURES if raw.startswith(magic)), None)
    if kind and not _decodes(raw):  # "GIF89a is a format." is text
        raise RagkitError(f"{path}: {kind}, not text")
    if encoding == "utf-8" and b"\x00" in raw[:4096]:  # no text in UTF-8 holds a NUL
        if _looks_utf16(raw):
            raise RagkitError(f"{path}: not UTF-8 text (UTF-16 without a byte order mark? "
                              f"save it as UTF-8)")
        raise RagkitError(f"{path}: looks binary, not text")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        if encoding != "utf-8":
            raise RagkitError(f"{path}: not {encoding.upper().removesuffix('-SIG')} text, "
                              f"though it starts with that encoding's byte order mark "
                              f"({exc.reason})") from None
        if exc.reason == "unexpected end of data" and not raw[:exc.start].isascii():
            # UTF-8 up to a character its last bytes begin: the file, not its encoding, is bad
            raise RagkitError(f"{path}: UTF-8 text cut off inside its last character (line "
                              f"{line}; a copy or download that did not finish?)") from None
        hint = "; Korean in CP949/EUC-KR? save it as UTF-8" if korean_legacy(raw) else ""
        raise RagkitError(f"{path}: not UTF-8 text (line {line}: byte "
                          f"0x{raw[exc.start]:02x}{hint})") from None


def korean_legacy(raw: bytes) -> bool:
    """True when `raw` reads as CP949 (Windows' superset of EUC-KR, what Korean Notepad
    saved for years) and most of what is not ASCII is Hangul syllables of EUC-KR's own
    table (two bytes from 0xA1): a text file's refusal then says which encoding it likely
    is (it is still refused), and a web page without a charset is read so, as browsers
    detect it. CP949's added syllables alone do not count: Windows-1252's quotes before a
    letter ('It\x92s') read as those."""
    try:
        text = raw.decode("cp949")
    except UnicodeDecodeError:
        return False
    wide = [c for c in text if not c.isascii()]
    return bool(wide) and sum(_ks_hangul(c) for c in wide) >= 0.6 * len(wide)


def _ks_hangul(char: str) -> bool:
    """True for one of the 2,350 Hangul syllables of KS X 1001 (EUC-KR's table)."""
    return "\uac00" <= char <= "\ud7a3" and min(char.encode("cp949")) >= 0xA1


def read_text(path: Path) -> str:
    """The text of one text file with `\\n` line ends (see the module docstring)."""
    text = decode_text(read_regular(path, MAX_TEXT_BYTES), path).removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # a second mark (saved twice) too
