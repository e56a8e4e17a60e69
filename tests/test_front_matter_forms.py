"""Front matter as static-site generators and note apps write it: YAML lists and Hugo's TOML,
read through `ragkit index` of a folder (the chunk's context and title) and `load_folder`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ragkit import load_folder
from ragkit.folder_summary import file_summary

RAGKIT = str(Path(sys.executable).parent / "ragkit")


def _index(folder: Path, out: Path) -> list[dict]:
    """The chunk rows of `ragkit index folder` (no embedder: offline, a second)."""
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(out), "--embedder", "none"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (out / "chunks.jsonl").open(encoding="utf-8")]


def test_yaml_lists_are_read_as_lists(tmp_path):
    """`product: [a, b]` was the text `[a, b]` in every chunk's context, and a `- item` block
    under a key read as empty (its items, when they held `: `, became keys of their own)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "setup.md").write_text(
        '---\ntitle: Setup\nproduct: [Kestrel EG-400, "EG-500, rev. B"]\nversion:\n'
        '  - "2.1"\n  - 2.2\ntags:\n- hardware\n- "Note: new"\nlinks:\n  - url: x.example\n'
        'date: 2024-05-01\n---\nPlug the gateway in before you pair it.\n', encoding="utf-8")
    (row,) = _index(folder, tmp_path / "idx")
    assert row["context"] == ("Document: Setup. Path: setup.md. date: 2024-05-01; product: "
                              "Kestrel EG-400, EG-500, rev. B; version: 2.1, 2.2.")
    (doc,) = load_folder(folder, progress=False)
    assert doc.metadata == {"title": "Setup", "product": ["Kestrel EG-400", "EG-500, rev. B"],
                            "version": ["2.1", "2.2"], "tags": ["hardware", "Note: new"],
                            "links": "", "date": "2024-05-01", "path": "setup.md"}
    assert doc.text == "Plug the gateway in before you pair it.\n"


def test_hugo_toml_front_matter_is_metadata_not_text(tmp_path):
    """Hugo's `+++` TOML block was the opening text of the page's first chunk, and the page's
    title its file name. A table (`[params]`) is not read; a `+++` block that is not TOML
    stays text, as before."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "pair.md").write_text(
        '+++\ntitle = "Pairing: the gateway"\ndate = 2024-05-01\ndraft = false\n'
        'product = ["Kestrel EG-400", "EG-500"]\nversion = "2.1"\nweight = 10\n'
        '[params]\ncompany = "Kestrel"\n+++\n\n## Steps\n\nHold the button for five seconds.\n',
        encoding="utf-8")
    (folder / "plus.md").write_text("+++\nnot = toml = here\n+++\nBody text.\n",
                                    encoding="utf-8")
    pair, plus = _index(folder, tmp_path / "idx")
    assert pair["metadata"]["title"] == "Pairing: the gateway"
    assert pair["text"] == "## Steps\n\nHold the button for five seconds."
    assert pair["context"] == ("Document: Pairing: the gateway. Path: pair.md. date: "
                               "2024-05-01; product: Kestrel EG-400, EG-500; version: 2.1.")
    assert (plus["metadata"]["title"], plus["text"]) == (
        "plus.md", "+++\nnot = toml = here\n+++\nBody text.")
    docs = load_folder(folder, progress=False)
    assert docs[0].metadata == {"title": "Pairing: the gateway", "date": "2024-05-01",
                                "draft": "false", "product": ["Kestrel EG-400", "EG-500"],
                                "version": "2.1", "weight": "10", "path": "pair.md"}


def test_a_dashed_block_without_keys_is_a_title_not_front_matter(tmp_path):
    """A reStructuredText file opening with its title over- and underlined by `---` (`FAQ`)
    lost it as front matter of no key: the document was titled by its next section, which
    headed the text as its top level. A `---` block holding a `key:` is still front matter."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "faq.rst").write_text("---\nFAQ\n---\n\nThe limit is 3 bar.\n\nReset\n=====\n\n"
                                    "Unplug it.\n", encoding="utf-8")
    (folder / "notes.rst").write_text("---\ntitle: Notes\n---\nSome notes.\n", encoding="utf-8")
    faq, notes = _index(folder, tmp_path / "idx")
    assert (faq["metadata"]["title"], faq["metadata"]["section"], faq["text"]) == (
        "FAQ", ["FAQ"], "# FAQ\n\nThe limit is 3 bar.\n\n## Reset\n\nUnplug it.")
    assert (notes["metadata"]["title"], notes["text"]) == ("Notes", "Some notes.")


def test_a_pages_key_in_front_matter_does_not_stop_the_index(tmp_path):
    """`pages: 320` (a book's length) or `pages: [12, 14]` was taken for a PDF's page map by
    the chunker: `ragkit index` stopped with a ValueError traceback. A text file has no page
    map; its other keys are read as ever."""
    folder = tmp_path / "books"
    folder.mkdir()
    (folder / "soil.md").write_text("---\ntitle: Soil\npages: 320\nproduct: Loam\n---\n"
                                    "Soil holds water.\n", encoding="utf-8")
    (folder / "clay.md").write_text("---\ntitle: Clay\npages: [12, 14]\n---\nClay drains "
                                    "slowly.\n", encoding="utf-8")
    clay, soil = _index(folder, tmp_path / "idx")
    assert (clay["text"], clay["metadata"]) == (
        "Clay drains slowly.", {"chunker": "prose", "title": "Clay", "section": []})
    assert (soil["text"], soil["context"]) == (
        "Soil holds water.", "Document: Soil. Path: soil.md. product: Loam.")
    assert [doc.metadata for doc in load_folder(folder, progress=False)] == [
        {"title": "Clay", "path": "clay.md"},
        {"title": "Soil", "product": "Loam", "path": "soil.md"}]


