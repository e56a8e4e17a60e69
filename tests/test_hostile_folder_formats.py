"""A file whose name says one format and whose bytes another — a PDF saved as .docx, a Word
file renamed .pdf — and Word XML that declares entities (a billion-laughs file): each is one
line that says what the file really is or what is wrong, not a parser's internals."""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from loader_files import docx, pdf
from ragkit.document_folder import load_folder
from ragkit.documents import RagkitError


def _refusal(folder: Path) -> str:
    with pytest.raises(RagkitError) as caught:
        load_folder(folder, progress=False)
    return str(caught.value)


def test_a_pdf_named_docx_says_it_is_a_pdf(tmp_path):
    pdf(tmp_path / "made.pdf", [["Spoons go in the left drawer."]])
    shutil.move(tmp_path / "made.pdf", tmp_path / "report.docx")
    assert _refusal(tmp_path) == (f"{tmp_path / 'report.docx'}: not a Word file (it is a PDF: "
                                  f"rename it .pdf)")


def test_a_word_file_named_pdf_says_it_is_a_zip_archive(tmp_path):
    docx(tmp_path / "made.docx", [("", "Forks go in the right drawer.")])
    shutil.move(tmp_path / "made.docx", tmp_path / "report.pdf")
    assert _refusal(tmp_path) == (f"{tmp_path / 'report.pdf'}: not a PDF (it is a zip archive: "
                                  f"a Word file named .pdf?)")


@pytest.mark.parametrize("hide", ["", "comment", "utf-16", "utf-32"])
def test_word_xml_declaring_entities_is_refused_in_one_plain_line(tmp_path, hide):
    """Also behind a 100 KB comment or in a UTF-16 part, which once got past a check that read
    64 KB of UTF-8 (the text around the entities then vanished without a word)."""
    source = docx(tmp_path / "source.docx", [("", "PLACEHOLDER")])
    declared = f' encoding="{hide.upper()}"' if hide.startswith("utf") else ""
    laughs = (f'<?xml version="1.0"{declared}?>\n'
              + ("<!--" + "x" * 100_000 + "-->" if hide == "comment" else "")
              + '<!DOCTYPE lolz [<!ENTITY lol "lol">'
              + "".join(f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">'
                        for i in range(1, 10)).replace("&lol0;", "&lol;") + "]>\n")
    with zipfile.ZipFile(source) as original, \
            zipfile.ZipFile(tmp_path / "laughs.docx", "w", zipfile.ZIP_DEFLATED) as out:
        for name in original.namelist():
            data = original.read(name)
            if name == "word/document.xml":
                body = data.decode().split("?>", 1)[1].replace("PLACEHOLDER", "&lol9;")
                data = (laughs + body).encode(hide if hide.startswith("utf") else "utf-8")
            out.writestr(name, data)
    source.unlink()
    assert _refusal(tmp_path) == (f"{tmp_path / 'laughs.docx'}: not a valid Word file (its XML "
                                  f"declares entities, which Word never writes: a "
                                  f"billion-laughs file?)")


def test_a_gzipped_or_binary_page_named_html_is_refused_not_indexed_as_garbage(tmp_path):
    """A page saved by curl without --compressed, and random bytes named .html, were decoded
    as Windows-1252 and indexed (332 chunks of noise), without a word."""
    import gzip
    import random
    page = b"<html><body><p>Refunds are accepted within 21 days.</p></body></html>"
    gz, noise = tmp_path / "gz", tmp_path / "noise"
    gz.mkdir()
    noise.mkdir()
    (gz / "page.html").write_bytes(gzip.compress(page))
    (noise / "r.html").write_bytes(random.Random(7).randbytes(30_000))
    assert _refusal(gz) == (f"{gz / 'page.html'}: gzip-compressed, not HTML (saved without "
                            f"decompressing? gunzip it first)")
    assert _refusal(noise) == f"{noise / 'r.html'}: looks binary, not HTML"
    (noise / "r.html").write_bytes(page.replace(b"days", "days at the caf\u00e9".encode("cp1252")))
    assert "caf\u00e9" in load_folder(noise, progress=False)[0].text  # cp1252 text is read
    # a page labelled ISO-8859-1 whose dialogue is Windows-1252 (as browsers read it): its
    # quotes were C1 control characters, enough to be taken for binary data
    line = "<p>\u201cAre you coming?\u201d she asked \u2014 it\u2019s late.</p>\n" * 30
    for label, stray in (("iso-8859-1", b""), ("iso-ir-100", b""), ("csisolatin1", b""),
                         ("iso-8859-1", b"\x81")):  # one byte cp1252 leaves undefined
        (noise / "r.html").write_bytes(b'<meta charset="%s">' % label.encode()
                                       + line.encode("cp1252") + stray)
        assert load_folder(noise, progress=False)[0].text.startswith(
            "\u201cAre you coming?\u201d she asked \u2014 it\u2019s late."), label


