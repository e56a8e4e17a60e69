"""The text of an HTML page's bytes: the encoding browsers would read it in.

What it is: `decoded_page`, which refuses bytes that are no web page (gzip, binary) and reads
the rest as a browser does (`_decode`: a byte order mark, UTF-8, the charset a `<meta>` or an
XML declaration names, CP949 for Korean bytes, else Windows-1252). What it is not: the
loader (`ragkit.loaders.html`), which parses what this returns.
"""
from __future__ import annotations

import codecs
import re
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.loaders.text import korean_legacy

_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([\w-]+)|<\?xml[^>]+encoding=["']([\w-]+)""",
                      re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_BINARY = re.compile("[\x00-\x08\x0b\x0e-\x1f]")  # C0 control characters but \t\n\f\r
# the standard's encodings a `<meta>` cannot name (UTF-16: a page whose <meta> reads as ASCII
# is not UTF-16, the WHATWG rule; decoded so, its tags and all turned into CJK characters),
# or that Python has no codec for
_NOT_NAMED = ("utf-16be", "utf-16le", "replacement", "x-user-defined")


def _c1(error: UnicodeDecodeError) -> tuple[str, int]:
    """The 5 bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) as the C1
    code points browsers give them; one stray byte sent the whole page to Latin-1."""
    return chr(error.object[error.start]), error.start + 1


codecs.register_error("ragkit-c1", _c1)


def _decode(raw: bytes) -> str:
    """The encoding a byte order mark names (Windows saves "Unicode" pages as UTF-16), else
    UTF-8, else the charset a `<meta>` or an XML declaration names, as browsers read it
    (`web_codec`; a few bytes it cannot read become U+FFFD, as in a browser: one stray byte
    at the end of a Korean page sent the whole page to Windows-1252 mojibake), else UTF-8
    with a few bytes as U+FFFD when the rest reads as UTF-8 (a page saved without its charset
    and cut short was Windows-1252 mojibake, "acceptÃ©s"), else CP949 for Korean bytes
    (`korean_legacy`: as a browser's detector reads them), else Windows-1252 (what browsers
    assume)."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                break
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    named = _CHARSET.search(raw[:4096])
    names = [web_codec((named.group(1) or named.group(2)).decode("ascii"))] if named else []
    for encoding in filter(None, names):
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeError):  # "undefined" raises a bare UnicodeError
            pass
        try:  # a few bad bytes (a page cut short) are U+FFFD, as browsers show them
            text = raw.decode(encoding, errors="replace")
        except (LookupError, UnicodeError):
            continue
        bad = text.count("\ufffd")  # kept when the charset read some of what is not ASCII:
        if bad <= max(8, len(text) // 1000) and _read_some(text, bad):  # else it is mislabelled
            return text
    text = raw.decode("utf-8", errors="replace")  # UTF-8 but for a byte or two: a page
    bad = text.count("\ufffd")  # saved by `curl -o` (no <meta>) cut short mid-character
    if bad <= max(8, len(text) // 1000) and sum(not c.isascii() for c in text) > 3 * bad:
        return text
    if korean_legacy(raw):  # Korean without a usable charset: browsers detect CP949 too
        return raw.decode("cp949")
    return raw.decode("cp1252", errors="ragkit-c1")


def _read_some(text: str, bad: int) -> bool:
    """True when `text` holds a character beyond ASCII other than its `bad` U+FFFD: a page
    labelled UTF-8 but saved as Windows-1252 ('caf\\xe9') reads nothing but U+FFFD so."""
    return sum(not c.isascii() for c in text) > bad


def decoded_page(path: Path, raw: bytes) -> str:
    """`_decode(raw)`, or one line when the bytes are no web page: a gzip file (a page saved by
    `curl` without `--compressed`) or binary data (more than 5 % control characters in its
    first 4 KB once decoded; C0 only, as a Windows-1252 page's quotes are C1 in Latin-1) —
    decoded as Windows-1252 they were indexed as garbage."""
    if raw.startswith(b"\x1f\x8b"):
        raise RagkitError(f"{path}: gzip-compressed, not HTML (saved without decompressing? "
                          f"gunzip it first)")
    page = _decode(raw)
    head = page[:4096]
    if len(_BINARY.findall(head)) > len(head) * 0.05:
        raise RagkitError(f"{path}: looks binary, not HTML")
    return page


def web_codec(label: str) -> str | None:
    """Python's codec for the charset `label` as browsers read it, by the WHATWG Encoding
    Standard's table (webencodings): every Latin-1 and ASCII label is Windows-1252 (its quotes
    and dashes, 0x91-0x97, would be C1 controls otherwise), every EUC-KR label (`euc-kr`,
    `ks_c_5601-1987`, `windows-949`) CP949 (Korean pages labelled euc-kr hold its 8,822
    added syllables, 똠 or 샾: strict EUC-KR refused them, and the whole page became
    Windows-1252 mojibake), Latin-5 Windows-1254, Big5 Big5-HKSCS. None for a label browsers
    do not know: any codec Python has was read with — `punycode` took 36 s over a 400 KB
    page (its time grows with the square of the page) and spelled its tags out as text,
    `unicode_escape` and `utf-7` read anything — nor for one a `<meta>` cannot name
    (`_NOT_NAMED`)."""
    import webencodings  # deferred: only a page that names a charset reads the table
    found = webencodings.lookup(label)
    return None if found is None or found.name in _NOT_NAMED else found.codec_info.name
