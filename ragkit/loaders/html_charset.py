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
# codecs whose labels browsers read as a superset (WHATWG's encoding standard): every Latin-1
# and ASCII label is Windows-1252 (its quotes and dashes, 0x91-0x97, would be C1 controls
# otherwise), every EUC-KR label Windows-949 (CP949: Korean pages labelled euc-kr hold its
# 8,822 added syllables, 똠 or 샾, which strict EUC-KR refused, and the whole page became
# Windows-1252 mojibake)
_SUPERSET = {"iso8859-1": "cp1252", "ascii": "cp1252", "euc_kr": "cp949"}
# EUC-KR labels of the standard that Python does not know
_KOREAN_LABELS = ("cseuckr", "csksc56011987", "iso-ir-149", "ks_c_5601-1989", "ksc_5601",
                  "windows-949")
# other labels of the standard Python does not know, as Python's codecs
_ALIASES = {"windows-874": "cp874", "x-mac-cyrillic": "mac-cyrillic",
            "iso-8859-8-i": "iso8859-8", "x-sjis": "shift_jis"}
# the encodings browsers read (the standard's), as Python names them: a label of any other
# codec Python has is no page's charset — "punycode" decoded a 400 KB page in 36 s (its time
# grows with the square of the page) into its tags spelled out, "unicode_escape" and "utf-7"
# read anything
_WEB = {"utf-8", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874",
        "tis-620", "cp932", "shift_jis", "euc_jp", "iso2022_jp", "gbk", "gb2312", "gb18030",
        "big5", "big5hkscs", "euc_kr", "iso8859-1", "ascii",
        *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 14, 15, 16)),
        *(f"cp{n}" for n in range(1250, 1259))}


def _c1(error: UnicodeDecodeError) -> tuple[str, int]:
    """The 5 bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) as the C1
    code points browsers give them; one stray byte sent the whole page to Latin-1."""
    return chr(error.object[error.start]), error.start + 1


codecs.register_error("ragkit-c1", _c1)


def _decode(raw: bytes) -> str:
    """The encoding a byte order mark names (Windows saves "Unicode" pages as UTF-16), else
    UTF-8, else the charset a `<meta>` or an XML declaration names (a few bytes it cannot
    read become U+FFFD, as in a browser: one stray byte at the end of a Korean page sent the
    whole page to Windows-1252 mojibake) if browsers know it (`_WEB`), else UTF-8 with a few
    bytes as U+FFFD when the rest reads as UTF-8 (a page saved without its charset and cut
    short was Windows-1252 mojibake, "acceptÃ©s"), else CP949 for Korean bytes
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
    names = [(named.group(1) or named.group(2)).decode("ascii")] if named else []
    # a page whose <meta> is readable as ASCII is not UTF-16 or -32 whatever it says (the
    # WHATWG rule): decoded so, its tags and all turned into CJK characters
    names = [_ALIASES.get(n.lower(), n) for n in names]
    names = ["cp949" if n.lower() in _KOREAN_LABELS else _SUPERSET.get(_codec(n), n)
             for n in names if n.lower() in _KOREAN_LABELS or _codec(n) in _WEB]
    for encoding in names:
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


def _codec(name: str) -> str:
    """Python's own name of the codec `name` ("u16", "UnicodeLittleUnmarked" -> utf-16…)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return name.lower()
