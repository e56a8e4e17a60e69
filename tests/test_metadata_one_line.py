"""A metadata value written where one line is (a chunk's context, its title, the
`[Source: … | Section: …]` tag) is written on one line: each run of white space one space,
the ends stripped, while the metadata keep their lines. A YAML `|` / `>` block scalar, a TOML
`\"\"\"` string and a documents JSONL title carry line breaks (and YAML's final newline);
written as they were, they broke the context a chunk is embedded and searched with
(`product: Kestrel EG-400\\n; version: …`) and the tag a cited answer shows. Driven through
`ragkit index` and `ragkit tool docs_search` (offline)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ragkit import load_documents_jsonl, load_folder

RAGKIT = str(Path(sys.executable).parent / "ragkit")

GUIDE = ("---\ntitle: |\n  Kestrel gateway\n  field guide\nproduct: |\n  Kestrel EG-400\n"
         "version: >\n  2.10\n  beta\ncompany: \"Acme\\tPumps  Ltd\"\n---\n# Pairing\n\n"
         "Pair the gateway with the pump before first use.\n")
PUMP = ("+++\ntitle = \"Pump notes\"\nproduct = \"\"\"\nKestrel EG-400\n  EG-500\n\"\"\"\n+++\n"
        "# Priming\n\nPrime the pump with two litres of water.\n")


def _run(*args: str) -> str:
    done = subprocess.run([RAGKIT, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _index(docs: Path, out: Path) -> dict[str, dict]:
    """The chunk rows of `ragkit index docs` (no embedder: offline, a second), by doc id."""
    _run("index", str(docs), "--out", str(out), "--embedder", "none")
    rows = [json.loads(line) for line in (out / "chunks.jsonl").open(encoding="utf-8")]
    return {row["doc_id"]: row for row in rows}


def _tags(index: Path, query: str) -> list[str]:
    """The `[Source: … | Section: …]` tags `docs_search` gives the model, best first."""
    block = json.loads(_run("tool", "docs_search", "--root", str(index), "--index", str(index),
                            "--args", json.dumps({"query": query})))
    return [result["title"] for result in block["content"]]


def test_a_block_scalar_is_one_line_in_the_context_and_keeps_its_lines(tmp_path):
    """`product: |` gave the context `product: Kestrel EG-400\\n; version: 2.10 beta\\n.`,
    line breaks and all, in the text every chunk is embedded and searched with."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "pump.md").write_text(PUMP, encoding="utf-8")
    rows = _index(folder, tmp_path / "idx")
    assert rows["guide.md"]["context"] == (
        "Document: Kestrel gateway field guide. Path: guide.md. company: Acme Pumps Ltd; "
        "product: Kestrel EG-400; version: 2.10 beta.")
    assert rows["pump.md"]["context"] == (
        "Document: Pump notes. Path: pump.md. product: Kestrel EG-400 EG-500.")
    assert rows["guide.md"]["metadata"]["title"] == "Kestrel gateway field guide"
    assert sorted(_tags(tmp_path / "idx", "the pump")) == [
        "[Source: Kestrel gateway field guide | Section: Pairing]",
        "[Source: Pump notes | Section: Priming]"]
    guide, pump = load_folder(folder, progress=False)
    assert (guide.metadata["product"], guide.metadata["version"], guide.metadata["company"],
            pump.metadata["product"]) == ("Kestrel EG-400\n", "2.10 beta\n", "Acme\tPumps  Ltd",
                                          "Kestrel EG-400\n  EG-500\n")


def test_a_documents_jsonl_title_with_line_breaks_is_one_line_in_tag_and_context(tmp_path):
    """A JSONL title `Kestrel gateway\\nfield guide\\n` was the chunk's title as it was: the
    tag `[Source: Kestrel gateway\\nfield guide\\n | Section: Pairing]` ran over three
    lines in the prompt and in `ragkit ask`'s sources."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({
        "id": "g1", "title": "Kestrel gateway\nfield guide\n",
        "text": "# Pairing\n\nPair the gateway with the pump before first use.",
        "metadata": {"product": " Kestrel\r\nEG-400\n", "quarter": "\t"}}) + "\n" + json.dumps({
        "id": "g2", "title": " \n", "text": "# Priming\n\nPrime the pump with water."}) + "\n",
        encoding="utf-8")
    rows = _index(docs, tmp_path / "idx")
    assert [(row["metadata"]["title"], row["context"]) for row in rows.values()] == [
        ("Kestrel gateway field guide",
         "Document: Kestrel gateway field guide. product: Kestrel EG-400."),
        ("g2", "Document: g2.")]  # a title or value of blanks is none, as an empty one is
    assert sorted(_tags(tmp_path / "idx", "the pump")) == [
        "[Source: Kestrel gateway field guide | Section: Pairing]",
        "[Source: g2 | Section: Priming]"]
    first, second = load_documents_jsonl(docs)  # the title is one line, the metadata as given
    assert (first.title, first.metadata["product"], second.title) == (
        "Kestrel gateway field guide", " Kestrel\r\nEG-400\n", "")


def test_a_beir_corpus_title_with_line_breaks_is_one_line_in_its_tag(tmp_path):
    """A BEIR `corpus.jsonl` title is read as a documents JSONL title is: on one line."""
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(json.dumps({
        "_id": "d1", "title": "Kestrel gateway\n\tfield guide",
        "text": "Pair the gateway with the pump before first use."}) + "\n", encoding="utf-8")
    row = _index(beir, tmp_path / "idx")["d1"]
    assert (row["metadata"]["title"], row["context"]) == (
        "Kestrel gateway field guide", "Document: Kestrel gateway field guide.")
    assert _tags(tmp_path / "idx", "the pump") == [
        "[Source: Kestrel gateway field guide | Section: —]"]


def test_a_metadata_value_that_is_nan_or_null_is_left_out_of_the_context(tmp_path: Path):
    """pandas writes an empty cell as `NaN` in JSON: "company: nan" went into every chunk's
    context, embedded and searched with it."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "r", "text": "Revenue grew by eight percent.", "title": "Report", '
                    '"metadata": {"company": NaN, "quarter": "Q3 2024", "date": Infinity, '
                    '"product": [NaN, "EG-400", null], "version": null}}\n')
    row = _index(docs, tmp_path / "ix")["r"]
    assert row["context"] == "Document: Report. quarter: Q3 2024; product: EG-400."
