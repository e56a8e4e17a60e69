"""Which headings a chunk's section and structural context name: only a Markdown-shaped
document's, never a source file's `#` comments."""
from pathlib import Path

from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.contextualize.structural import structural_contexts
from ragkit.datasets import load_dataset
from ragkit.documents import Document

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
