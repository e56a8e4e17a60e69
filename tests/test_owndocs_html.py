"""HTML pages as other tools write them (Sphinx, Texinfo, Windows "Unicode" saves), read
the way a user of `ragkit index` on a folder of saved documentation needs them read."""
from __future__ import annotations

import codecs
import json
import resource
import subprocess
import sys
from pathlib import Path

from ragkit.loaders import load_file

# the shape of a Sphinx page (python docs, Read the Docs): no <main>, the text in
# <div class="body" role="main">, a permalink "¶" in every heading, a sidebar and a footer div
SPHINX = """<!DOCTYPE html><html><head><title>IDLE — Python 3.13 documentation</title></head>
<body><div class="related" role="navigation"><ul><li><a href="i.html">index</a></li></ul></div>
<div class="document"><div class="body" role="main">
<section id="idle"><h1>IDLE<a class="headerlink" href="#idle" title="Permalink">¶</a></h1>
<p>IDLE is Python’s Integrated Development and Learning Environment.</p>
<section id="menus"><h2>Menus<a class="headerlink" href="#menus">¶</a></h2>
<p>IDLE has two main window types.</p></section></section></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><p>Menus</p></div>
<div class="footer">© Copyright 2001-2024. Created using Sphinx 7.0.1.</div></body></html>"""

# the shape of a Texinfo page (makeinfo --html): the same "Next: ... Up: ..." bar in a
# <div class="header"> above and below the text, a pilcrow anchor after each definition
TEXINFO = """<html><head><title>The Closure API (libffi)</title></head><body>
<div class="section" id="The-Closure-API"><div class="header"><p>Next: <a href="c.html">Closure
Example</a>, Previous: <a href="m.html">Multiple ABIs</a>, Up: <a href="u.html">Using libffi</a>
</p></div><h3 class="section">2.5 The Closure API</h3>
<p>Closures are not supported on all platforms.</p>
<dl><dt><span class="category">Function: </span><span><strong>void</strong> <em>ffi_closure_free
(void *writable)</em><a href='#index-void-2' class='copiable-anchor'> &para;</a></span></dt>
<dd><p>Free memory allocated using ffi_closure_alloc.</p></dd></dl>
<div class="header"><p>Next: <a href="c.html">Closure Example</a>, Up: <a href="u.html">Using
libffi</a></p></div></div></body></html>"""


def _load(tmp_path: Path, name: str, data: bytes | str):
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return load_file(path, name)


def test_a_sphinx_page_is_its_role_main_text_without_permalinks_sidebar_or_footer(tmp_path):
    doc = _load(tmp_path, "idle.html", SPHINX)
    assert doc.text == ("# IDLE\n\nIDLE is Python’s Integrated Development and Learning "
                        "Environment.\n\n## Menus\n\nIDLE has two main window types.")
    assert doc.title == "IDLE — Python 3.13 documentation"


def test_a_texinfo_page_drops_its_navigation_bars_and_pilcrow_anchors(tmp_path):
    doc = _load(tmp_path, "closure.html", TEXINFO)
    assert doc.text == ("### 2.5 The Closure API\n\nClosures are not supported on all "
                        "platforms.\n\nFunction: void ffi_closure_free (void *writable)\n\n"
                        "Free memory allocated using ffi_closure_alloc.")


def test_a_page_saved_as_utf16_with_a_bom_reads_as_its_text(tmp_path):
    page = "<html><body><h1>Café menu</h1><p>Crème brûlée – 7 €</p></body></html>"
    for encoding, bom in (("utf-16-le", codecs.BOM_UTF16_LE),
                          ("utf-16-be", codecs.BOM_UTF16_BE)):
        doc = _load(tmp_path, f"menu-{encoding}.html", bom + page.encode(encoding))
        assert doc.text == "# Café menu\n\nCrème brûlée – 7 €"


