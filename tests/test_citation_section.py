"""A citation's `Section:` names the heading over the cited sentence, not the heading where
its chunk happens to start (notebook 04's BadCertificateUntrusted answer)."""
from __future__ import annotations

from pathlib import Path

from ragkit import standin
from ragkit.answer import answer
from ragkit.citation_tags import section_at
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
    # blocks as `blocks` cuts them: each keeps the line break after it (they join to the text)
    assert section_at(start, ["text\n", "#### Troubleshooting\n"]) == \
        ["Manual", "3. Data", "3.1 Modbus", "Troubleshooting"]
    assert section_at(start, ["### 3.2 OPC UA\n", "#### Limits\n", "## 4. Security\n"]) == \
        ["Manual", "4. Security"]
    assert section_at([], ["# Title\n", "text"]) == ["Title"]
    assert section_at([], ["text.", "# Not a heading\n"]) == []  # mid-line, after a sentence
    # a page that skips levels (<h1>, then <h3>s): the <h3>s are siblings, not nested
    assert section_at(["FAQ"], ["### Abroad?\n", "Yes.\n", "### Cost?\n"]) == ["FAQ", "Cost?"]
    assert section_at([], ["# FAQ\n", "### Abroad?\n", "## Orders\n"]) == ["FAQ", "Orders"]


def test_a_chunk_without_headings_keeps_its_section_and_code_comments_are_not_headings():
    code = Chunk("src/app.py#1", "src/app.py", "def pay():\n    # Refunds\n    return 1\n",
                 metadata={"title": "src/app.py", "section": ["def pay"]})
    result = answer("What does pay return?", [(code.id, 1.0)], [code], llm=_offline())
    assert all(tag.endswith("| Section: def pay]") for _, tag in result.sources)


def test_a_numbered_heading_cut_into_blocks_keeps_its_words():
    """`blocks` cuts "## 2. Cooling-off period" after "2."; read block by block the source
    list printed "Returns and Refund Policy / 2. > 2.1 Right to cancel" on the shipped
    refund policy."""
    from ragkit.assemble import blocks
    text = "## 2. Cooling-off period\n\n### 2.1 Right to cancel\n\nYou may cancel."
    assert blocks(text)[0] == "## 2. "  # why: the heading is two blocks
    assert section_at(["T"], blocks(text)) == ["T", "2. Cooling-off period",
                                               "2.1 Right to cancel"]


def test_ragkit_ask_names_the_whole_numbered_heading_in_its_sources(tmp_path, monkeypatch,
                                                                    capsys):
    from ragkit.cli import main
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    docs = tmp_path / "docs.jsonl"
    text = ("# Refund policy\n\n## 1. Scope\n\nThis policy covers orders.\n\n"
            "## 2. Cooling-off period\n\nYou may cancel within 14 days of delivery.")
    docs.write_text('{"id": "refund", "title": "Refund policy", "text": %s}\n'
                    % __import__("json").dumps(text))
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    capsys.readouterr()
    assert main(["ask", "--index", str(tmp_path / "idx"), "--k", "1",
                 "Within how many days may I cancel?"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "[1] refund#0 — Refund policy / 2. Cooling-off period"


def test_a_citation_of_a_headings_first_half_reads_the_whole_line():
    """Cited at the heading's first block ("## 2. "), the section still read "2."."""
    from ragkit.answer import _cited_title
    from ragkit.assemble import blocks
    pieces = blocks("Intro text.\n## 2. Cooling-off period\nYou may cancel within 14 days.\n")
    assert pieces[1] == "## 2. "
    result = {"title": "[Source: Terms | Section: Terms]", "source": "terms.md#0",
              "content": [{"type": "text", "text": p} for p in pieces]}
    assert _cited_title(result, 1) == "[Source: Terms | Section: Terms > 2. Cooling-off period]"
    assert _cited_title(result, 0) == "[Source: Terms | Section: Terms]"