def test_a_megabyte_title_labels_each_chunk_in_200_characters(tmp_path):
    """A 1.2 MB <title> was copied into every chunk's metadata and context: a 230 MB index,
    and a megabyte printed by each ragkit ask."""
    import json
    import os
    import subprocess
    import sys
    title = "Returns " * 20_000
    body = "".join(f"<h2>{'Part ' * 5_000}{i}</h2><p>Paragraph {i} of the returns policy, "
                   f"which says how refunds work. {'More words. ' * 40}</p>" for i in range(30))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.html").write_text(f"<html><head><title>{title}</title></head>"
                                              f"<body>{body}</body></html>")
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index",
                           str(tmp_path / "docs"), "--out", str(tmp_path / "idx"), "--embedder",
                           "none"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in (tmp_path / "idx" / "chunks.jsonl").read_text().splitlines()]
    assert len(rows) > 5
    for row in rows:
        assert row["metadata"]["title"] == title[:199] + "…"
        assert all(len(s) <= 200 for s in row["metadata"]["section"])
        assert len(row["context"]) < 1_000


def test_long_numbered_lists_keep_their_numbers(tmp_path):
    """Each item's number was counted from its list's start, each time: a 40,000-item <ol>
    took four minutes, 60,000 Word list paragraphs with their own lists 98 s. Now once per
    list; the numbers are the same (nested lists start again under each item)."""
    items = "".join(f"<li>item {i}</li>" for i in range(1, 3001))
    (tmp_path / "p.html").write_text(f"<body><ol>{items}</ol><ol><li>again</li>"
                                     f"<li>then<ol><li>inner</li></ol></li><li>last</li></ol>"
                                     f"</body>")
    lines = load_folder(tmp_path, progress=False)[0].text.splitlines()
    numbered = [line for line in lines if line.strip()]
    assert numbered[0] == "1. item 1" and numbered[2999] == "3000. item 3000"
    assert numbered[3000:] == ["1. again", "2. then inner", "3. last"]


