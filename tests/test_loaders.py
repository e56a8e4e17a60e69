"""PDF, HTML and Word files in a folder: what each loader reads (headings as the heading
path, pages, titles), the one line each kind of bad file gets, --skip-bad, and page
citations — through `load_folder` and through the installed `ragkit` command."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from loader_files import (bomb_pdf, docx, pdf, raw_pdf, scanned_pdf, unmapped_font_pdf,
                          zip_bomb_docx)
from ragkit import document_folder
from ragkit.chunking import chunk_documents
from ragkit.document_folder import load_folder
from ragkit.folder_summary import file_summary
from ragkit.documents import RagkitError
from ragkit.loaders import pdf as pdf_loader
from ragkit.loaders import pdf_streams
from ragkit.loaders.pages import chunk_pages, page_at

RAGKIT = str(Path(sys.executable).parent / "ragkit")
PAGES = [["Refunds", "Refunds take seven days.", "Shipping"],
         ["Parcels ship in two days.", "Returns", "Return within 21 days."]]
OUTLINE = [(1, "Refunds", 0), (2, "Shipping", 0), (2, "Returns", 1)]


def _run(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAGKIT_HOME": str(home)}
    return subprocess.run([RAGKIT, *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_pdf_outline_is_the_heading_path_and_pages_map_the_text(tmp_path):
    pdf(tmp_path / "rules.pdf", PAGES, OUTLINE, title="Shop rules")
    (doc,) = load_folder(tmp_path)
    assert doc.text == ("# Refunds\n\nRefunds take seven days.\n\n## Shipping\n\n"
                        "Parcels ship in two days.\n\n## Returns\n\nReturn within 21 days.")
    assert (doc.id, doc.title) == ("rules.pdf", "Shop rules")
    assert doc.metadata["pages"] == [[1, 0], [2, 50]]
    assert doc.text[50:].startswith("Parcels")
    (chunk,) = chunk_documents([doc])
    assert chunk.metadata["pages"] == [[1, 0], [2, 50]]


def test_pdf_without_outline_keeps_text_and_pages_no_headings(tmp_path):
    pdf(tmp_path / "plain.pdf", PAGES)
    (doc,) = load_folder(tmp_path)
    assert "#" not in doc.text and doc.title == "Refunds"  # no Title field: its first box
    assert [p for p, _ in doc.metadata["pages"]] == [1, 2]


def test_pdf_joins_words_hyphenated_across_lines(tmp_path):
    pdf(tmp_path / "h.pdf", [["Data manip-\nulation takes well-\nKnown tools."]])
    (doc,) = load_folder(tmp_path)
    assert doc.text == "Data manipulation takes well- Known tools."


def test_a_compound_broken_at_a_line_end_keeps_its_hyphen_as_the_document_prints_it(tmp_path):
    """LibreOffice and Word do not hyphenate: a line-end hyphen there is the compound's own,
    and joining it made "branchprediction", which matched neither word in a search. The
    rest of the document says which a break is; a break it says nothing about goes the way
    its other breaks went."""
    pdf(tmp_path / "lo.pdf", [[
        "The branch-\nprediction unit and the data manip-\nulation unit.",
        "A cache-\nfriendly loop and a well-\nknown trick.",
        "Here branch-prediction fails; manipulation costs; a cache-friendly layout helps."]])
    (doc,) = load_folder(tmp_path)
    assert doc.text.split("\n\n")[:2] == [
        "The branch-prediction unit and the data manipulation unit.",
        "A cache-friendly loop and a well-known trick."]  # "well-known": the habit (2 to 1)


def test_with_no_habit_a_break_is_kept_only_between_two_words_the_document_prints(tmp_path):
    """A TeX document's breaks are words it hyphenated; "pro-cessing" is nowhere else in it."""
    pdf(tmp_path / "tex.pdf", [["A public-\nstandard format needs pro-\ncessing.",
                                "The public may read the standard."]])
    (doc,) = load_folder(tmp_path)
    assert doc.text.split("\n\n")[0] == "A public-standard format needs processing."


