"""Small PDF, HTML and Word files for the loader tests, good and bad, made on the spot
(reportlab and python-docx are dev dependencies)."""
from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

GENERATOR = Path(__file__).resolve().parents[1] / "data" / "generators" / "make_sample_formats.py"


def pdf(path: Path, pages: list[list[str]], outline: list[tuple[int, str, int]] = (),
        title: str = "", password: str | None = None) -> Path:
    """A PDF whose page n prints the paragraphs `pages[n]` (top down); `outline`
    entries are (level, title, page index) and point at the line printing that title."""
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas
    encrypt = StandardEncryption(password, canPrint=0) if password else None
    pdf_canvas = canvas.Canvas(str(path), encrypt=encrypt, invariant=1)
    pdf_canvas.setTitle(title)
    for number, lines in enumerate(pages):
        y = 780
        for line in lines:
            for level, text, page in outline:
                if page == number and text == line:
                    key = f"p{number}-{text}"
                    pdf_canvas.bookmarkHorizontal(key, 0, y + 14)
                    pdf_canvas.addOutlineEntry(text, key, level=level - 1)
            for row in line.split("\n"):  # a line with "\n": one box of several lines
                pdf_canvas.drawString(72, y, row)
                y -= 14
            y -= 26  # a paragraph each: far enough apart for separate text boxes
        pdf_canvas.showPage()
    pdf_canvas.save()
    return path


def scanned_pdf(path: Path) -> Path:
    """A PDF with drawings and no text layer, as a scanner's image-only page is (the sample
    collection's, data/generators/make_sample_formats.py)."""
    generator = sys.modules.get("make_sample_formats")
    if generator is None:  # registered first: its dataclasses look their module up there
        spec = importlib.util.spec_from_file_location("make_sample_formats", GENERATOR)
        generator = sys.modules["make_sample_formats"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(generator)
    return generator.scanned_pdf(path)


def docx(path: Path, blocks: list[tuple[str, str]], title: str = "") -> Path:
    """A Word file of (style, text) paragraphs, e.g. ("Heading 1", "Refunds")."""
    import docx as python_docx
    document = python_docx.Document()
    document.core_properties.title = title
    for style, text in blocks:
        document.add_paragraph(text, style=style or None)
    document.save(str(path))
    return path


def zip_bomb_docx(path: Path, size: int) -> Path:
    """A .docx whose document.xml unpacks to `size` bytes (compresses to a few KB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            chunk = b" " * 2**20
            for _ in range(size // len(chunk)):
                member.write(chunk)
    return path


def raw_pdf(path: Path, objects: list[bytes]) -> Path:
    """A PDF of the given objects (1 0 obj is the catalog), with a correct xref table."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer << /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            f"%%EOF\n").encode()
    path.write_bytes(out)
    return path


def unmapped_font_pdf(path: Path) -> Path:
    """A one-page PDF that draws three glyphs in a Type0 font (Identity-H, a TrueType CID
    font) with no /ToUnicode map: a text layer that is there, selectable, with no Unicode
    text (pdfminer reads "(cid:3)(cid:4)(cid:5)"), as some exporters subset fonts."""
    return mixed_font_pdf(path, "", 3)


def mixed_font_pdf(path: Path, text: str, glyphs: int) -> Path:
    """A one-page PDF printing `text` in Helvetica (none when empty), then `glyphs` glyphs in
    a Type0 font with no /ToUnicode map: text with some glyphs pdfminer cannot map."""
    codes = b"".join(b"%04X" % (3 + n % 50) for n in range(glyphs))
    content = ((b"BT /F2 12 Tf 20 150 Td (%s) Tj ET " % text.encode() if text else b"")
               + b"BT /F1 24 Tf 20 100 Td <%s> Tj ET" % codes)
    return raw_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 200] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 8 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Subset /Encoding /Identity-H "
        b"/DescendantFonts [6 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Subset /DW 500 /CIDSystemInfo "
        b"<< /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R >>",
        b"<< /Type /FontDescriptor /FontName /Subset /Flags 4 /FontBBox [0 0 1000 1000] "
        b"/ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def packed_pdf_cut_short(path: Path, text: str) -> Path:
    """A PDF 1.5 file whose catalog, page tree and page sit in a flate-compressed object
    stream, as pdfTeX and most writers since 2010 save them, cut off after its last object:
    its cross-reference stream (which also holds its trailer) is missing."""
    import zlib
    packed = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
              b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 200] /Contents 5 0 R "
              b"/Resources << /Font << /F1 6 0 R >> >> >>"]
    places, body = [], b""
    for number, obj in enumerate(packed, start=1):
        places.append(b"%d %d" % (number, len(body)))
        body += obj + b"\n"
    head = b" ".join(places) + b"\n"
    stream = zlib.compress(head + body)
    content = b"BT /F1 12 Tf 20 150 Td (%s) Tj ET" % text.encode()
    out = b"%PDF-1.5\n"
    out += (b"4 0 obj\n<< /Type /ObjStm /N 3 /First %d /Length %d /Filter /FlateDecode >>\n"
            b"stream\n%s\nendstream\nendobj\n" % (len(head), len(stream), stream))
    out += b"5 0 obj\n<< /Length %d >>\nstream\n%s\nendstream\nendobj\n" % (len(content),
                                                                            content)
    out += b"6 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n"
    path.write_bytes(out)
    return path


def bomb_pdf(path: Path, unpacked: int, how: str = "flate") -> Path:
    """A one-page PDF whose content unpacks to `unpacked` bytes of spaces and then prints
    `hello` (a decompression bomb when `unpacked` is large). `how`: "flate" (/FlateDecode),
    "short" (the short name /Fl), "double" (deflated twice), "hex" (/ASCIIHexDecode in
    front), "runlength" (/RunLengthDecode in front), "checksum" (a damaged Adler-32),
    "xobject" (the bomb in a Form XObject the page draws with Do)."""
    import binascii
    import zlib
    text = b" " * unpacked + b"BT /F1 12 Tf 72 700 Td (hello) Tj ET"
    data, filters = zlib.compress(text, 9), b"/FlateDecode"
    if how == "short":
        filters = b"/Fl"
    elif how == "double":
        data, filters = zlib.compress(data, 9), b"[/FlateDecode /FlateDecode]"
    elif how == "hex":
        data, filters = binascii.hexlify(data) + b">", b"[/ASCIIHexDecode /FlateDecode]"
    elif how == "runlength":  # literal runs of up to 128 bytes, then the end-of-data mark
        data = b"".join(bytes([len(data[i:i + 128]) - 1]) + data[i:i + 128]
                        for i in range(0, len(data), 128)) + b"\x80"
        filters = b"[/RunLengthDecode /FlateDecode]"
    elif how == "checksum":  # the last byte of the Adler-32 flipped: a damaged stream
        data = data[:-1] + bytes([data[-1] ^ 0xFF])
    stream = b"<< /Length %d /Filter %s >>\nstream\n" % (len(data), filters) + data
    if how != "xobject":
        return raw_pdf(path, [
            b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>", stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])
    form = (b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font "
            b"<< /F1 5 0 R >> >> /Length %d /Filter /FlateDecode >>\nstream\n" % len(data)
            + data + b"\nendstream")
    return raw_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /XObject << /X1 6 0 R >> >> >>",
        b"<< /Length 8 >>\nstream\n/X1 Do\n\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", form])