def _pdf_of(objects: list[bytes]) -> bytes:
    """A PDF file of `objects` (object 1 the catalog), with its cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return bytes(out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
                 % (len(objects) + 1, xref))


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    import zlib
    packed = zlib.compress(data)
    return (b"<< /Length %d /Filter /FlateDecode%s >>\nstream\n" % (len(packed), extra)
            + packed + b"\nendstream")


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def test_a_pdf_drawing_forms_inside_forms_is_refused_in_seconds(tmp_path):
    """Each form drew the next one 4 times: a 2.9 KB file 11 levels deep ran 224 s in 2.9 GB
    (each level 4× more), and was indexed."""
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            b"/F1 3 0 R >> /XObject << /X 6 0 R >> >> /Contents 5 0 R >>")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               FONT, page, _stream(b"BT /F1 12 Tf 72 400 Td (Forms inside forms) Tj ET /X Do")]
    for level in range(12):
        last = level == 11
        objects.append(_stream(b"0 0 1 1 re f" if last else b"/X Do " * 4,
                               b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources "
                               b"<< " + (b"" if last else b"/XObject << /X %d 0 R >>" % (7 + level))
                               + b" >>"))
    (tmp_path / "fan.pdf").write_bytes(_pdf_of(objects))
    assert _refusal(tmp_path) == (f"{tmp_path / 'fan.pdf'}: page 1 runs content streams past "
                                  f"a bound (over 100,000 streams, 256 MB, or 16 MB run again: "
                                  f"pages sharing one stream or forms drawn over and over, a "
                                  f"hostile file?)")


def _drawing_pdf(path: Path, pages: list[bytes]) -> Path:
    """A PDF whose pages each print a sentence, then draw what `pages` holds for it."""
    kids = b" ".join(b"%d 0 R" % (4 + 2 * n) for n in range(len(pages)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)), FONT]
    for n, drawing in enumerate(pages):
        objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << "
                    b"/Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * n),
                    _stream(b"BT /F1 12 Tf 72 720 Td (Page %d: kestrel refunds within seven "
                            b"days.) Tj ET\n" % (n + 1) + drawing)]
    path.write_bytes(_pdf_of(objects))
    return path


@pytest.mark.parametrize("drawing", [b"0 0 1 1 re f\n", b"BI /W 1 /H 1 /BPC 8 /CS /G ID x EI\n"])
def test_a_page_drawing_shapes_by_the_million_is_read_as_far_as_its_bound(tmp_path, monkeypatch,
                                                                          drawing):
    """Paths and images were bounded by nothing but the file's 256 MB of content: a 51 KB
    page of 2 million rectangles was indexed after 85 s in 3.7 GB (20 million would not fit
    in memory), 300,000 inline images took 580 MB. They are counted, never laid out; a page
    past the bound is read that far, with a warning, and the file past its own is refused —
    a first version refused the file for one page, a paper for its heat map. Here at a
    hundredth of the scale: 2,000 shapes a page, 5,000 a file."""
    import ragkit.loaders.pdf_layout as layout
    monkeypatch.setattr(layout, "MAX_PAGE_SHAPES", 2_000)
    monkeypatch.setattr(layout, "MAX_FILE_SHAPES", 5_000)
    _drawing_pdf(tmp_path / "drawn.pdf", [drawing * 2_100, b"", drawing * 1_900])
    from ragkit.documents import RagkitWarning
    with pytest.warns(RagkitWarning) as said:
        (doc,) = load_folder(tmp_path, progress=False)
    assert doc.text == "\n\n".join(f"Page {n}: kestrel refunds within seven days."
                                   for n in (1, 2, 3))
    assert [str(w.message) for w in said] == [
        "drawn.pdf: page 1: more than 2,000 paths or images drawn, read only that far (text "
        "drawn after them is missing)"]
    _drawing_pdf(tmp_path / "drawn.pdf", [drawing * 1_900] * 3)
    assert _refusal(tmp_path) == (f"{tmp_path / 'drawn.pdf'}: draws more than 5,000 paths or "
                                  f"images by page 3 (a hostile file?)")


def test_a_path_never_painted_is_refused_past_its_bound(tmp_path, monkeypatch):
    """Path segments pile up until a path is painted: 20 million rectangles with no `f`
    would be held as one path. Here at a hundredth of the scale: 10,000 segments."""
    import ragkit.loaders.pdf_layout as layout
    monkeypatch.setattr(layout, "MAX_PATH_SEGMENTS", 10_000)
    for name, drawing in (("re.pdf", b"0 0 1 1 re\n" * 2_100),
                          ("h.pdf", b"0 0 m\n" + b"h\n" * 10_500)):
        (tmp_path / "drawn.pdf").unlink(missing_ok=True)
        _drawing_pdf(tmp_path / "drawn.pdf", [drawing])
        assert _refusal(tmp_path) == (f"{tmp_path / 'drawn.pdf'}: page 1 builds a path of "
                                      f"more than 10,000 segments (a hostile file?)"), name


def test_pages_sharing_one_huge_stream_are_refused_once_the_file_has_run_too_much(
        tmp_path, monkeypatch):
    """The stream is decoded once but run by every page: 10 pages of one 4 MB stream of
    no-op operators (a 6 KB file) took 158 s. Here at a thousandth of the scale: a bound of
    16 KB run again, a 4 KB stream."""
    import ragkit.loaders.pdf_layout as layout
    monkeypatch.setattr(layout, "MAX_REPEATED_BYTES", 16 * 2**10)
    pages = 20
    content = b"BT /F1 12 Tf 72 400 Td (Shared stream) Tj ET\n" + b"q Q " * 2**10
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>"
               % (b" ".join(b"%d 0 R" % (5 + i) for i in range(pages)), pages),
               FONT, _stream(content)]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
                b"<< /F1 3 0 R >> >> /Contents 4 0 R >>"] * pages
    (tmp_path / "shared.pdf").write_bytes(_pdf_of(objects))
    assert _refusal(tmp_path).startswith(f"{tmp_path / 'shared.pdf'}: page 5 runs content "
                                         f"streams past a bound")


def test_a_pdf_without_pages_or_with_only_a_repeated_top_line_is_told_apart_from_a_scan(
        tmp_path):
    """Both were "no text layer (scanned? …)": a file of 0 pages, and 3 pages whose only text
    is one line in the top band, all of it removed as a running header."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "e.pdf").write_bytes(_pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]))
    assert _refusal(tmp_path / "empty") == f"{tmp_path / 'empty' / 'e.pdf'}: has no pages"
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            b"/F1 3 0 R >> >> /Contents 4 0 R >>")
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / "notice.pdf").write_bytes(_pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [5 0 R 6 0 R 7 0 R] /Count 3 >>", FONT,
        _stream(b"BT /F1 12 Tf 72 740 Td (The depot closes at noon on Fridays.) Tj ET"),
        page, page, page]))
    doc = load_folder(tmp_path / "top", progress=False)[0]
    assert "The depot closes at noon on Fridays." in doc.text


def test_pages_laid_out_again_turned_are_not_counted_as_a_stream_run_again(tmp_path,
                                                                         monkeypatch):
    """A landscape PDF (/Rotate 90) is laid out a second time, turned; that second run of
    each page's own stream counted toward the 16 MB run-again bound, and a 230-page report
    of charts was refused as hostile. Here at a small scale: a 1 KB bound."""
    import ragkit.loaders.pdf_layout as layout
    monkeypatch.setattr(layout, "MAX_REPEATED_BYTES", 2**10)
    monkeypatch.setattr(layout, "MAX_FILE_CHARS", 8_000)  # drawn once: ~5,400; turned: twice
    pages = 4
    text = b"".join(b"BT /F1 11 Tf 72 %d Td (Line %d of the quarterly landscape report.) Tj ET\n"
                    % (700 - 14 * i, i) for i in range(30))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>"
               % (b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages)), pages), FONT]
    for i in range(pages):
        objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate 90 "
                    b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i),
                    _stream(text)]
    (tmp_path / "landscape.pdf").write_bytes(_pdf_of(objects))
    doc = load_folder(tmp_path, progress=False)[0]
    assert "Line 29 of the quarterly landscape report." in doc.text
