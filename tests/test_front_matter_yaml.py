"""Front matter read as YAML reads it (PyYAML's safe loader): block scalars, comments and
quotes as Jekyll, Hugo, Obsidian and Quarto read them, every value its text as written, and
the one tolerance Markdown folders need (`title: Soil: a primer`, unquoted). Read through
`ragkit index` of a folder (the chunk's title and context) and `load_folder`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragkit import load_folder
from ragkit.loaders import front_matter

RAGKIT = str(Path(sys.executable).parent / "ragkit")


def _index(folder: Path, out: Path) -> list[dict]:
    """The chunk rows of `ragkit index folder` (no embedder: offline, a second)."""
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(out), "--embedder", "none"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (out / "chunks.jsonl").open(encoding="utf-8")]


def _folder(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return folder


def test_a_block_scalar_keeps_its_lines(tmp_path):
    """`description: |` over indented lines was the value `|`, its lines lost (and `>` the
    value `>`): a block scalar is the text YAML reads, its lines kept or folded."""
    folder = _folder(tmp_path, pump="---\ntitle: Pump guide\ndescription: |\n  Install the "
                     "pump.\n  Then prime it.\nsummary: >\n  Moves 12 litres\n  a minute.\n"
                     "product: EG-400\n---\nThe pump moves water.\n")
    (doc,) = load_folder(folder, progress=False)
    assert doc.metadata == {"title": "Pump guide",
                            "description": "Install the pump.\nThen prime it.\n",
                            "summary": "Moves 12 litres a minute.\n", "product": "EG-400",
                            "path": "pump.md"}
    assert doc.text == "The pump moves water.\n"


def test_a_comment_after_a_list_item_is_left_out(tmp_path):
    """`- EG-400  # old name` was the item `EG-400  # old name`, stated so in every chunk's
    context; YAML's comment is not part of the value, after an item or a value."""
    folder = _folder(tmp_path, setup="---\ntitle: Setup  # draft title\nproduct:\n"
                     "  - EG-400  # old name\n  - EG-500 # current\n  # - EG-300\n"
                     "version: 2.1 # firmware\n---\nPair the gateway.\n")
    (row,) = _index(folder, tmp_path / "idx")
    assert (row["metadata"]["title"], row["context"]) == (
        "Setup", "Document: Setup. Path: setup.md. product: EG-400, EG-500; version: 2.1.")
    (doc,) = load_folder(folder, progress=False)
    assert doc.metadata["product"] == ["EG-400", "EG-500"]


def test_a_quoted_value_holding_a_hash_keeps_it(tmp_path):
    """A `#` inside YAML quotes is text, and a comment after the closing quote is not: the
    title was `"Issue #12: pumps"  # from the tracker`, quotes and comment in every
    citation. Quoted list items keep their `#` too."""
    folder = _folder(tmp_path, issue="---\ntitle: \"Issue #12: pumps\"  # from the tracker\n"
                     "product: 'EG-400 #2' # the second run\nversion:\n  - \"C# SDK 2\"  # .NET\n"
                     "  - '#3'\n---\nThe pump stalls at 3 bar.\n")
    (row,) = _index(folder, tmp_path / "idx")
    assert (row["metadata"]["title"], row["context"]) == (
        "Issue #12: pumps", "Document: Issue #12: pumps. Path: issue.md. product: EG-400 #2; "
                            "version: C# SDK 2, #3.")


def test_values_are_their_text_as_written_and_a_title_may_hold_a_colon(tmp_path):
    """Markdown folders hold `title: Soil: a primer` unquoted, which YAML refuses: such a
    line is read as the text after `key: `, so the file keeps its title. YAML 1.1's types
    are not read: `draft: no` is not false, a product code `NO` stays `NO`, a version
    `2.10` is not 2.1, a date is its ISO text."""
    folder = _folder(tmp_path, soil="---\ntitle: Soil: a primer  # second edition\n"
                     "company: [Draft] Loam & Co\ndraft: no\nproduct: NO\nversion: 2.10\n"
                     "date: 2024-05-01\nquarter: 2024-05-01 10:30:00\nweight: 010\n"
                     "tags: [a, no]\n---\nSoil holds water.\n")
    (row,) = _index(folder, tmp_path / "idx")
    assert (row["metadata"]["title"], row["context"]) == (
        "Soil: a primer", "Document: Soil: a primer. Path: soil.md. company: [Draft] Loam & "
                          "Co; quarter: 2024-05-01 10:30:00; date: 2024-05-01; product: NO; "
                          "version: 2.10.")
    (doc,) = load_folder(folder, progress=False)
    assert (doc.metadata["draft"], doc.metadata["weight"], doc.metadata["tags"]) == (
        "no", "010", ["a", "no"])


def test_a_block_yaml_refuses_stays_text(tmp_path):
    """A list indented by a tab is no YAML (Jekyll refuses it too), and no `key: value` line
    of it is refused alone: the block is the document's text, as a `+++` block that is not
    TOML is, rather than metadata guessed at."""
    raw = "---\ntitle: Pumps\ntags:\n\t- water\n---\nThe pump moves water.\n"
    (doc,) = load_folder(_folder(tmp_path, pumps=raw), progress=False)
    assert (doc.title, doc.text, doc.metadata) == ("pumps.md", raw, {"path": "pumps.md"})


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_pyyaml_with_or_without_libyaml_reads_front_matter_alike(tmp_path, monkeypatch,
                                                                 loader):
    """PyYAML's own reader (no libyaml) reads `"\\ud800"` into half a surrogate pair, which
    no UTF-8 file can hold (the index stopped at its save); libyaml refuses it. Either way
    the value is its text as written, its quotes off, and the rest is read alike."""
    monkeypatch.setattr(front_matter, "_LOADER", getattr(yaml, loader))
    folder = _folder(tmp_path, soil='---\ntitle: "Soil \\ud800 primer"\nauthor: \'Ana\'\'s '
                     'lab\'\nproduct: "EG\\x2D400"\ntags:\n  - a # b\n  -\n---\nSoil.\n')
    (doc,) = load_folder(folder, progress=False)
    assert doc.metadata == {"title": "Soil \\ud800 primer", "author": "Ana's lab",
                            "product": "EG-400", "tags": ["a"], "path": "soil.md"}
