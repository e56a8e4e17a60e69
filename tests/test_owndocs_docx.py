"""Word files as Word, LibreOffice and templates write them, beyond what python-docx's
`add_paragraph` makes: tracked changes, content controls, text boxes, merged table cells,
heading styles with localized or custom names. Each file is made here: python-docx writes
it, then the test puts the XML Word would write into `word/document.xml` / `styles.xml`."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

from cli_errors import one_error_line
from ragkit.loaders import load_file

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _docx(path: Path, body: str, styles: str = "") -> Path:
    """A .docx whose body is `body` (WordprocessingML) and whose styles part gains `styles`."""
    import docx as python_docx
    python_docx.Document().save(str(path))
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    document = parts["word/document.xml"].decode()
    document = re.sub(r"<w:body>.*<w:sectPr", f"<w:body>{body}<w:sectPr", document, flags=re.S)
    parts["word/document.xml"] = document.encode()
    parts["word/styles.xml"] = parts["word/styles.xml"].decode().replace(
        "</w:styles>", styles + "</w:styles>").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def _p(text: str, style: str = "") -> str:
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{ppr}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


def test_tracked_insertions_are_text_and_deletions_are_not(tmp_path):
    body = ('<w:p><w:r><w:t xml:space="preserve">Refunds are paid within </w:t></w:r>'
            '<w:del w:id="1" w:author="A"><w:r><w:delText>30</w:delText></w:r></w:del>'
            '<w:ins w:id="2" w:author="A"><w:r><w:t>14</w:t></w:r></w:ins>'
            '<w:r><w:t xml:space="preserve"> days.</w:t></w:r></w:p>')
    doc = load_file(_docx(tmp_path / "tracked.docx", body), "tracked.docx")
    assert doc.text == "Refunds are paid within 14 days."


def test_content_controls_text_boxes_and_merged_cells(tmp_path):
    box = ('<w:p><w:r><w:t>Intro.</w:t></w:r><w:r><mc:AlternateContent xmlns:mc="http://'
           'schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="wps">'
           '<w:drawing><w:txbxContent>' + _p("Call 555-0100 for help.") + '</w:txbxContent>'
           '</w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>'
           + _p("Call 555-0100 for help.") + '</w:txbxContent></w:pict></mc:Fallback>'
           '</mc:AlternateContent></w:r></w:p>')
    body = ('<w:sdt><w:sdtPr/><w:sdtContent>' + _p("Contract number: C-2291") +
            '</w:sdtContent></w:sdt>'
            '<w:p><w:r><w:t xml:space="preserve">Signed by </w:t></w:r><w:sdt><w:sdtContent>'
            '<w:r><w:t>Dana Reyes</w:t></w:r></w:sdtContent></w:sdt></w:p>' + box +
            '<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr>' + _p("Totals") +
            '</w:tc></w:tr><w:tr><w:tc>' + _p("Q1") + _p("(Jan-Mar)") + '</w:tc><w:tc>' + _p("12") +
            '</w:tc></w:tr></w:tbl>')
    doc = load_file(_docx(tmp_path / "forms.docx", body), "forms.docx")
    assert doc.text == ("Contract number: C-2291\n\nSigned by Dana Reyes\n\nIntro.\n\n"
                        "Call 555-0100 for help.\n\n| Totals |\n| Q1 (Jan-Mar) | 12 |")


def test_headings_by_outline_level_whatever_the_style_is_called(tmp_path):
    styles = (f'<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="Überschrift'
              f' 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>'
              f'<w:style w:type="paragraph" w:styleId="Titre2"><w:name w:val="Titre 2"/>'
              f'<w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>'
              f'<w:style w:type="paragraph" w:customStyle="1" w:styleId="ChapterHead">'
              f'<w:name w:val="Chapter Head"/><w:basedOn w:val="berschrift1"/></w:style>')
    body = (_p("Rückgabe", "berschrift1") + _p("Die Frist beträgt 30 Tage.") +
            _p("Délais", "Titre2") + _p("Quatorze jours.") +
            _p("Appendix", "ChapterHead") + _p("Forms and contacts."))
    doc = load_file(_docx(tmp_path / "styles.docx", body, styles), "styles.docx")
    assert doc.text == ("# Rückgabe\n\nDie Frist beträgt 30 Tage.\n\n## Délais\n\n"
                        "Quatorze jours.\n\n# Appendix\n\nForms and contacts.")
    assert doc.title == "Rückgabe"


def _as(path: Path, content_type: str) -> Path:
    """A Word file whose main part says it is a template or a macro-enabled document."""
    import docx as python_docx
    document = python_docx.Document()
    document.add_heading("Quarterly checklist", 1)
    document.add_paragraph("Back up the ledger before closing the quarter.")
    document.save(str(path))
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        b"application/" + content_type.encode())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def test_templates_and_macro_enabled_files_are_read_under_any_word_suffix(tmp_path):
    from ragkit.document_folder import load_folder
    _as(tmp_path / "checklist.dotx",
        "vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml")
    _as(tmp_path / "macros.docm", "vnd.ms-word.document.macroEnabled.main+xml")
    _as(tmp_path / "renamed.docx", "vnd.ms-word.template.macroEnabledTemplate.main+xml")
    docs = load_folder(tmp_path, progress=False)
    assert [(d.id, d.text) for d in docs] == [
        (name, "# Quarterly checklist\n\nBack up the ledger before closing the quarter.")
        for name in ("checklist.dotx", "macros.docm", "renamed.docx")]


NUMBERING = ('<w:abstractNum w:abstractNumId="90"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/>'
             '</w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="91"><w:lvl w:ilvl="0">'
             '<w:numFmt w:val="decimal"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt '
             'w:val="lowerLetter"/></w:lvl></w:abstractNum>')


def _item(text: str, num: int, level: int = 0) -> str:
    return (f'<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="{level}"/>'
            f'<w:numId w:val="{num}"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>')


def test_lists_numbered_by_word_get_their_numbers_and_bullets_their_dashes(tmp_path):
    """Word numbers a list through numbering.xml on a "List Paragraph", whatever the list
    is: the number (or bullet) comes from the list's format, not from the style's name."""
    path = _docx(tmp_path / "steps.docx", _item("Unplug the grinder.", 91) +
                 _item("Wear gloves.", 91, 1) + _item("Lift the hopper.", 91) +
                 _p("Then:") + _item("Brush the burrs.", 90) + _item("Refit them.", 91))
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    numbering = parts["word/numbering.xml"].decode()
    first = numbering.index("<w:num ")
    parts["word/numbering.xml"] = (numbering[:first] + NUMBERING + numbering[first:]).replace(
        "</w:numbering>", '<w:num w:numId="90"><w:abstractNumId w:val="90"/></w:num>'
        '<w:num w:numId="91"><w:abstractNumId w:val="91"/></w:num></w:numbering>').encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    assert load_file(path, "steps.docx").text == (
        "1. Unplug the grinder.\n\na. Wear gloves.\n\n2. Lift the hopper.\n\nThen:\n\n"
        "- Brush the burrs.\n\n3. Refit them.")


CT = ('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
      'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
      'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
      '<Override PartName="/{main}" ContentType="application/vnd.openxmlformats-'
      'officedocument.wordprocessingml.document.main+xml"/></Types>')
RELS = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/officeDocument" Target="{main}"/></Relationships>')


def _bare(path: Path, main: str, body: str, prolog: str = "", extra=(), target: str = ""
          ) -> Path:
    """A .docx without docProps (no core properties), its main part at `main` (named in
    `_rels/.rels` as `target`, else as `main`)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", CT.format(main=main))
        archive.writestr("_rels/.rels", RELS.format(main=target or main))
        archive.writestr(main, f'<?xml version="1.0"?>{prolog}<w:document {W}><w:body>{body}'
                               f'</w:body></w:document>')
        for name, data in extra:
            archive.writestr(name, data)
    return path


