"""A citation's `Section:` names the heading over the cited sentence, not the heading where
its chunk happens to start (notebook 04's BadCertificateUntrusted answer)."""
from __future__ import annotations

from pathlib import Path

from ragkit import standin
from ragkit.answer import answer
from ragkit.assemble import section_at
from ragkit.chunking import chunk_document
from ragkit.datasets import load_shipped
from ragkit.documents import Chunk
from ragkit.llm import LLM, make_client

DATA = Path(__file__).resolve().parent.parent / "data"
MANUAL = "Kestrel EG-400 Edge Gateway — Installation and Operation Manual"


def _offline() -> LLM:
    return LLM(make_client(max_retries=0, transport=standin.transport(standin.respond)),
               cache=False)


def test_the_cited_sentence_is_labelled_with_its_own_heading():
    data = load_shipped(DATA)
    manual = next(d for d in data.documents if d.id == "manuals/kestrel-eg400-manual.md")
    chunk = next(c for c in chunk_document(manual) if "BadCertificateUntrusted" in c.text)
    # the chunk starts under 3.1's Limits and runs on into 3.2 OPC UA client
    assert chunk.metadata["section"][-2:] == ["3.1 Modbus polling", "Limits"]
    result = answer("What does the error BadCertificateUntrusted mean on the Kestrel gateway?",
                    [(chunk.id, 1.0)], [chunk], llm=_offline())
    assert "BadCertificateUntrusted" in result.text and not result.declined
    assert result.sources == ((chunk.id, f"[Source: {MANUAL} | Section: {MANUAL} > "
                                         "3. Data collection > 3.2 OPC UA client > "
                                         "Troubleshooting]"),)
    assert all(c.title == result.sources[0][1] for c in result.citations)


def test_section_at_follows_the_headings_before_a_block():
    start = ["Manual", "3. Data", "3.1 Modbus", "Limits"]
    assert section_at(start, []) == start
    assert section_at(start, ["text", "#### Troubleshooting\n"]) == \
        ["Manual", "3. Data", "3.1 Modbus", "Troubleshooting"]
    assert section_at(start, ["### 3.2 OPC UA\n", "#### Limits\n", "## 4. Security\n"]) == \
        ["Manual", "4. Security"]
    assert section_at([], ["# Title\n", "text"]) == ["Title"]


def test_a_chunk_without_headings_keeps_its_section_and_code_comments_are_not_headings():
    code = Chunk("src/app.py#1", "src/app.py", "def pay():\n    # Refunds\n    return 1\n",
                 metadata={"title": "src/app.py", "section": ["def pay"]})
    result = answer("What does pay return?", [(code.id, 1.0)], [code], llm=_offline())
    assert all(tag.endswith("| Section: def pay]") for _, tag in result.sources)
