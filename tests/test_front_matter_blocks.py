"""Front matter block scalars (`|`, `>`) read by ragkit's lenient reader, and the front
matter YAML refuses that Markdown folders hold, still read. Through `load_folder` and
`ragkit index` of a folder (the chunk's title and context)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ragkit import load_folder

RAGKIT = str(Path(sys.executable).parent / "ragkit")


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
                     "pump.\n  Then prime it.\nsummary: >\n  Moves 12 litres\n  a minute.\n\n"
                     "  Quietly.\nnote: |-\n  no final newline\nproduct: EG-400\n---\n"
                     "The pump moves water.\n")
    (doc,) = load_folder(folder, progress=False)
    assert doc.metadata == {"title": "Pump guide",
                            "description": "Install the pump.\nThen prime it.\n",
                            "summary": "Moves 12 litres a minute.\nQuietly.\n",
                            "note": "no final newline", "product": "EG-400",
                            "path": "pump.md"}
    assert doc.text == "The pump moves water.\n"


def test_front_matter_yaml_refuses_is_still_read_not_made_text(tmp_path):
    """A strict YAML reader refuses `title:Kestrel setup` (no space) and a list indented by
    a tab, and left such a block as the document's text, its closing `---` underlining the
    last key into a made-up heading every chunk carried. Markdown folders hold both."""
    folder = _folder(tmp_path, setup="---\ntitle:Kestrel setup\n---\n\nSome text.\n",
                     pair="---\ntitle: Kestrel pairing guide\ntags:\n\t- gateway\n---\n\n"
                     "# Pairing\n\nHold 5 s.\n")
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = {row["doc_id"]: row for row in map(
        json.loads, (tmp_path / "idx" / "chunks.jsonl").open(encoding="utf-8"))}
    assert (rows["setup.md"]["text"], rows["setup.md"]["metadata"]["title"]) == (
        "Some text.", "Kestrel setup")
    assert rows["pair.md"]["metadata"]["title"] == "Kestrel pairing guide"
    pair = next(doc for doc in load_folder(folder, progress=False) if doc.id == "pair.md")
    assert pair.metadata["tags"] == ["gateway"]
    assert rows["pair.md"]["text"] == "# Pairing\n\nHold 5 s."