def test_page_maps():
    pages = [[1, 0], [2, 100], [3, 250]]
    assert [page_at(pages, o) for o in (0, 99, 100, 249, 250, 9999)] == [1, 1, 2, 2, 3, 3]
    assert chunk_pages(pages, 90, 260) == [[1, 0], [2, 10], [3, 160]]
    assert chunk_pages(pages, 100, 200) == [[2, 0]]
    assert page_at([], 5) is None


def test_html_main_content_headings_and_title(tmp_path):
    (tmp_path / "page.html").write_text(
        "<html><head><title>Refunds | Shop</title><style>p {}</style></head><body>"
        "<header>Shop logo</header><nav><a href='/'>Home</a></nav><main>"
        "<h1>Refunds</h1><p>Refunds take <b>seven</b> days.</p><h3>Exceptions</h3>"
        "<ul><li>Gift cards</li><li>Plants</li></ul>"
        "<table><tr><th>Item</th><th>Days</th></tr><tr><td>Sofa</td><td>30</td></tr></table>"
        "<pre>\n# install\npip install shop\n\n  shop --refund\n</pre>"
        "</main><aside>Related</aside><footer>Copyright</footer><script>track()</script>"
        "</body></html>", encoding="utf-8")
    (doc,) = load_folder(tmp_path)
    assert doc.text == ("# Refunds\n\nRefunds take seven days.\n\n### Exceptions\n\n"
                        "- Gift cards\n\n- Plants\n\n| Item | Days |\n| --- | --- |\n| Sofa | 30 |\n\n"
                        "    # install\n    pip install shop\n\n      shop --refund")
    assert doc.title == "Refunds | Shop" and doc.metadata["format"] == "html"
    assert [c.metadata["section"] for c in chunk_documents([doc])] == [["Refunds"]]


def test_html_without_main_drops_header_and_footer(tmp_path):
    (tmp_path / "p.htm").write_text("<body><header>Menu</header><div>Loose text<p>Para"
                                    "</p></div><footer>Foot</footer></body>")
    (doc,) = load_folder(tmp_path)
    assert doc.text == "Loose text\n\nPara" and doc.title == "p.htm"


def test_docx_heading_styles_lists_and_title(tmp_path):
    docx(tmp_path / "policy.docx", [("Heading 1", "Refunds"), ("", "Seven days."),
                                    ("Heading 2", "Exceptions"), ("List Bullet", "Plants"),
                                    ("List Number", "Ask"), ("List Number", "Send")])
    (doc,) = load_folder(tmp_path)
    assert doc.text == ("# Refunds\n\nSeven days.\n\n## Exceptions\n\n- Plants\n\n"
                        "1. Ask\n\n2. Send")
    assert doc.title == "Refunds" and doc.metadata == {"path": "policy.docx",
                                                       "format": "docx", "title": "Refunds"}


def test_docx_styles_are_looked_up_once_and_a_flood_of_paragraphs_is_refused(tmp_path,
                                                                             monkeypatch):
    """python-docx scans every style for each paragraph: with many paragraphs (or 20,000
    styles in a 143 KB file) that took minutes. Each style is now measured once."""
    from ragkit.loaders import docx as docx_loader
    measured = []
    real = docx_loader._style_level
    monkeypatch.setattr(docx_loader, "_style_level",
                        lambda style: measured.append(style.name) or real(style))
    docx(tmp_path / "long.docx", [("Heading 1", "Refunds")] + [("", f"Line {i}.")
                                                               for i in range(300)])
    (doc,) = load_folder(tmp_path)
    assert doc.text.startswith("# Refunds\n\nLine 0.\n\nLine 1.") and "Line 299." in doc.text
    assert sorted(measured) == ["Heading 1", "Normal"]  # not 301 lookups
    monkeypatch.setattr(docx_loader, "MAX_BLOCKS", 100)
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'long.docx'}: more than 100 paragraphs and "
                                 f"tables (a hostile file?)")


def _corrupt_pdf(path: Path) -> None:
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage\n%%EOF")