def test_an_xhtml_page_in_the_charset_of_its_xml_declaration(tmp_path):
    page = ('<?xml version="1.0" encoding="ISO-8859-7"?><html><body><p>Καλημέρα κόσμε</p>'
            "</body></html>")
    doc = _load(tmp_path, "greek.xhtml", page.encode("iso-8859-7"))
    assert doc.text == "Καλημέρα κόσμε"


def test_div_soup_drops_header_sidebar_and_footer_divs_and_keeps_content(tmp_path):
    page = ("<html><body><div id='header'><a href='/'>Home</a> | <a href='/about'>About</a>"
            "</div><div id='sidebar'><ul><li>Link 1</li><li>Link 2</li></ul></div>"
            "<div id='content'><h1>Opening hours</h1><p>The shop opens at nine.</p></div>"
            "<div id='footer'>Copyright 2020</div></body></html>")
    doc = _load(tmp_path, "soup.html", page)
    assert doc.text == "# Opening hours\n\nThe shop opens at nine."


def test_nested_tables_and_blocks_inside_a_cell_or_item_keep_words_apart(tmp_path):
    page = ("<body><table><tr><th>Plan</th><th>Limits</th></tr><tr><td>Basic</td><td>"
            "<table><tr><td>5 users</td><td>10 GB</td></tr></table></td></tr></table>"
            "<ul><li><p>First point.</p><p>Second point.</p></li></ul></body>")
    doc = _load(tmp_path, "plans.html", page)
    assert doc.text == ("| Plan | Limits |\n| --- | --- |\n| Basic | 5 users 10 GB |\n\n"
                        "- First point. Second point.")


def test_a_table_naming_its_columns_gets_a_rule_row_one_naming_its_rows_does_not(tmp_path):
    """An HTML table was written without Markdown's `| --- |` rule, so a row was quoted bare
    ("| Austria | 2 days, EUR 19.90 |"), the header row could be quoted as an answer, and
    "How much does express shipping to Austria cost?" was declined at 0.836 — while the same
    table in Markdown was answered under its columns' names. A first row in `<thead>` or of
    `<th>` cells names the columns; a first column of `<th>`s names rows, and gets no rule."""
    page = ("<body><table><thead><tr><td>Destination</td><td>Express</td></tr></thead>"
            "<tr><td>Austria</td><td>2 days, EUR 19.90</td></tr></table>"
            "<table><tr><th>Phone</th><td>555-1234</td></tr>"
            "<tr><th>Email</th><td>shed@example.org</td></tr></table></body>")
    doc = _load(tmp_path, "shipping.html", page)
    assert doc.text == ("| Destination | Express |\n| --- | --- |\n| Austria | 2 days, EUR "
                        "19.90 |\n\n| Phone | 555-1234 |\n| Email | shed@example.org |")


def test_every_article_of_a_page_of_several_is_read_in_order(tmp_path):
    """An FAQ of three `<article>`s and no `<main>`: only the first was indexed, silently."""
    page = ("<html><head><title>FAQ</title></head><body><nav><a href='/'>Home</a></nav>"
            "<article><h2>Shipping</h2><p>Orders ship within two business days.</p>"
            "<article><p>A comment inside the first.</p></article></article>"
            "<article><h2>Refunds</h2><p>Refunds are issued within thirty days.</p></article>"
            "<article><h2>Warranty</h2><p>It covers defects for one year.</p></article>"
            "<aside><article><p>Related: our blog.</p></article></aside>"
            "<footer><article><p>Cookies are used.</p></article></footer></body></html>")
    doc = _load(tmp_path, "faq.html", page)
    assert doc.text == ("## Shipping\n\nOrders ship within two business days.\n\nA comment "
                        "inside the first.\n\n## Refunds\n\nRefunds are issued within thirty "
                        "days.\n\n## Warranty\n\nIt covers defects for one year.")


