import pytest

from ragkit.chunking import ChunkerConfig, chunk_document, count_tokens, is_code
from ragkit.documents import Document, RagkitError


def _prose(sections: int = 4, sentences: int = 60) -> str:
    return "\n\n".join(f"# Part {s}\n\n" + " ".join(f"Sentence {s} {i} says {i * s}."
                                                     for i in range(sentences))
                       for s in range(sections))


def test_short_document_is_one_whole_chunk():
    doc = Document("faq.md", "  Refunds take 7 days.\n")
    (chunk,) = chunk_document(doc)
    assert (chunk.id, chunk.text, chunk.start, chunk.end) == ("faq.md#0", "Refunds take 7 days.", 2, 22)


def test_chunks_respect_budget_overlap_and_offsets():
    doc = Document("guide.md", _prose())
    config = ChunkerConfig(size=128, overlap=16)
    chunks = chunk_document(doc, config)
    assert len(chunks) > 4
    for n, chunk in enumerate(chunks):
        assert chunk.id == f"guide.md#{n}"
        assert doc.text[chunk.start:chunk.end] == chunk.text
        assert count_tokens(chunk.text) <= 128
    for prev, nxt in zip(chunks, chunks[1:]):
        assert nxt.start < prev.end  # neighbours overlap
        assert count_tokens(doc.text[nxt.start:prev.end]) <= 16 + 1
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())


def test_headings_are_preferred_split_points():
    doc = Document("g.md", _prose(sections=3, sentences=12))  # each section ~60 tokens
    chunks = chunk_document(doc, ChunkerConfig(size=80, overlap=0))
    assert [c.text.splitlines()[0] for c in chunks] == ["# Part 0", "# Part 1", "# Part 2"]


def test_ids_are_stable_across_runs():
    doc = Document("g.md", _prose())
    assert chunk_document(doc, ChunkerConfig(100, 10)) == chunk_document(doc, ChunkerConfig(100, 10))


def test_code_splits_at_top_level_definitions():
    body = "\n".join(f"    x{i} = compute({i})" for i in range(12))
    source = "\n\n".join(f"def handler_{n}():\n{body}\n    return x0" for n in range(6))
    doc = Document("svc/handlers.py", source)
    assert is_code(doc)
    chunks = chunk_document(doc, ChunkerConfig(size=120, overlap=0))
    assert len(chunks) >= 3
    assert all(c.text.startswith("def handler_") for c in chunks)
    assert chunks[0].metadata["chunker"] == "code"


def test_word_level_fallback_for_one_long_line():
    doc = Document("blob.txt", " ".join(f"w{i}" for i in range(300)))
    chunks = chunk_document(doc, ChunkerConfig(size=100, overlap=10))
    assert all(count_tokens(c.text) <= 100 for c in chunks)
    assert chunks[-1].text.endswith("w299")


@pytest.mark.parametrize("size, overlap", [(8, 0), (100, 60), (100, -1)])
def test_bad_config_is_rejected(size, overlap):
    with pytest.raises(RagkitError):
        ChunkerConfig(size, overlap)
