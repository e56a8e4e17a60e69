"""Small PDF, HTML and Word files for the loader tests, good and bad, made on the spot
(reportlab and python-docx are dev dependencies)."""
from __future__ import annotations

import zipfile
from pathlib import Path


def pdf(path: Path, pages: list[list[str]], outline: list[tuple[int, str, int]] = (),
        title: str = "", password: str | None = None) -> Path:
    """A PDF whose page n prints the lines `pages[n]` (one per line, top down); `outline`
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
            pdf_canvas.drawString(72, y, line)
            y -= 40  # a paragraph each: far enough apart for separate text boxes
        pdf_canvas.showPage()
    pdf_canvas.save()
    return path


def scanned_pdf(path: Path) -> Path:
    """A PDF with drawings and no text layer, as a scanner's image-only page is."""
    from reportlab.pdfgen import canvas
    pdf_canvas = canvas.Canvas(str(path), invariant=1)
    for _ in range(2):
        pdf_canvas.rect(72, 400, 300, 200, fill=1)
        pdf_canvas.showPage()
    pdf_canvas.save()
    return path


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
