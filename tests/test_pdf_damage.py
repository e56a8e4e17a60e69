"""PDFs read with a loss: one cut short (a download that stopped) and one with glyphs in
fonts that map none to Unicode. The first was "not a valid PDF (No /Root object! - Is this
really a PDF?)" where a viewer opens it; the second lost its glyphs without a word (words
broken, the index silently poorer). Now the first is read, and each is one warning naming
the file — from worker processes too, whose own warnings nobody sees."""
from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from loader_files import mixed_font_pdf, packed_pdf_cut_short, pdf, raw_pdf
from ragkit.document_folder import load_folder
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.loaders import pdf as pdf_loader

RAGKIT = str(Path(sys.executable).parent / "ragkit")
PAGES = [["Refunds", "Refunds take seven days."], ["Parcels ship in two days."],
         ["Return within 21 days."]]
CUT = ("its end is missing (cut short?): read from the objects it holds, as a viewer "
       "rebuilds it; pages at its end may be missing")


def _cut(path: Path, size: int) -> Path:
    path.write_bytes(path.read_bytes()[:-size])
    return path


def _loaded(folder: Path, jobs: int) -> tuple[list, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        docs = list(load_folder(folder, jobs=jobs, progress=False))
    return docs, [str(w.message) for w in caught if issubclass(w.category, RagkitWarning)]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("size", [40, 200])
def test_a_pdf_cut_short_is_read_whole_with_one_warning(tmp_path, size, jobs):
    whole = pdf(tmp_path / "whole.pdf", PAGES, title="Shop rules")
    expected = pdf_loader.load(whole, "a.pdf")
    (tmp_path / "docs").mkdir()
    _cut(pdf(tmp_path / "docs" / "a.pdf", PAGES, title="Shop rules"), size)
    (tmp_path / "docs" / "padding.html").write_text("<main><p>Seven.</p></main>" + " " * 2**20)
    docs, said = _loaded(tmp_path / "docs", jobs)
    (got,) = [d for d in docs if d.id == "a.pdf"]
    # its title was in the trailer's /Info: the first line stands in, as for a PDF of none
    assert (got.text, got.metadata["pages"]) == (expected.text, expected.metadata["pages"])
    assert (expected.title, got.title) == ("Shop rules", "Refunds")
    assert said == [f"a.pdf: {CUT}"]


def test_the_cli_says_which_file_was_cut_short_and_indexes_it(tmp_path):
    (tmp_path / "docs").mkdir()
    _cut(pdf(tmp_path / "docs" / "a.pdf", PAGES), 40)
    done = subprocess.run([RAGKIT, "index", "docs", "--out", "ix", "--embedder", "none"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"a.pdf: {CUT}" in done.stderr
    assert done.stdout.startswith("indexed 1 document ")


def test_a_pdf_1_5_cut_off_at_its_cross_reference_stream_is_read(tmp_path):
    """Its trailer was its cross-reference stream, its catalog is in an object stream: the
    catalog is found in the stream, unpacked."""
    path = packed_pdf_cut_short(tmp_path / "a.pdf", "Refunds take seven days.")
    got = pdf_loader.load(path, "a.pdf")
    assert (got.text.strip(), got.metadata["load_note"]) == ("Refunds take seven days.", CUT)


def test_a_pdf_whose_catalog_was_cut_off_is_refused_as_cut_short(tmp_path):
    """Refused, in words a user can act on: it was "not a valid PDF (PSEOF: Unexpected EOF)"."""
    path = _cut(pdf(tmp_path / "a.pdf", PAGES), 2000)
    with pytest.raises(Exception, match=r"a.pdf: not a valid PDF: its end is missing \(cut "
                       r"short: a download or copy that did not finish\?\) with the part that "
                       r"says where its pages are; get the whole file again \(PSEOF"):
        pdf_loader.load(path, "a.pdf")


def test_glyphs_left_out_are_one_warning_past_one_in_a_hundred(tmp_path):
    (tmp_path / "docs").mkdir()
    text = "Refunds take seven days and parcels ship in two days from the store."  # 68
    mixed_font_pdf(tmp_path / "docs" / "some.pdf", text, 12)
    mixed_font_pdf(tmp_path / "docs" / "one.pdf", text * 2, 1)  # a manual's © sign
    docs, said = _loaded(tmp_path / "docs", 1)
    assert {d.id: d.text.strip() for d in docs} == {"one.pdf": text * 2, "some.pdf": text}
    assert all("load_note" not in d.metadata for d in docs)
    assert said == ["some.pdf: 12 of its 80 glyphs are in fonts with no Unicode map and were "
                    "left out (words may be broken)"]


def test_an_object_stream_bomb_in_a_pdf_cut_short_is_unpacked_only_so_far(tmp_path):
    """A hostile file: its only object stream unpacks to 300 MB, the catalog at the end.
    The catalog search unpacks 64 MB and gives up; the file is refused as a bomb, as before
    (pdfminer's own unpacking of the stream is bounded: `ragkit.loaders.pdf_streams`)."""
    import zlib
    packer = zlib.compressobj(9)
    stream = packer.compress(b"1 0\n") + b"".join(packer.compress(b" " * 2**20)
                                                  for _ in range(300))
    stream += packer.compress(b"<< /Type /Catalog /Pages 2 0 R >>") + packer.flush()
    path = tmp_path / "bomb.pdf"
    path.write_bytes(b"%%PDF-1.5\n4 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length %d "
                     b"/Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n"
                     % (len(stream), stream))
    from ragkit.loaders import pdf_repair
    assert pdf_repair._packed(path.read_bytes()) == []
    with pytest.raises(Exception, match=r"bomb.pdf: a stream unpacks to more than 128 MB "
                       r"\(a decompression bomb\?\)$"):
        pdf_loader.load(path, "bomb.pdf")


def test_the_words_type_catalog_on_a_page_are_not_taken_for_the_catalog(tmp_path):
    """A page printing "/Type /Catalog" (an uncompressed content stream, after the real
    catalog) was named the root of a file cut short: its pages came out in object order,
    the second first."""
    def page(contents: int) -> bytes:
        return (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 200] /Contents %d 0 R "
                b"/Resources << /Font << /F1 5 0 R >> >> >>" % contents)

    def text(line: bytes) -> bytes:
        content = b"BT /F1 12 Tf 20 150 Td (%s) Tj ET" % line
        return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    path = raw_pdf(tmp_path / "a.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [6 0 R 3 0 R] /Count 2 >>",  # page 1 is object 6
        page(4), text(b"Second page: parcels ship in two days."),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        page(7), text(b"First page: the PDF spec says /Type /Catalog names the root.")])
    expected = pdf_loader.load(path, "a.pdf")
    data = path.read_bytes()
    path.write_bytes(data[:data.index(b"xref")])  # its table and trailer cut off
    got = pdf_loader.load(path, "a.pdf")
    assert got.text.startswith("First page") and got.text == expected.text
    assert got.metadata["pages"] == expected.metadata["pages"]


def test_an_encrypted_pdf_cut_short_is_not_repaired(tmp_path):
    """A rebuilt trailer drops /Encrypt: the text was read as ciphertext ("no text layer",
    or "Non-Ascii85 digit found")."""
    path = _cut(pdf(tmp_path / "a.pdf", PAGES, password="pw"), 40)
    with pytest.raises(Exception, match=r"a.pdf: not a valid PDF: its end is missing .* "
                       r"\(PDFSyntaxError: No /Root"):
        pdf_loader.load(path, "a.pdf")


def test_a_megabyte_of_digits_is_refused_in_linear_time(tmp_path):
    """Unbounded digit runs in the object patterns backtracked: 80 KB of digits took 32 s of
    CPU, a megabyte about 80 minutes. Read in its own process, with a minute to spare."""
    path = tmp_path / "digits.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"1" * 2**20 + b"\nendobj\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from ragkit.loaders import pdf; pdf.load(Path(sys.argv[1]), 'x')",
                           str(path)], capture_output=True, text=True, timeout=60)
    assert "not a valid PDF" in done.stderr.splitlines()[-1]