def test_front_matter_fences_may_end_in_spaces(tmp_path):
    """`--- ` (an editor's trailing space; Jekyll reads it) opened no front matter: its lines
    were text, and the last of them, over the closing `---`, an underlined heading
    (`## title: Pump guide product: EG-400`). Hugo's `+++ ` likewise."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "pump.md").write_text("--- \ntitle: Pump guide\nproduct: EG-400\n---  \n\nThe "
                                    "pump moves 12 litres a minute.\n", encoding="utf-8")
    (folder / "valve.md").write_text('+++\t\ntitle = "Valve guide"\n+++ \nThe valve opens at '
                                     '3 bar.\n', encoding="utf-8")
    pump, valve = _index(folder, tmp_path / "idx")
    assert (pump["text"], pump["context"]) == (
        "The pump moves 12 litres a minute.",
        "Document: Pump guide. Path: pump.md. product: EG-400.")
    assert (valve["metadata"]["title"], valve["text"]) == ("Valve guide",
                                                           "The valve opens at 3 bar.")


def test_a_yaml_or_sql_files_dashes_are_its_text_not_front_matter(tmp_path):
    """A Kubernetes YAML stream opens with `---`, and so may an SQL file's comment banner:
    the first document (the Service) or the banner was read as front matter and left out
    of the index without a word. Front matter tops Markdown and text files only."""
    folder = tmp_path / "repo"
    folder.mkdir()
    stream = ("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n---\napiVersion: "
              "apps/v1\nkind: Deployment\n")
    (folder / "deploy.yaml").write_text(stream, encoding="utf-8")
    (folder / "schema.sql").write_text("---\n-- Table: users\n---\nCREATE TABLE users (id INT);"
                                       "\n", encoding="utf-8")
    deploy, schema = _index(folder, tmp_path / "idx")
    assert (deploy["text"], deploy["metadata"]["title"]) == (stream.strip(), "deploy.yaml")
    assert schema["text"] == "---\n-- Table: users\n---\nCREATE TABLE users (id INT);"
    assert [doc.metadata for doc in load_folder(folder, progress=False)] == [
        {"path": "deploy.yaml"}, {"path": "schema.sql"}]


def test_a_title_written_over_lines_is_one_line_in_the_answers_sources(tmp_path):
    """A TOML or YAML string title may hold line breaks: `ragkit ask` printed its source as
    `[1] a.md#0 — Boiler` over a line `guide`."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text('+++\ntitle = """Boiler\nguide"""\n+++\n\n'
                                 "The boiler pressure limit is 3 bar.\n", encoding="utf-8")
    (folder / "b.md").write_text('---\ntitle: "Pump\\nmanual"\n---\n\nPumps move water.\n',
                                 encoding="utf-8")
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    asked = subprocess.run([RAGKIT, "ask", "--index", str(tmp_path / "idx"), "--k", "2",
                            "What is the boiler pressure limit?"], capture_output=True,
                           text=True, env={k: v for k, v in os.environ.items()
                                           if k != "ANTHROPIC_API_KEY"})
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.splitlines()[-1] == "[1] a.md#0 — Boiler guide"
    assert [d.title for d in load_folder(folder, progress=False)] == ["Boiler guide",
                                                                      "Pump manual"]


def test_front_matter_closed_by_yamls_document_end_is_metadata(tmp_path):
    """Pandoc and Jekyll close a `---` block with YAML's `...` too: the block was the text of
    the first chunk, and the document titled by its file name."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "pump.md").write_text("---\ntitle: Pump guide\nproduct: EG-400\n...\n\nThe pump "
                                    "moves 12 litres a minute.\n", encoding="utf-8")
    (pump,) = _index(folder, tmp_path / "idx")
    assert (pump["text"], pump["context"]) == (
        "The pump moves 12 litres a minute.",
        "Document: Pump guide. Path: pump.md. product: EG-400.")


def test_a_format_key_in_front_matter_is_metadata_not_the_files_format(tmp_path):
    """`format: slides` in a Markdown file's front matter named the file's format in the
    folder summary: the table said "slides" for a Markdown file. The column says what the
    file is read as; the key stays in the document's metadata under its own name."""
    folder = tmp_path / "talks"
    folder.mkdir()
    (folder / "kickoff.md").write_text("---\ntitle: Kickoff\nformat: slides\n---\n"
                                       "# Goals\n\nShip the pump app in May.\n", encoding="utf-8")
    (folder / "notes.htm").write_text("<html><body><h1>Notes</h1><p>Ship in May.</p>"
                                      "</body></html>", encoding="utf-8")
    docs = load_folder(folder, progress=False)
    assert [(row["file"], row["format"], row["headings"]) for row in file_summary(docs)] == [
        ("kickoff.md", "md", 1), ("notes.htm", "html", 1)]
    assert docs[0].metadata == {"title": "Kickoff", "format": "slides", "path": "kickoff.md"}


def test_toml_nested_past_pythons_stack_stays_text(tmp_path):
    """`a = [[[…]]]` 500 deep (1 KB) stopped `ragkit index` with a RecursionError traceback,
    and `--skip-bad` did not help: like a block that is not TOML, it stays text."""
    folder = tmp_path / "site"
    folder.mkdir()
    block = "+++\na = " + "[" * 500 + "]" * 500 + "\n+++\n"
    (folder / "deep.md").write_text(block + "\nKestrel pairs in five seconds.\n")
    (deep,) = load_folder(folder, progress=False)
    assert (deep.title, deep.text) == ("deep.md", block + "\nKestrel pairs in five seconds.\n")
