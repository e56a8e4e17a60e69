"""A PDF with no outline (bookmarks) gets its headings from its type sizes
(`ragkit.loaders.pdf_headings`). Before, such a PDF had no headings at all, and pdfminer read
a heading into the paragraph above or below it ("… every flange bolt. 2 Maintenance The
maintenance …"), so every chunk's section was the document alone. Made here with
reportlab, as a Word file saved without bookmarks or LaTeX without hyperref is laid out."""
from __future__ import annotations

from pathlib import Path

from ragkit.chunking import ChunkerConfig, chunk_documents
from ragkit.loaders import load_file

SECTIONS = ("Installation", "Maintenance")


def _manual(path: Path, outlined: bool = False) -> Path:
    """A cover title, then per section a Heading1, body text, a Heading2 and body text."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    class Outlined(SimpleDocTemplate):
        def afterFlowable(self, flowable):
            if outlined and isinstance(flowable, Paragraph) and flowable.style.name == "Heading1":
                key = f"h{id(flowable)}"
                self.canv.bookmarkPage(key)
                self.canv.addOutlineEntry(flowable.getPlainText(), key, level=0)

    styles = getSampleStyleSheet()
    story = [Paragraph("Pump Manual", styles["Title"])]
    for n, name in enumerate(SECTIONS, 1):
        story += [Paragraph(f"{n} {name}", styles["Heading1"]),
                  Paragraph(f"The {name.lower()} of the pump needs care. " * 6, styles["BodyText"]),
                  Paragraph(f"{n}.1 Tools for {name.lower()}", styles["Heading2"]),
                  Paragraph("Use a torque wrench set to 25 Nm for every flange bolt.",
                            styles["BodyText"])]
    Outlined(str(path), invariant=1).build(story)
    return path


def test_a_pdf_without_an_outline_has_its_larger_lines_as_headings(tmp_path):
    doc = load_file(_manual(tmp_path / "pump.pdf"), "pump.pdf")
    assert doc.title == "Pump Manual"
    assert [line for line in doc.text.splitlines() if line.startswith("#")] == [
        "# 1 Installation", "## 1.1 Tools for installation",
        "# 2 Maintenance", "## 2.1 Tools for maintenance"]
    assert doc.text.startswith("Pump Manual\n\n# 1 Installation\n\nThe installation of")
    assert "bolt.\n\n# 2 Maintenance\n\nThe maintenance of" in doc.text  # not one box
    chunks = chunk_documents([doc], ChunkerConfig(size=24, overlap=0))
    sections = {" > ".join(c.metadata["section"]) for c in chunks if "torque" in c.text}
    assert sections == {"1 Installation > 1.1 Tools for installation",
                        "2 Maintenance > 2.1 Tools for maintenance"}


def test_an_outline_is_the_headings_when_there_is_one(tmp_path):
    """The author's bookmarks win: the Heading2 lines, which have none, stay text."""
    doc = load_file(_manual(tmp_path / "pump.pdf", outlined=True), "pump.pdf")
    assert [line for line in doc.text.splitlines() if line.startswith("#")] == [
        "# 1 Installation", "# 2 Maintenance"]


def _canvas_pdf(path: Path, pages: list[list[tuple[float, str]]]) -> Path:
    """Pages of (size, line) drawn top down in Helvetica, 30 points apart."""
    from reportlab.pdfgen import canvas
    pdf = canvas.Canvas(str(path), pagesize=(612, 792), invariant=1)
    for lines in pages:
        y = 760
        for size, line in lines:
            pdf.setFont("Helvetica", size)
            pdf.drawString(72, y, line)
            y -= 30
        pdf.showPage()
    pdf.save()
    return path


BODY = (10, "The boiler holds two litres of water and heats it in forty seconds flat.")


