"""`ragkit index --update --skip-bad` over a folder where a file (or a subfolder) is there but
cannot be read now — its permissions changed — keeps the document as the index holds it, and
says so in one line; it dropped it as if the file had been deleted ("1 removed"). Run as a
user: root reads every file, so as root the command runs with its capabilities dropped."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RAGKIT = str(Path(sys.executable).parent / "ragkit")
FILES = {"depot.md": "# Depot\n\nThe north gate of the depot opens at six.\n",
         "kettle.md": "# Kettle\n\nThe kettle descales monthly with vinegar.\n",
         "notes/soil.md": "# Soil\n\nApply two tonnes of lime per hectare to acidic soil.\n",
         "pump.md": "# Pump\n\nThe pump runs at four bar.\n"}


def _as_user() -> list[str]:
    """The prefix that runs a command without root's power to read any file."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and no setpriv to drop root's capabilities")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all", "--"]


def _ragkit(tmp_path: Path, *args: str, user: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([*(_as_user() if user else []), RAGKIT, *args], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")})


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    done = _ragkit(tmp_path, "index", str(tmp_path / "docs"), "--out", str(tmp_path / "idx"),
                   "--embedder", "none")
    assert done.returncode == 0, done.stderr
    return tmp_path / "docs"


@pytest.mark.parametrize("locked", ["notes/soil.md", "notes"])
def test_a_file_unreadable_now_keeps_its_indexed_version(tmp_path, docs, locked):
    (docs / "new.md").write_text("# New\n\nThe new note is about compost.\n")
    (docs / locked).chmod(0)
    try:
        done = _ragkit(tmp_path, "index", str(docs), "--out", str(tmp_path / "idx"), "--update",
                       "--skip-bad", user=True)
    finally:
        (docs / locked).chmod(0o755 if locked == "notes" else 0o644)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"updated {tmp_path / 'idx'}: 1 document added or changed, "
                           f"0 removed, 3 unchanged, 1 kept as indexed; 5 chunks\n")
    assert ("ragkit: warning: kept the indexed version of 1 document whose file is there but "
            "cannot be read now: notes/soil.md (make it readable and update again)"
            ) in done.stderr.splitlines()
    # the document stays where a build of the folder puts it, as if it had been read
    fresh = _ragkit(tmp_path, "index", str(docs), "--out", str(tmp_path / "fresh"),
                    "--embedder", "none")
    assert fresh.returncode == 0, fresh.stderr
    assert ((tmp_path / "idx" / "chunks.jsonl").read_text()
            == (tmp_path / "fresh" / "chunks.jsonl").read_text())


def test_a_file_that_reads_but_is_bad_now_is_still_removed(tmp_path, docs):
    (docs / "notes" / "soil.md").write_bytes(b"")  # emptied: what it holds is known, and bad
    done = _ragkit(tmp_path, "index", str(docs), "--out", str(tmp_path / "idx"), "--update",
                   "--skip-bad", user=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"updated {tmp_path / 'idx'}: 0 documents added or changed, "
                           f"1 removed, 3 unchanged; 3 chunks\n")
    assert "kept the indexed" not in done.stderr


def test_a_locked_folder_holding_most_documents_is_no_removal(tmp_path):
    """The --update guard counted the documents kept as indexed as removed: a locked folder
    holding 4 of 7 documents stopped the update with "would remove 4 of the index's 7
    documents", though nothing would be removed."""
    more = {f"notes/{name}.md": f"# {name}\n\nNote {name} is about the orchard.\n"
            for name in ("a", "b", "c")}
    for name, text in {**FILES, **more}.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    built = _ragkit(tmp_path, "index", str(tmp_path / "docs"), "--out", str(tmp_path / "idx"),
                    "--embedder", "none")
    assert built.returncode == 0, built.stderr
    (tmp_path / "docs" / "notes").chmod(0)
    try:
        done = _ragkit(tmp_path, "index", str(tmp_path / "docs"), "--out",
                       str(tmp_path / "idx"), "--update", "--skip-bad", user=True)
    finally:
        (tmp_path / "docs" / "notes").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"updated {tmp_path / 'idx'}: 0 documents added or changed, "
                           f"0 removed, 3 unchanged, 4 kept as indexed\n")