def test_the_main_part_is_where_the_package_says_and_no_core_part_means_no_title(tmp_path):
    # before: "not a valid Word file (no word/document.xml)" for Word Online's
    # word/document2.xml, and every file without docProps/core.xml titled "Word Document"
    body = _p("The refund window is thirty days.")
    for main in ("word/document2.xml", "word/document.xml"):
        document = load_file(_bare(tmp_path / "online.docx", main, body), "online.docx")
        assert document.title == "online.docx"  # no title property, no heading: its name
        assert document.text == "The refund window is thirty days."


def test_entities_are_refused_in_a_main_part_of_any_name_and_an_svg_may_keep_its_dtd(tmp_path):
    import pytest
    from ragkit.documents import RagkitError
    dtd = '<!DOCTYPE w:document [<!ENTITY inl "X">]>'
    path = _bare(tmp_path / "a.docx", "word/main.dat", _p("start &inl; end"), dtd)
    with pytest.raises(RagkitError, match="its XML declares entities"):  # before: "start"
        load_file(path, "a.docx")
    # an image name does not hide the main part from the check (nor from the size limit)
    path = _bare(tmp_path / "c.docx", "word/main.png", _p("start &inl; end"), dtd)
    with pytest.raises(RagkitError, match="its XML declares entities"):
        load_file(path, "c.docx")
    svg = '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x"><svg/>'
    html = '<!DOCTYPE html><html><body><p>Imported.</p></body></html>'  # an altChunk part
    path = _bare(tmp_path / "b.docx", "word/document.xml", _p("Logo and text."),
                 extra=[("word/media/image1.svg", svg), ("word/afchunk1.html", html)])
    assert load_file(path, "b.docx").text == "Logo and text."