def test_contents_lines_a_large_paragraph_and_a_running_header_are_no_headings(tmp_path):
    """Set larger than the body but not headings: a contents line with its leader and page
    number, a paragraph of three large lines, a header repeated at the top of every page."""
    header = (14, "Kestrel EG400 Service Manual")
    pages = [[header, BODY, (12, "Safety . . . . . . . . . . 1"), BODY, BODY],
             [header, BODY, (14, "Always unplug the grinder before you"),
              (14, "open it, and keep the burrs away from"), (14, "water at every step."), BODY],
             [header, BODY, (14, "Descaling"), BODY, BODY],
             [header, BODY, BODY, BODY]]
    doc = load_file(_canvas_pdf(tmp_path / "eg400.pdf", pages), "eg400.pdf")
    assert [line for line in doc.text.splitlines() if line.startswith("#")] == ["# Descaling"]
    assert "Safety … 1" in doc.text and "Kestrel" not in doc.text
    # three lines 30 points apart are three boxes to pdfminer: one paragraph here
    assert ("Always unplug the grinder before you open it, and keep the burrs away from water "
            "at every step.") in doc.text


def test_a_pdf_in_one_size_has_no_headings(tmp_path):
    doc = load_file(_canvas_pdf(tmp_path / "flat.pdf", [[BODY, (10, "Descaling"), BODY]]),
                    "flat.pdf")
    assert "#" not in doc.text and "Descaling" in doc.text


def test_a_paragraph_pdfminer_split_into_two_boxes_is_one_paragraph(tmp_path):
    """LibreOffice spaces a paragraph's lines unevenly and pdfminer made two boxes of one
    paragraph: a chunk ended at "… since it is the", and the offline answerer quoted "They
    simply measure how many instructions". A box that ends a sentence, or a next box that
    starts with a capital, a digit or a bullet, stays a paragraph of its own."""
    lines = [(10, "They simply measure how many instructions"),
             (10, "were executed for each line, a manip-"), (10, "ulation count."),
             (10, "then a sentence after a full stop."), (10, "Capital letters start this one"),
             (10, "- a bullet goes on"), (10, "3 items follow")]
    doc = load_file(_canvas_pdf(tmp_path / "cg.pdf", [lines]), "cg.pdf")
    assert doc.text.split("\n\n") == [
        "They simply measure how many instructions were executed for each line, a "
        "manipulation count.", "then a sentence after a full stop.",
        "Capital letters start this one", "- a bullet goes on", "3 items follow"]


def test_a_two_column_pages_headings_stand_where_each_column_prints_them(tmp_path):
    """In the second column a heading's top is above the first column's lower lines. Placed
    by its top alone, every heading of the page was stacked before the first column's end
    (the benchmark table's chunk sectioned under the next column's heading) and its line
    was kept again as text further on."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

    styles = getSampleStyleSheet()
    path = tmp_path / "columns.pdf"
    doc = BaseDocTemplate(str(path), pagesize=(612, 792), invariant=1)
    frames = [Frame(54, 54, 246, 684, id="left"), Frame(312, 54, 246, 684, id="right")]
    doc.addPageTemplates([PageTemplate(id="two", frames=frames)])
    story = []
    for name, fact in (("Benchmarks", "The fast level compresses at 530 MB per second."),
                       ("Small data", "A trained dictionary helps records of one kilobyte."),
                       ("Building", "The makefile builds the library and the tool."),
                       ("Testing", "The fuzzers run every night on the main branch.")):
        story += [Paragraph(name, styles["Heading2"]),
                  *[Paragraph(f"{fact} " * 4, styles["BodyText"]) for _ in range(5)]]
    doc.build(story)
    text = load_file(path, "columns.pdf").text
    heads = [line for line in text.splitlines() if line.startswith("#")]
    # pdfminer reads this page's right column first: the order of the sections is its own
    assert sorted(heads) == ["# Benchmarks", "# Building", "# Small data", "# Testing"]
    for name, opening in (("Benchmarks", "The fast level"), ("Small data", "A trained"),
                          ("Building", "The makefile"), ("Testing", "The fuzzers")):
        after = text.split(f"# {name}\n\n", 1)[1]
        assert after.startswith(opening), (name, after[:80])  # under its own heading
    assert [line for line in text.splitlines() if line.strip() in
            ("Benchmarks", "Small data", "Building", "Testing")] == []  # not kept as text