def test_self_closed_elements_are_read_as_closed_in_bounded_time(tmp_path):
    """HTML ignores the slash of `<div/>` (it opens a div): 200,000 of them (1.2 MB) hung
    the build for three minutes past the depth check, which took them as closed. They are
    closed before parsing now, so check and parse agree: the page is flat and read at once.
    Pages that self-close `<a name=…/>` inside list items, or draw 5,000 SVG paths, were read
    before and still are; a page nested 2,000 `<div>`s deep is still refused."""
    import time

    import pytest

    from ragkit.documents import RagkitError
    started = time.monotonic()
    doc = _load(tmp_path, "flat.html", "<html><body>" + "<div/>" * 200_000 + "<p>bees</p>")
    assert doc.text == "bees" and time.monotonic() - started < 20
    items = "".join(f'<li><a name="n{i}"/><span class="x"/>item {i}</li>' for i in range(1500))
    doc = _load(tmp_path, "list.html", f"<html><body><ul>{items}</ul></body></html>")
    assert doc.text.splitlines()[0] == "- item 0" and doc.text.count("- item") == 1500
    drawing = "<svg>" + '<path d="M0 0"/>' * 5000 + "</svg>"
    doc = _load(tmp_path, "art.html", f"<html><body>{drawing}<p>A drawing.</p></body></html>")
    assert doc.text == "A drawing."
    with pytest.raises(RagkitError) as caught:
        _load(tmp_path, "deep.html", "<html><body>" + "<div>" * 2000 + "<p>bees</p>")
    assert str(caught.value) == (f"{tmp_path / 'deep.html'}: elements nested more than 1,000 "
                                 f"deep (a hostile page?)")


def test_a_slash_that_ends_an_unquoted_attribute_value_does_not_close_the_element(tmp_path):
    """`<a class=headerlink href=#install/>¶</a>` is a permalink holding "¶" (the slash is the
    end of the URL "#install/"): it was rewritten as `<a ...></a>¶`, so the "¶" it holds
    stayed in the heading ("Install¶"). A quoted value or a space before the slash still
    closes the element; a slash inside an unquoted value nests as HTML nests it."""
    import pytest

    from ragkit.documents import RagkitError
    page = ("<html><body><h2 id=install>Install<a class=headerlink href=#install/>¶</a></h2>"
            "<p>Run the installer.<span class=\"x\"/> It takes <b class=x />a minute.</p>"
            "</body></html>")
    doc = _load(tmp_path, "guide.html", page)
    assert doc.text == "## Install\n\nRun the installer. It takes a minute."
    with pytest.raises(RagkitError, match="nested more than 1,000 deep"):
        _load(tmp_path, "deep.html", "<html><body>" + "<div class=x/>" * 2000)
    # elements with attributes count too: `<div class="x">` was never matched, so 64,000
    # of them took 20 s to parse unrefused; a tag of 160,000 "=" is read at once
    with pytest.raises(RagkitError, match="nested more than 1,000 deep"):
        _load(tmp_path, "deep.html", "<html><body>" + '<div class="row">' * 2000)
    import time
    started = time.monotonic()
    doc = _load(tmp_path, "eq.html", "<html><body><p>hello</p><div " + "=" * 160_000 + '"/>')
    assert doc.text == "hello" and time.monotonic() - started < 5


def test_a_charset_that_cannot_be_true_or_is_no_codec_falls_back_to_windows_1252(tmp_path):
    """`charset="undefined"` raised a bare UnicodeError (a traceback, even with --skip-bad);
    `charset="utf-16"` on an ASCII page decoded every tag into CJK characters."""
    for charset in ("undefined", "utf-16", "UTF-32LE", "u16", "UnicodeLittleUnmarked"):
        page = (f'<html><head><meta charset="{charset}"></head><body><p>The caf\xe9 refunds '
                f'within thirty days.</p></body></html>').encode("cp1252")
        doc = _load(tmp_path, f"{charset}.html", page)
        assert doc.text == "The café refunds within thirty days."


