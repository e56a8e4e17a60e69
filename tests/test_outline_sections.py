"""Which headings a chunk's section and structural context name: only a Markdown-shaped
document's, never a source file's `#` comments; those in force at the chunk's first line,
a heading the chunk opens with, or starts inside, included whole."""
from pathlib import Path

from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.contextualize.structural import structural_contexts
from ragkit.datasets import load_dataset
from ragkit.documents import Document
from ragkit.outline import Outline

ROOT = Path(__file__).resolve().parent.parent


DEFAULT = ChunkerConfig()


def _contexts(doc: Document, config: ChunkerConfig = DEFAULT) -> list[str]:
    return structural_contexts(doc, chunk_document(doc, config))


def test_a_comment_in_a_shipped_source_file_is_no_section():
    """refund.py's `# Shipping is paid back only if …` comment was read as a Markdown
    heading: the context of its second chunk stated it as the chunk's section."""
    docs = load_dataset(ROOT / "data").documents
    refund = next(d for d in docs if d.id == "code/shopcore/payments/refund.py")
    assert _contexts(refund)[1] == (
        "Document: code/shopcore/payments/refund.py. In: def calculate_refund. "
        'Document opens: """Refund amounts and refund records.')


def test_the_same_text_has_headings_as_markdown_and_none_as_code():
    """Decided by the document: the lines that head a Markdown file's sections are comments
    in a shell script, which keeps its definitions."""
    text = ("# Deploy the shop\n\nfunction deploy {\n" + "  echo step one two three\n" * 30
            + "}\n\n# Roll back\n\nfunction rollback {\n" + "  echo undo four five\n" * 30
            + "}\n")
    config = ChunkerConfig(64, 8)
    script = _contexts(Document("ops/deploy.sh", text, "ops/deploy.sh"), config)
    notes = _contexts(Document("ops/deploy.md", text, "ops/deploy.md"), config)
    deploy, rollback = "In: function deploy.", "In: function rollback."
    opens = " Document opens: Deploy the shop"
    assert script == ["Document: ops/deploy.sh."] + [
        f"Document: ops/deploy.sh. {where}{opens}" for where in [deploy] * 3 + [rollback] * 2]
    assert notes == ["Document: ops/deploy.md."] + [
        f"Document: ops/deploy.md. Section: {where}" for where in
        [f"Deploy the shop. {deploy}"] * 3 + [f"Roll back. {rollback}{opens}"] * 2]


def _shipped(doc_id: str) -> tuple[Document, list]:
    doc = next(d for d in load_dataset(ROOT / "data").documents if d.id == doc_id)
    return doc, chunk_document(doc)


def test_a_chunk_opening_with_a_heading_is_in_that_heading_s_section():
    """The context of a chunk starting at `### 5.3 Audit log` read the headings of the text
    before it: the audit log chunk was stated to be '5.2 Certificates > Troubleshooting'."""
    doc, chunks = _shipped("manuals/kestrel-eg400-manual.md")
    chunk = chunks[12]
    assert chunk.text.startswith("### 5.3 Audit log\n\nEvery login")
    path = ["Kestrel EG-400 Edge Gateway — Installation and Operation Manual", "5. Security",
            "5.3 Audit log"]
    assert chunk.metadata["section"] == path
    assert structural_contexts(doc, chunks)[12].endswith(
        "version: firmware 5.4, manual revision C. Section: " + " > ".join(path) + ".")


def test_a_chunk_starting_inside_a_heading_line_reads_the_whole_heading():
    """A chunk whose overlap starts after `## Segment` (its first word "results") had the
    heading cut there as its section, "Segment"."""
    doc, chunks = _shipped("reports/northwind-2024-q3.md")
    assert chunks[2].text.startswith("results\n\nThe three reporting segments")
    path = ["Northwind Robotics — Quarterly Report, Q3 2024", "Segment results"]
    assert chunks[2].metadata["section"] == path
    assert structural_contexts(doc, chunks)[2].endswith(
        "date: 2024-10-29. Section: " + " > ".join(path) + ".")


def test_headings_are_those_in_force_at_the_offset_s_line_near_and_far():
    """The same answers where offsets are rescanned directly and past `DIRECT`, where the
    outline's index of the whole text's headings answers."""
    for pad in ("", "filler words here.\n" * 400):
        text = f"# Manual\n\n{pad}## Brakes\n\nInspect the pads.\n## Engine ##\n\nOil.\n"
        found = Outline(text)
        brakes, engine = text.index("## Brakes"), text.index("## Engine")
        assert found.headings(0) == ["Manual"]
        assert found.headings(brakes) == ["Manual", "Brakes"]  # its heading's own start
        assert found.headings(brakes + 5) == ["Manual", "Brakes"]  # inside it: whole
        assert found.headings(brakes - 1) == ["Manual"]  # the line before
        assert found.headings(engine + 4) == ["Manual", "Engine"]
        assert found.headings(len(text)) == ["Manual", "Engine"]