def test_a_main_part_named_relative_to_the_package_is_found(tmp_path):
    # before this change's review: Target="./word/document.xml" was "no ./word/document.xml"
    path = _bare(tmp_path / "d.docx", "word/document.xml", _p("The refund window."),
                 target="./word/document.xml")
    assert load_file(path, "d.docx").text == "The refund window."


def test_a_small_file_whose_text_unpacks_past_the_limit_is_refused(tmp_path, monkeypatch):
    # before: an 805 KB file of 200 MB XML was indexed, 3 GB at its peak
    import pytest
    from ragkit.documents import RagkitError
    from ragkit.loaders import docx_archive
    monkeypatch.setattr(docx_archive, "MAX_XML", 2**20)
    body = _p("x" * 1000) * 1100  # 1.1 MB of XML, a few KB packed
    with zipfile.ZipFile(tmp_path / "big.docx", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", f"<w:document {W}><w:body>{body}</w:body>"
                                              f"</w:document>")
        archive.writestr("word/media/photo.png", b"\x89PNG" + b"\0" * 2**21)  # not text
    assert (tmp_path / "big.docx").stat().st_size < 50_000
    with pytest.raises(RagkitError, match=r"big.docx: its text parts would unpack to 1 MB, over "
                                          r"the 1 MB limit"):
        load_file(tmp_path / "big.docx", "big.docx")