def test_a_page_over_the_size_limit_is_one_line(tmp_path, monkeypatch):
    import pytest

    from ragkit.documents import RagkitError
    from ragkit.loaders import html
    monkeypatch.setattr(html, "MAX_HTML_BYTES", 1000)
    with pytest.raises(RagkitError) as caught:
        _load(tmp_path, "big.html", "<p>" + "word " * 400 + "</p>")
    assert str(caught.value) == (f"{tmp_path / 'big.html'}: 2,007 bytes, over the limit of 1,000 "
                                 f"bytes for one text file (split it, or leave it out with "
                                 f"--skip-bad)")


def test_end_tags_that_close_nothing_and_a_slash_after_the_name_do_not_get_past_the_depth_check(
        tmp_path):
    """`<div></span>` lowered the count though `</span>` closes nothing (HTML ignores it), and
    `<div/x>` (HTML's `<div x>`) was not read as a tag: 100,000 of either took 30 s to index
    and 200,000 ran past six minutes. An end tag closes what its element holds as well."""
    import time

    import pytest

    from ragkit.documents import RagkitError
    for name, tags in (("stray.html", "<div></span>"), ("slash.html", "<div/x>"),
                       # and from a review of that: an end tag past a scope boundary, a
                       # slash HTML ignores, a ">" inside a quoted value, names of any
                       # letters, a quote that is part of a name
                       ("scope.html", "<div><marquee></div>"),
                       ("quoted.html", '<div title="/>">'), ("name.html", "<x_y></span>"),
                       ("colon.html", "<o:x>"), ("quote.html", '<x a"<div>')):
        started = time.monotonic()
        with pytest.raises(RagkitError, match="nested more than 1,000 deep"):
            _load(tmp_path, name, "<html><body><p>hello</p>" + tags * 100_000 + "x")
        assert time.monotonic() - started < 5
    started = time.monotonic()  # a slash HTML ignores: written as an empty pair, as `<div/>`
    assert _load(tmp_path, "slash2.html", "<p>a</p>" + "<div/x/>" * 100_000 + "<p>b</p>").text \
        == "a\n\nb"
    assert time.monotonic() - started < 20
    page = ("<html><body>" + "<div><section><b>word</div>" * 3000 + "<p>end</p></body></html>")
    assert _load(tmp_path, "fine.html", page).text.endswith("end")  # each </div> closes all


def test_a_korean_page_labelled_euc_kr_reads_its_cp949_syllables(tmp_path):
    """Windows writes Korean pages in CP949 and labels them euc-kr (or ks_c_5601-1987, or
    windows-949, in a `<meta http-equiv>`): a syllable only CP949 has (똠, 샾) failed strict
    EUC-KR and the whole page was indexed as Windows-1252 mojibake."""
    for label in ("euc-kr", "EUC-KR", "ks_c_5601-1987", "windows-949", "ksc_5601"):
        page = (f'<html><head><meta http-equiv="Content-Type" content="text/html; '
                f'charset={label}"></head><body><p>기숙사에서 똠얌꿍 조리는 금지된다.</p>'
                f'</body></html>').encode("cp949")
        doc = _load(tmp_path, f"{label}.html", page)
        assert doc.text == "기숙사에서 똠얌꿍 조리는 금지된다."


def test_a_page_in_its_declared_charset_with_a_stray_byte_keeps_its_text(tmp_path):
    """A Korean page cut short (a lone lead byte at its end) failed strict CP949 and was read
    whole as Windows-1252 mojibake; a browser shows the page with one U+FFFD. A page the
    declared charset cannot read at all still falls back."""
    page = ('<html><head><meta charset="euc-kr"></head><body><p>환불은 7일 이내에 '
            '가능하다.</p></body></html>').encode("cp949") + b"\xb0"
    assert _load(tmp_path, "cut.html", page).text == "환불은 7일 이내에 가능하다.\n\n\ufffd"
    noise = b'<html><head><meta charset="euc-kr"></head><body><p>' + b"\xff\x41" * 200 + \
        b"</p></body></html>"
    assert "\ufffd" not in _load(tmp_path, "noise.html", noise).text