BAD = {
    "scan.pdf": (scanned_pdf, "no text layer (scanned? ragkit does not OCR)"),
    # it has a text layer: "scanned?" sent the user to OCR a file that only needs re-export
    "cid.pdf": (unmapped_font_pdf, "its text is in fonts that map no glyph to Unicode "
                "(pdfminer reads 3 glyphs as cid codes only); re-export it with "
                "Unicode-mapped fonts, or OCR it"),
    "locked.pdf": (lambda p: pdf(p, [["secret"]], password="pw"),
                   "encrypted (opening it needs a password)"),
    "broken.pdf": (_corrupt_pdf, "not a valid PDF (PSEOF: Unexpected EOF)"),
    "nested.pdf": (lambda p: raw_pdf(p, [
        b"<< /Type /Catalog /Pages 2 0 R /X " + b"[" * 200_000 + b"]" * 200_000 + b" >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]),
        "no text layer (scanned? ragkit does not OCR)"),  # read, bounded, without a crash
    "empty.html": (lambda p: p.write_text("<html><body><nav>Home</nav><script>x()</script>"
                                          "</body></html>"), "no body text"),
    "deep.html": (lambda p: p.write_text("<div>" * 5000 + "x" + "</div>" * 5000),
                  "elements nested more than 1,000 deep (a hostile page?)"),
    "letter.docx": (lambda p: p.write_bytes(b"not a zip at all"),
                    "not a valid Word file (not a zip archive: File is not a zip file)"),
    "bomb.docx": (lambda p: zip_bomb_docx(p, 520 * 2**20),
                  "would unpack to 520 MB, over the 512 MB limit (a zip bomb?)"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_is_one_line_naming_it(tmp_path, name):
    make, reason = BAD[name]
    make(tmp_path / name)
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path)
    assert str(caught.value) == f"{tmp_path / name}: {reason}"


@pytest.mark.parametrize("how", ["flate", "short", "double", "hex", "runlength", "checksum",
                                 "xobject"])
def test_a_pdf_decompression_bomb_is_refused_before_it_unpacks(tmp_path, monkeypatch, how):
    """Every stream pdfminer decodes is measured, through every filter: the check once read
    only a page's own first /FlateDecode, so /Fl, a second layer, a hex layer in front or a
    Form XObject unpacked a 2 KB file to a gigabyte in memory."""
    monkeypatch.setattr(pdf_streams, "MAX_STREAM", 2**20)
    (doc,) = load_folder(bomb_pdf(tmp_path / "small.pdf", 2**20 - 100, how).parent)
    assert doc.text == "hello"  # a page drawn by a Form XObject is read too
    bomb_pdf(tmp_path / "small.pdf", 2**20 + 1, how)
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'small.pdf'}: page 1: a stream unpacks to more "
                                 f"than 1 MB (a decompression bomb?)")


def test_a_pdf_whose_streams_together_pass_the_file_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(pdf_streams, "MAX_FILE", 2**20)
    bomb_pdf(tmp_path / "small.pdf", 2**20 + 1)
    with pytest.raises(RagkitError, match=r"small.pdf: page 1: the file's streams unpack to "
                                          r"more than 1 MB together"):
        load_folder(tmp_path)


def test_the_stream_check_applies_only_inside_its_own_thread(tmp_path, monkeypatch):
    """The check once patched pdfminer for the whole process while a PDF was read: two
    threads at once could leave it installed for good, refusing everyone's streams."""
    import threading
    from pdfminer.high_level import extract_text
    monkeypatch.setattr(pdf_streams, "MAX_STREAM", 2**20)
    big = bomb_pdf(tmp_path / "big.pdf", 2**20 + 1)
    started, release, seen = threading.Event(), threading.Event(), []

    def other_thread():  # reads a large stream while the main thread is inside the check
        started.wait()
        seen.append(extract_text(str(big)).strip())
        release.set()
    worker = threading.Thread(target=other_thread)
    worker.start()
    with pdf_streams.bounded_streams(big):
        started.set()
        release.wait(60)
    worker.join()
    assert seen == ["hello"]
    assert extract_text(str(big)).strip() == "hello"  # and after it, as pdfminer reads it


def test_skip_bad_leaves_bad_files_out_and_summarises(tmp_path):
    pdf(tmp_path / "rules.pdf", PAGES, OUTLINE)
    scanned_pdf(tmp_path / "scan.pdf")
    (tmp_path / "notes.md").write_text("# Notes\n\nHello.\n")
    with pytest.warns(UserWarning, match="skipped .*scan.pdf: no text layer"):
        docs = load_folder(tmp_path, skip_bad=True)
    assert [d.id for d in docs] == ["notes.md", "rules.pdf"]
    assert [(s.path, s.reason.split(": ", 1)[1]) for s in docs.skipped] == [
        ("scan.pdf", "no text layer (scanned? ragkit does not OCR)")]
    rows = file_summary(docs)
    assert [(r["file"], r["format"], r["pages"], r["headings"], r["skipped"] != "")
            for r in rows] == [("notes.md", "md", None, 1, False),
                               ("rules.pdf", "pdf", 2, 3, False),
                               ("scan.pdf", "pdf", None, 0, True)]
    assert rows[1]["chars"] == len(docs[1].text)


def test_files_of_other_types_are_named_not_silently_left_out(tmp_path):
    """A folder's .tex, .org, .csv ... files went without a word; .markdown and .text were among
    them. One file of another type given alone read as "malformed JSON"."""
    from ragkit.document_folder import readable_types
    folder = tmp_path / "docs"
    folder.mkdir()
    for suffix in ("md", "markdown", "text", "tex", "org", "csv", "tex2"):
        (folder / f"f.{suffix}").write_text(f"Some words about {suffix}.\n")
    (folder / "paper.tex").write_text("\\section{Intro}\nRetrieval.\n")
    docs = load_folder(folder)
    assert [d.id for d in docs] == ["f.markdown", "f.md", "f.text"]
    assert docs.unread == ["f.csv", "f.org", "f.tex", "f.tex2", "paper.tex"]
    unread = "not a type of file ragkit reads"
    assert [(r["file"], r["skipped"]) for r in file_summary(docs)] == [
        ("f.csv", unread), ("f.markdown", ""), ("f.md", ""), ("f.org", unread), ("f.tex", unread),
        ("f.tex2", unread), ("f.text", ""), ("paper.tex", unread)]
    ragkit = str(Path(sys.executable).parent / "ragkit")
    done = subprocess.run([ragkit, "index", str(folder), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"indexed 3 documents as 3 chunks into {tmp_path / 'idx'}\n"
    assert done.stderr.splitlines()[-1] == (
        f"left out 5 files of types ragkit does not read: .tex 2, .csv 1, .org 1, .tex2 1 "
        f"(it reads {readable_types()})")
    alone = subprocess.run([ragkit, "index", str(folder / "paper.tex"), "--out",
                            str(tmp_path / "x"), "--embedder", "none"],
                           capture_output=True, text=True)
    assert one_error_line(alone) == (
        f"ragkit: error: {folder / 'paper.tex'}: not a type of file ragkit reads "
        f"({readable_types().replace('.json ', '')}), nor documents JSONL (one JSON object per "
        f"line)")  # a .json file alone is documents JSONL, not a text document
    assert not (tmp_path / "x").exists()
    only = tmp_path / "only"
    only.mkdir()
    (only / "paper.tex").write_text("x\n")
    with pytest.raises(RagkitError, match=r"only: no documents; left out 1 file of a type "
                                          r"ragkit does not read: \.tex 1 \(it reads "):
        load_folder(only)


def test_a_slow_load_shows_a_progress_bar(tmp_path, monkeypatch, capsys):
    pdf(tmp_path / "rules.pdf", PAGES, OUTLINE)
    monkeypatch.setattr(document_folder, "PROGRESS_DELAY", 0)
    load_folder(tmp_path)
    assert "loading" in capsys.readouterr().err
    load_folder(tmp_path, progress=False)
    assert capsys.readouterr().err == ""


def test_cli_bad_pdf_exits_2_and_writes_nothing(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    pdf(folder / "rules.pdf", PAGES, OUTLINE)
    pdf(folder / "locked.pdf", [["secret"]], password="pw")
    done = _run("index", str(folder), "--out", str(tmp_path / "idx"), "--embedder", "none",
                home=tmp_path / "home")
    assert one_error_line(done) == (f"ragkit: error: {folder / 'locked.pdf'}: encrypted "
                                    f"(opening it needs a password)")
    assert not (tmp_path / "idx").exists()


def test_cli_skip_bad_indexes_the_rest_lists_the_skipped_and_cites_pages(tmp_path):
    folder, index = tmp_path / "docs", tmp_path / "idx"
    folder.mkdir()
    pdf(folder / "rules.pdf", PAGES, OUTLINE, title="Shop rules")
    scanned_pdf(folder / "scan.pdf")
    (folder / "blank.html").write_text("<body><nav>Home</nav></body>")
    done = _run("index", str(folder), "--out", str(index), "--embedder", "none",
                "--skip-bad", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("indexed 1 document as 1 chunk into " + str(index))
    tail = done.stderr.strip().splitlines()[-3:]
    assert tail == ["skipped 2 bad files:", f"  {folder / 'blank.html'}: no body text",
                    f"  {folder / 'scan.pdf'}: no text layer (scanned? ragkit does not OCR)"]
    # another process answers from the index; the quoted sentence is on page 2
    asked = _run("ask", "--index", str(index), "When do parcels ship?",
                 home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    assert "[1] rules.pdf#0 — Shop rules / Refunds > Shipping, p. 2" in asked.stdout.splitlines()


def test_search_never_imports_the_format_libraries(tmp_path):
    folder, index = tmp_path / "docs", tmp_path / "idx"
    folder.mkdir()
    pdf(folder / "rules.pdf", PAGES, OUTLINE)
    assert _run("index", str(folder), "--out", str(index), "--embedder", "none",
                home=tmp_path / "home").returncode == 0
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "parcels"}\n')
    code = ("import sys; from ragkit.cli import main; "
            f"main(['search', {str(index)!r}, '--queries', {str(tmp_path / 'q.jsonl')!r}, "
            f"'--out', {str(tmp_path / 'run.txt')!r}, '--mode', 'bm25']); "
            "print(sorted(m for m in ('pdfminer', 'selectolax', 'docx') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "rules.pdf" in (tmp_path / "run.txt").read_text()


def test_cli_indexes_one_pdf_file_given_alone(tmp_path):
    pdf(tmp_path / "rules.pdf", PAGES, OUTLINE, title="Shop rules")
    done = _run("index", str(tmp_path / "rules.pdf"), "--out", str(tmp_path / "idx"),
                "--embedder", "none", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"indexed 1 document as 1 chunk into {tmp_path / 'idx'}")


def test_cli_indexes_one_markdown_or_source_file_given_alone(tmp_path):
    # a text file given alone is a document, as in a folder -- not a documents JSONL file
    (tmp_path / "notes.md").write_text("# Cache\n\nReplies stay cached for 30 days.\n")
    (tmp_path / "tool.py").write_text('def ttl():\n    """Days a reply stays."""\n    return 30\n')
    for name in ("notes.md", "tool.py"):
        out = tmp_path / f"idx-{name}"
        done = _run("index", str(tmp_path / name), "--out", str(out), "--embedder", "none",
                    home=tmp_path / "home")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith(f"indexed 1 document as 1 chunk into {out}")
    asked = _run("ask", "--index", str(tmp_path / "idx-notes.md"), "--k", "1",
                 "For how many days do replies stay cached?", home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    assert "[1] notes.md" in asked.stdout


def test_pdf_box_text_drops_unmapped_glyph_marks():
    # pdfminer writes "(cid:13)" for a glyph with no Unicode mapping (seen in a GNU manual)
    assert pdf_loader._clean("Copyright c(cid:13) 2001–2022 Free\nSoftware") == \
        "Copyright c 2001–2022 Free Software"


def test_worker_processes_load_the_same_documents_and_errors(tmp_path):
    pdf(tmp_path / "a.pdf", PAGES, OUTLINE, title="Shop rules")
    pdf(tmp_path / "b.pdf", PAGES)
    (tmp_path / "c.html").write_text("<main><h1>Refunds</h1><p>Seven days.</p></main>")
    (tmp_path / "d.md").write_text("# Notes\n\nHello.\n")
    one = load_folder(tmp_path, jobs=1)
    two = load_folder(tmp_path, jobs=2)
    assert two == one and [d.metadata for d in two] == [d.metadata for d in one]
    pdf(tmp_path / "c0.pdf", [["secret"]], password="pw")
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path, jobs=2)
    assert str(caught.value) == f"{tmp_path / 'c0.pdf'}: encrypted (opening it needs a password)"
    with pytest.warns(UserWarning):
        skipping = load_folder(tmp_path, skip_bad=True, jobs=2)
    assert skipping == one and [s.path for s in skipping.skipped] == ["c0.pdf"]


def test_a_worker_that_dies_is_one_line_naming_its_file(tmp_path, monkeypatch):
    class Broken:
        def result(self):
            from concurrent.futures.process import BrokenProcessPool
            raise BrokenProcessPool("a process in the pool was terminated abruptly")
    monkeypatch.setattr("ragkit.jobs.interrupted", lambda grace=0.2: False)
    with pytest.raises(RagkitError) as caught:
        document_folder._result(Broken(), tmp_path / "huge.pdf")
    # a script loading a folder without the `__main__` guard kills its spawned workers too
    assert str(caught.value) == (f"{tmp_path / 'huge.pdf'}: the worker process reading it "
                                 f"died (out of memory? or a script without `if __name__ == "
                                 f"\"__main__\":`)")


def test_the_example_chunk_is_a_pdfs_when_there_is_one_and_any_folder_has_one():
    from ragkit import example_chunk
    from ragkit.documents import Chunk
    md = Chunk("notes.md#0", "notes.md", "Hello.", context="Document: Notes.")
    bare = Chunk("a.txt#0", "a.txt", "Plain.")
    pdf_ = Chunk("Rules.PDF#1", "Rules.PDF", "Refunds.", context="Document: Rules.")
    assert example_chunk([bare, md, pdf_]) is pdf_
    assert example_chunk([bare, md]) is md  # no PDF: the first chunk with a context
    assert example_chunk([bare]) is bare
    with pytest.raises(RagkitError, match="no chunks"):
        example_chunk([])


def test_a_fax_encoded_content_stream_is_not_decoded(tmp_path):
    """pdfminer's CCITT decoder is pure Python: a 1 KB stream ran for minutes. A fax image
    holds no text, so it is never decoded (the page has no text layer)."""
    from loader_files import raw_pdf
    data = b"\xff" * 100
    raw_pdf(tmp_path / "fax.pdf", [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns 80000 >> >>"
        b"\nstream\n" % len(data) + data + b"\nendstream"])
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'fax.pdf'}: no text layer (scanned? ragkit "
                                 f"does not OCR)")


def test_a_chunk_is_labelled_by_its_id_and_the_pages_it_spans_as_a_citation_names_them(
        tmp_path):
    """Notebook 08 printed a PDF chunk's page map as it is stored, "(pages [[1, 0]])"; the
    label names the pages its text spans, "p. 1", "pp. 1–2", as a citation does."""
    from ragkit import chunk_documents, chunk_label, load_folder
    from ragkit.chunking import ChunkerConfig
    words = " ".join(f"word{i}" for i in range(12))
    pdf(tmp_path / "guide.pdf", [[f"First page {words}."] * 3, [f"Second page {words}."] * 3])
    (tmp_path / "notes.md").write_text("# Notes\n\nNo pages here.\n")
    documents = load_folder(tmp_path)
    one = chunk_documents(documents, ChunkerConfig(size=512, overlap=0))
    labels = [chunk_label(c) for c in one]
    assert labels == ["guide.pdf#0, pp. 1–2", "notes.md#0"]
    small = chunk_documents([d for d in documents if d.id == "guide.pdf"],
                            ChunkerConfig(size=30, overlap=0))
    assert chunk_label(small[0]) == "guide.pdf#0, p. 1"
    assert chunk_label(small[-1]).endswith(", p. 2")