def _runs(path: Path, runs: int) -> Path:
    """A .docx of one paragraph of `runs` one-letter runs (2 elements each), written as it
    is packed: 4.5 million runs are 97 MB of XML and 300 KB of file."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CT.format(main="word/document.xml"))
        archive.writestr("_rels/.rels", RELS.format(main="word/document.xml"))
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(f"<w:document {W}><w:body><w:p>".encode())
            for _ in range(runs // 100_000):
                part.write(b"<w:r><w:t>a</w:t></w:r>" * 100_000)
            part.write(b"<w:r><w:t>a</w:t></w:r>" * (runs % 100_000))
            part.write(b"</w:p></w:body></w:document>")
    return path


def test_a_large_files_tree_is_freed_once_it_is_read(tmp_path):
    """python-docx's package and parts refer to each other: a file's tree lived on until
    Python's cycle collector ran, so files read one after another added up (two of 4
    million elements: 1.7 GB, where one peaks at 0.94 GB)."""
    import gc

    from docx.package import Package
    gc.collect()
    document = load_file(_runs(tmp_path / "runs.docx", 60_000), "runs.docx")
    assert document.text == "a" * 60_000
    assert [o for o in gc.get_objects() if isinstance(o, Package)] == []


def test_a_small_file_of_millions_of_tiny_runs_is_refused_in_one_line_within_a_gigabyte(
        tmp_path):
    """97 MB of one-letter runs, under the 128 MB part limit, packs into 300 KB; python-docx
    holds each of its 9 million elements in memory (11 million took 2.6 GB and 40 s). Under
    a 1 GB address-space limit it was "not a valid Word file (XMLSyntaxError: unknown
    error …)"; it is refused in one line, counted before python-docx opens it."""
    import os
    import resource
    import subprocess
    import sys
    folder = tmp_path / "docs"
    folder.mkdir()
    path = _runs(folder / "tiny.docx", 4_500_000)  # 9 million elements
    assert path.stat().st_size < 1_000_000

    def one_gigabyte() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
    ragkit = str(Path(sys.executable).parent / "ragkit")
    done = subprocess.run([ragkit, "index", str(folder), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")},
                          preexec_fn=one_gigabyte)
    assert one_error_line(done) == (
        f"ragkit: error: {path}: its XML holds more than 4,000,000 elements (indexing holds "
        f"each in memory, about 230 bytes apiece: split the document, or leave it out with "
        f"--skip-bad)")
    assert not (tmp_path / "idx").exists()


def _table(first: str, look: str = "", style: str = "") -> str:
    """A two-row Word table whose first row's runs carry `first` (run properties)."""
    named = f'<w:tblStyle w:val="{style}"/>' if style else ""
    props = f"<w:tblPr>{named}{look}</w:tblPr>" if look or style else ""
    row = ('<w:tr>' + "".join(f'<w:tc><w:p><w:r>{first}<w:t>{text}</w:t></w:r></w:p></w:tc>'
                              for text in ("Tool", "Deposit")) + '</w:tr>')
    return (f'<w:tbl>{props}{row}<w:tr><w:tc>{_p("Chainsaw")}</w:tc><w:tc>{_p("50 euros")}'
            '</w:tc></w:tr></w:tbl>')


def test_a_word_tables_header_row_gets_a_rule_row_when_it_shows_as_one(tmp_path):
    """A Word table was written without Markdown's `| --- |` rule under its header, so the
    answerer quoted a row without its columns' names. A first row shown bold — its runs, or
    the table style's first-row formatting switched on — or marked as the header row names
    the columns; a plain first row (a form of label | value rows) does not, though Word's
    default `tblLook` switches first-row formatting on for every table."""
    look = '<w:tblLook w:val="04A0" w:firstRow="1"/>'
    bold_first = ('<w:style w:type="table" w:styleId="Fancy"><w:name w:val="Fancy"/>'
                  '<w:tblStylePr w:type="firstRow"><w:rPr><w:b/></w:rPr></w:tblStylePr>'
                  '</w:style>')
    plain_first = '<w:style w:type="table" w:styleId="Plain"><w:name w:val="Plain"/></w:style>'
    header = "| Tool | Deposit |\n| --- | --- |\n| Chainsaw | 50 euros |"
    bare = "| Tool | Deposit |\n| Chainsaw | 50 euros |"
    cases = {"bold runs": (_table("<w:rPr><w:b/></w:rPr>"), header),
             "bold off": (_table('<w:rPr><w:b w:val="0"/></w:rPr>'), bare),
             "styled": (_table("", look, "Fancy"), header),
             "styled, first row off": (_table("", '<w:tblLook w:val="0400"/>', "Fancy"), bare),
             "plain style, first row on": (_table("", look, "Plain"), bare),
             "no properties": (_table(""), bare)}
    for name, (body, text) in cases.items():
        path = _docx(tmp_path / f"{name}.docx", body, bold_first + plain_first)
        assert load_file(path, path.name).text == text, name
    marked = _table("").replace("<w:tr>", "<w:tr><w:trPr><w:tblHeader/></w:trPr>", 1)
    path = _docx(tmp_path / "marked.docx", marked)
    assert load_file(path, "marked.docx").text == header


def test_a_heading_number_that_is_no_ascii_digit_is_no_heading_level(tmp_path):
    """`"²".isdigit()` is True and `int("²")` raises: a style named "Heading ²", or an outline
    level "²", made the whole file "not a valid Word file (ValueError: …)"."""
    styles = ('<w:style w:type="paragraph" w:styleId="H"><w:name w:val="Heading ²"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="O"><w:name w:val="Odd"/>'
              '<w:pPr><w:outlineLvl w:val="²"/></w:pPr></w:style>')
    body = _p("Squared", "H") + _p("Levelled", "O") + _p("Refunds take seven days.")
    doc = load_file(_docx(tmp_path / "odd.docx", body, styles), "odd.docx")
    assert doc.text == "Squared\n\nLevelled\n\nRefunds take seven days."


def _repacked(path: Path, change) -> Path:
    """`path`, a .docx, with its parts (name -> bytes) changed by `change(parts)`."""
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    change(parts)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def test_parts_are_bounded_by_their_content_types_not_their_names(tmp_path):
    """python-docx parses a part by the content type `[Content_Types].xml` gives it: styles
    with 30 million elements named `word/styles.png` (typed as styles) skipped the element
    count that `word/styles.xml` gets (a 118 KB file indexed at 3.9 GB). A part typed as an
    image, an SVG picture included, is never parsed, and is not counted."""
    import pytest

    from ragkit.documents import RagkitError
    from ragkit.loaders.docx_archive import check_zip
    plain = check_zip(_docx(tmp_path / "plain.docx", _p("Hello kestrel")))

    def pictures(parts):
        parts["word/media/logo.png"] = b"\x89PNG\r\n\x1a\n" + b"<a/>" * 10_000
        parts["word/media/chart.svg"] = b'<svg xmlns="http://www.w3.org/2000/svg">' + \
            b"<circle/>" * 10_000 + b"</svg>"
        parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
            b"<Default ", b'<Default Extension="PNG" ContentType="image/png"/><Default '
            b'Extension="svg" ContentType="image/svg+xml"/><Default ', 1)
    assert check_zip(_repacked(_docx(tmp_path / "pics.docx", _p("Hello kestrel")),
                               pictures)) == plain + 2  # the two <Default> tags alone

    def renamed(parts):
        styles = parts.pop("word/styles.xml")
        parts["word/styles.png"] = styles.replace(b"</w:styles>",
                                                  b"<a/>" * 4_100_000 + b"</w:styles>")
        parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(
            b'Target="styles.xml"', b'Target="styles.png"')
        parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
            b"/word/styles.xml", b"/word/styles.png")
    path = _repacked(_docx(tmp_path / "styles.docx", _p("Hello kestrel")), renamed)
    with pytest.raises(RagkitError, match=r"styles.docx: its XML holds more than 4,000,000 "
                                          r"elements"):
        check_zip(path)