def test_a_windows_1252_page_labelled_utf_8_keeps_its_accents(tmp_path):
    """A page whose template says utf-8 but whose text was saved as Windows-1252 (café, é
    one byte) reads nothing as UTF-8 beyond ASCII: every accent became U+FFFD, where reading
    it as Windows-1252 keeps them."""
    page = ('<html><head><meta charset="utf-8"></head><body><p>Our caf\u00e9 serves '
            'cr\u00e8me br\u00fbl\u00e9e \u2013 na\u00efvely.</p></body></html>').encode("cp1252")
    assert _load(tmp_path, "menu.html", page).text == \
        "Our caf\u00e9 serves cr\u00e8me br\u00fbl\u00e9e \u2013 na\u00efvely."


def test_a_korean_page_without_a_charset_is_read_as_cp949_and_a_latin_one_as_before(tmp_path):
    """A page saved in CP949 with no charset (or one Python does not know) was read as
    Windows-1252: every Hangul syllable two letters of mojibake, indexed without a word.
    Browsers detect it; a Windows-1252 page without a charset keeps its accents."""
    page = ("<html><body><p>환불은 배송 완료일로부터 7일 이내에 신청할 수 있습니다.</p>"
            "</body></html>").encode("cp949")
    assert _load(tmp_path, "ko.html", page).text == \
        "환불은 배송 완료일로부터 7일 이내에 신청할 수 있습니다."
    latin = "<html><body><p>Crème brûlée, naïve résumé.</p></body></html>".encode("cp1252")
    assert _load(tmp_path, "fr.html", latin).text == "Crème brûlée, naïve résumé."


def test_an_element_with_thousands_of_attributes_is_refused_in_one_line(tmp_path):
    """The parser's time grows with the square of an element's attributes: 20,000 on one `<p>`
    (a 240 KB page) took a second, 80,000 35 s, 2 million were not parsed in five minutes
    at 2.9 GB; every `<body>` (or `<html>`) start tag adds its attributes to the one element
    the same way. A page over 256 names on an element is refused; 256 are read."""
    folder = tmp_path / "saved"
    folder.mkdir()
    spread = " ".join(f'data-k{i}="v"' for i in range(20_000))
    (folder / "tags.html").write_text(f"<html><body><main><p {spread}>Bees</p></main></body>")
    merged = "".join(f"<body b{i}>" for i in range(20_000))
    (folder / "merged.html").write_text(f"<html><body><main><p>Wasps</p>{merged}</main>")
    most = " ".join(f"a{i}" for i in range(256))
    (folder / "fine.html").write_text(f"<html><body><main><p {most}>Ants dig.</p></main></body>")
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index", str(folder),
                           "--out", str(tmp_path / "idx"), "--embedder", "none", "--skip-bad"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, f"indexed 1 document as 1 chunk into "
                                                 f"{tmp_path / 'idx'}\n"), done.stderr
    assert done.stderr.splitlines()[-3:] == [
        "skipped 2 bad files:",
        f"  {folder / 'merged.html'}: an element with more than 256 attributes (<body>: a "
        f"hostile page?)",
        f"  {folder / 'tags.html'}: an element with more than 256 attributes (<p>: a hostile "
        f"page?)"]
    rows = [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]
    assert [(row["doc_id"], row["text"]) for row in rows] == [("fine.html", "Ants dig.")]