_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %s /Resources %s >>"
_FONT = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
_TEXT = b"<< /Length 42 >>\nstream\nBT /F1 12 Tf 72 700 Td (Hello cycle) Tj ET\nendstream"


@pytest.mark.parametrize("where", ["contents", "resources", "kids", "self", "tail"])
def test_a_reference_that_leads_back_to_itself_is_refused_not_followed_for_ever(tmp_path,
                                                                                  where):
    """`6 0 obj 7 0 R`, `7 0 obj 6 0 R`: pdfminer's `resolve1` follows a reference while it is
    one, so a 632-byte file held `ragkit index` for ever, `--skip-bad` too."""
    contents, resources, kids = b"4 0 R", _FONT, b"[3 0 R]"
    if where == "contents":
        contents = b"5 0 R"
    elif where == "resources":
        resources = b"5 0 R"
    elif where == "kids":
        kids = b"5 0 R"
    elif where == "self":
        contents = b"7 0 R"
    else:  # 8 leads into the cycle of 5 and 6: the object reached twice is named
        contents = b"8 0 R"
    (tmp_path / "docs").mkdir()
    path = raw_pdf(tmp_path / "docs" / "cycle.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids %s /Count 1 >>" % kids,
        _PAGE % (contents, resources), _TEXT, b"6 0 R", b"5 0 R", b"7 0 R", b"5 0 R"])
    (tmp_path / "docs" / "note.md").write_text("# Note\n\nThe pump needs oil.\n")
    named = {"self": "7", "tail": "5"}.get(where, r"\d")
    with pytest.raises(RagkitError, match=rf"cycle\.pdf: not a valid PDF \(object {named} is a "
                                          r"reference that leads back to itself\)"):
        pdf_loader.load(path, "cycle.pdf")
    done = subprocess.run([RAGKIT, "index", "docs", "--out", "ix", "--skip-bad",
                           "--embedder", "none"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "cycle.pdf: not a valid PDF (object" in done.stderr
    assert done.stdout.startswith("indexed 1 document ")


def test_a_pdf_cut_before_its_page_contents_is_said_to_be_cut_short_not_a_scan(tmp_path):
    """Cut right after its page object, the file was "no text layer (scanned? ragkit does
    not OCR)": a scan is no part of it, its text was in the part cut off."""
    whole = raw_pdf(tmp_path / "whole.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        _PAGE % (b"4 0 R", _FONT), _TEXT]).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole[:whole.index(b"4 0 obj")])
    with pytest.raises(RagkitError) as refused:
        pdf_loader.load(cut, "cut.pdf")
    assert str(refused.value) == (f"{cut}: not a valid PDF: its end is missing (cut short: a "
                                  f"download or copy that did not finish?) and what is left "
                                  f"holds no text; get the whole file again")
    assert "Hello cycle" in pdf_loader.load(tmp_path / "whole.pdf", "whole.pdf").text
    # whole, its trailer damaged (repaired, as a cut file is): a scan, not a cut file
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(raw_pdf(tmp_path / "blank.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]).read_bytes()
        .replace(b"/Root 1 0 R", b""))
    with pytest.raises(RagkitError, match=r"damaged\.pdf: no text layer \(scanned\?"):
        pdf_loader.load(damaged, "damaged.pdf")
