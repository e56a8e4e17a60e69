"""What the faster read / chunk / save path must keep: the same checks, errors and rows."""
import json

import pytest

from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.documents import Chunk, Document, RagkitError, check_text, load_documents_jsonl
from ragkit.chunk_rows import chunk_line, read_chunks


def test_binary_text_is_still_refused_past_the_first_4096_characters():
    with pytest.raises(RagkitError, match="looks binary"):
        check_text("a" * 5000 + "\x00", "f.txt", 3)
    with pytest.raises(RagkitError, match="f.txt:3: field 'text': looks binary"):
        check_text("\x01\x02 ab" * 10, "f.txt", 3)  # 20 of 60 characters are controls
    assert check_text("tab\there\fform\r\n" + "\x07" * 1 + "x" * 20, "f.txt", 1)


def test_documents_jsonl_keeps_the_standard_library_verdicts(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "text": "fine", "metadata": {"score": NaN}}\n\n'
                    '{"id": "b", "text": "big", "metadata": {"n": 123456789012345678901234}}\n')
    docs = load_documents_jsonl(path)
    assert [d.id for d in docs] == ["a", "b"] and docs[1].metadata["n"] == 123456789012345678901234
    path.write_text('{"id": "a", "text": "ok"}\n{"id": "b", "text": oops}\n')
    with pytest.raises(RagkitError, match=r"docs.jsonl:2: malformed JSON \(Expecting value\)"):
        load_documents_jsonl(path)
    path.write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(RagkitError, match="docs.jsonl:1: not UTF-8 text"):
        load_documents_jsonl(path)
    path.write_text('["a list"]\n')
    with pytest.raises(RagkitError, match="docs.jsonl:1: expected a JSON object"):
        load_documents_jsonl(path)


def test_a_short_document_is_one_trimmed_chunk_and_a_long_one_is_still_split():
    doc = Document("d", "  \n Short text, kept whole.\n\n ", "T")
    [chunk] = chunk_document(doc, ChunkerConfig(16, 0))
    assert (chunk.text, chunk.start, chunk.end) == ("Short text, kept whole.", 4, 27)
    assert chunk.metadata == {"chunker": "prose", "title": "T", "section": []}
    # 40 single-character words: more tokens than the size, though under 16 per sentence
    long = Document("e", ("a b c d e f g h i j. " * 4).strip())
    assert [len(c.text.split()) for c in chunk_document(long, ChunkerConfig(16, 0))] == [10] * 4


def test_chunk_rows_orjson_cannot_write_are_written_by_json_and_read_back(tmp_path):
    chunk = Chunk("c#0", "c", "text", "ctx", 0, 4, {1: "int key", "big": 2 ** 70})
    line = chunk_line(chunk)
    assert json.loads(line) == {"id": "c#0", "doc_id": "c", "text": "text", "context": "ctx",
                                "start": 0, "end": 4, "metadata": {"1": "int key",
                                                                   "big": 2 ** 70}}
    (tmp_path / "chunks.jsonl").write_bytes(line + chunk_line(Chunk("d#0", "d", "é", "")))
    rows = read_chunks(tmp_path / "chunks.jsonl", 2)
    assert rows[0].metadata["big"] == 2 ** 70 and rows[1].text == "é"
    with pytest.raises(RagkitError, match="cannot be saved as JSON"):
        chunk_line(Chunk("x", "x", "t", metadata={"bad": object()}))