def test_a_start_tag_of_millions_of_bare_attribute_names_is_refused_in_little_memory(tmp_path):
    """One 25 MB start tag of bare attribute names (`<div a0 a1 a2 ...>`): reading where the
    tag ends took 2.8 GB and 14 s before the attribute bound refused it, one way back kept
    for each character; under a 1 GB address space `ragkit index` died in a MemoryError
    traceback. It is refused in the same one line, in well under a second of reading, and
    leaves no index behind."""
    folder = tmp_path / "saved"
    folder.mkdir()
    names = " ".join(f"a{i}" for i in range(3_000_000))
    (folder / "page.html").write_text(f"<html><body><div {names}>Bees</div></body></html>")
    limit = 1 << 30
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index", str(folder),
                           "--out", str(tmp_path / "idx"), "--embedder", "none"],
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (limit, limit)))
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"ragkit: error: {folder / 'page.html'}: an element with more than 256 "
               f"attributes (<div>: a hostile page?)\n")
    assert not (tmp_path / "idx").exists()


def test_a_utf_8_page_without_a_charset_cut_short_keeps_its_accents(tmp_path):
    """A page saved by `curl -o` (its charset was in the server's header) and cut short
    mid-character failed strict UTF-8 and was read whole as Windows-1252: "acceptÃ©s dans un
    dÃ©lai", indexed without a word, where a browser shows one U+FFFD."""
    page = ("<html><body><main><h1>Remboursements</h1><p>Les remboursements sont acceptés "
            "dans un délai de sept jours. Les articles soldés ne sont pas échangés.</p>"
            "</main></body></html>").encode()[:-30] + b"\xc3"
    text = _load(tmp_path, "rembourser.html", page).text
    assert "acceptés dans un délai" in text and "Ã" not in text and text.endswith("\ufffd")


def test_a_charset_browsers_do_not_know_is_not_a_codec_to_read_with(tmp_path):
    """Any name Python's codecs know was read with: `punycode` took 36 s over a 400 KB page
    (its time grows with the square of the page) and spelled its tags out as text;
    `unicode_escape` and `utf-7` read anything. Only the web's encodings are."""
    import time
    for charset in ("punycode", "unicode_escape", "utf-7", "rot13", "base64"):
        page = (f'<html><head><meta charset="{charset}"></head><body><p>\xff'
                + "a" * 50_000 + "-" + "b" * 50_000 + "</p></body></html>").encode("latin-1")
        started = time.monotonic()
        text = _load(tmp_path, f"{charset}.html", page).text
        assert text == "\xff" + "a" * 50_000 + "-" + "b" * 50_000, charset  # Windows-1252
        assert time.monotonic() - started < 5
    thai = "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35"  # a label Python lacks, read as the web does
    page = f'<meta charset="windows-874"><p>{thai}</p>'.encode("cp874")
    assert _load(tmp_path, "th.html", page).text == thai


def test_every_label_of_the_encoding_standard_reads_as_browsers_read_it(tmp_path):
    """Each label the WHATWG standard lists (webencodings' table) decodes a page as its
    codec does — the allow-list of web encodings once left out ISO-8859-9, and Turkish pages
    became "Ýade süresi"."""
    import pytest
    webencodings = pytest.importorskip("webencodings")
    samples = ["İade süresi ve ürünü değiştirmek", "Crème brûlée, naïve", "Привет, мир",
               "Γειά σου κόσμε", "שלום עולם", "مرحبا بالعالم", "สวัสดีครับ", "ありがとう",
               "谢谢你的帮助", "감사합니다", "Dziękuję bardzo", "Ačiū labai", "Grüße"]
    checked = 0
    for label, name in sorted(webencodings.LABELS.items()):
        if name in ("replacement", "utf-16be", "utf-16le", "x-user-defined", "utf-8"):
            continue
        codec = webencodings.lookup(label).codec_info
        for sample in samples:
            try:
                data, _ = codec.encode(sample)
            except UnicodeEncodeError:
                continue
            if data.isascii():
                continue
            page = b'<meta charset="' + label.encode() + b'"><p>' + data + b"</p>"
            assert _load(tmp_path, "page.html", page).text == sample, (label, name, sample)
            checked += 1
            break
    assert checked > 180
