"""The sample collection: four of the shipped corpus's Markdown documents rendered to PDF,
HTML and Word by data/generators/make_sample_formats.py. The three formats of a document
must load to the same chunks (text up to white space, heading paths) and so retrieve alike
on the golden questions about those documents.

Tolerance: BM25 (no embedder, to keep the test fast) sees no white space, so the three
formats' top 5 must be identical, question by question; against the Markdown originals
(whose front matter adds product and version to each chunk's context, and whose tables
keep their `| --- |` rows) each format must put the same document first on every question
and miss at most one more question at 5 than the Markdown does.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.chunking import chunk_documents
from ragkit.config import IndexConfig, SearchConfig
from ragkit.document_folder import load_folder
from ragkit.documents import Document, load_golden
from ragkit.pipeline import Pipeline

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "data" / "generators" / "make_sample_formats.py"
FORMATS = ("pdf", "html", "docx")
DOCUMENTS = ("manuals/kestrel-eg400-manual", "notes/it-onboarding-faq",
             "policies/en/refund-policy", "policies/en/shipping-policy")


def _stem(doc_id: str) -> str:
    return str(Path(doc_id).with_suffix(""))


@pytest.fixture(scope="module")
def formats(tmp_path_factory) -> dict[str, list[Document]]:
    out = tmp_path_factory.mktemp("sample")
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = {fmt: list(load_folder(out / fmt)) for fmt in FORMATS}
    corpus = load_folder(ROOT / "data" / "corpus")
    loaded["md"] = [d for d in corpus if _stem(d.id) in DOCUMENTS]
    return loaded


def _chunks(docs: list[Document]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.id.replace(Path(c.doc_id).suffix + "#", "#"), " ".join(c.text.split()),
             tuple(c.metadata["section"])) for c in chunk_documents(docs)]


def test_three_formats_give_the_same_chunks_and_heading_paths(formats):
    assert sorted(_stem(d.id) for d in formats["pdf"]) == list(DOCUMENTS)
    pdf = _chunks(formats["pdf"])
    assert len(pdf) == 24
    assert _chunks(formats["html"]) == pdf
    assert _chunks(formats["docx"]) == pdf
    manual = next(d for d in formats["pdf"] if "kestrel" in d.id)
    assert len(manual.metadata["pages"]) == 12
    assert manual.title == "Kestrel EG-400 Edge Gateway — Installation and Operation Manual"
    assert ("Kestrel EG-400 Edge Gateway — Installation and Operation Manual",
            "3. Data collection", "3.1 Modbus polling", "Limits") in {c[2] for c in pdf}


def test_three_formats_retrieve_alike_on_the_golden_questions(formats):
    questions = [q for q in load_golden(ROOT / "data" / "golden")
                 if q.golden and all(_stem(g.doc_id) in DOCUMENTS for g in q.golden)]
    assert len(questions) >= 40
    top: dict[str, list[list[str]]] = {}
    passed: dict[str, int] = {}
    for name, docs in formats.items():
        pipeline = Pipeline.build(docs, IndexConfig(embedder=None), progress=False)
        runs = pipeline.search([q.text for q in questions], 5, SearchConfig(mode="bm25"))
        texts = {c.id: " ".join(c.text.replace("**", "").replace("`", "").split())
                 for c in pipeline.chunks}
        top[name] = [[i.replace(Path(i.split("#")[0]).suffix + "#", "#") for i, _ in run]
                     for run in runs]
        passed[name] = sum(all(any(" ".join(g.span.replace("**", "").replace("`", "").split())
                                   in texts[i] for i, _ in run) for g in q.golden)
                           for q, run in zip(questions, runs))
    assert top["html"] == top["pdf"] and top["docx"] == top["pdf"]
    for fmt in FORMATS:
        assert [r[0].split("#")[0] for r in top[fmt]] == [r[0].split("#")[0]
                                                          for r in top["md"]]
        assert passed[fmt] >= passed["md"] - 1
