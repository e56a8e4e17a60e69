"""Text in Unicode's decomposed form (NFD), as macOS writes Hangul and accents: a document,
a question and a golden span read in the composed form (NFC) whatever form each came in, so
a question typed on one machine finds a document saved on another, and a span copied from
either matches."""
from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from ragkit.document_folder import load_folder
from ragkit.documents import (Document, check_golden, load_documents_jsonl, load_golden,
                              load_queries_jsonl)
from ragkit.loaders.pages import composed, page_at

SENTENCE = "다음 회의는 3월 15일 오후 2시에 열린다."


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_a_decomposed_file_of_a_folder_reads_as_composed_text(tmp_path):
    (tmp_path / _nfd("회의록.md")).write_text(_nfd(f"# 회의록\n\n{SENTENCE}\n"), "utf-8")
    (doc,) = load_folder(tmp_path, progress=False)
    assert doc.text == f"# 회의록\n\n{SENTENCE}\n" and doc.title == "회의록"


def test_a_composed_golden_span_matches_a_decomposed_file(tmp_path):
    """The span typed by hand (NFC) was "not found verbatim" in the macOS file (NFD) that
    shows the same sentence."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / _nfd("회의록.md")).write_text(_nfd(f"# 회의록\n\n{SENTENCE}\n"), "utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "g1", "question": "다음 회의는 언제인가요?", "golden": [
        {"doc_id": "회의록.md", "span": SENTENCE}]}, ensure_ascii=False) + "\n", "utf-8")
    (query,) = check_golden(load_golden(golden), load_folder(docs, progress=False), golden)
    assert query.golden[0].span == SENTENCE


def test_decomposed_questions_spans_and_jsonl_documents_read_composed(tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q", "text": _nfd("회의는 언제?"), "golden": [
        {"doc_id": "a", "span": _nfd(SENTENCE)}]}, ensure_ascii=False) + "\n", "utf-8")
    (query,) = load_queries_jsonl(queries)
    assert query.text == "회의는 언제?" and query.golden[0].span == SENTENCE
    docs = tmp_path / "d.jsonl"
    docs.write_text(json.dumps({"id": "a", "text": _nfd(SENTENCE), "title": _nfd("회의록")},
                               ensure_ascii=False) + "\n", "utf-8")
    (doc,) = load_documents_jsonl(docs)
    assert doc.text == SENTENCE and doc.title == "회의록"


def test_a_page_map_moves_with_the_composed_text():
    """Page 2 starts where its first syllable is in the composed text: decomposition made
    every syllable two or three characters."""
    first, second = _nfd("첫 쪽의 문장이다.\n\n"), _nfd("둘째 쪽의 문장이다.")
    doc = composed(Document("a.pdf", first + second, "a.pdf",
                            {"pages": [[1, 0], [2, len(first)]]}))
    start = doc.text.index("둘째")
    assert doc.text == "첫 쪽의 문장이다.\n\n둘째 쪽의 문장이다."
    assert doc.metadata["pages"] == [[1, 0], [2, start]]
    assert page_at(doc.metadata["pages"], start) == 2
    assert page_at(doc.metadata["pages"], start - 1) == 1
