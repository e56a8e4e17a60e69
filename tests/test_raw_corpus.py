"""`raw_corpus`: the raw files notebooks 06 and 07 grep (CRAG's fallback, the agent's tools).

A `corpus/` folder is used as it is; a `documents.jsonl` is written once as files into
`$RAGKIT_HOME/cache/corpora/<hash>/` — each id its relative path, unsafe ids under `_ids/` —
reused by a later process, never written into the user's folder, and the agent's tools stay
inside it."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.agent.gate import run_tool
from ragkit.agent.grep_fallback import GrepCorpus
from ragkit.agent.tool import ToolContext
from ragkit.cookbook import raw_corpus
from ragkit.documents import load_documents_jsonl

IDS = ["guides/sync.md", "../escape.md", "/tmp/absolute.md", "bell\x07.md", "a", "a/b.md",
       "./dot.md", "x//y.md", "code/quill/sync.py", "Guides/Sync.md"]


def _hashed(doc_id: str) -> str:
    return "_ids/" + hashlib.sha256(doc_id.encode()).hexdigest()[:16]


EXPECTED = {"guides/sync.md": "guides/sync.md", "../escape.md": _hashed("../escape.md"),
            "/tmp/absolute.md": _hashed("/tmp/absolute.md"), "bell\x07.md": _hashed("bell\x07.md"),
            "a": "a", "a/b.md": _hashed("a/b.md"),  # "a" is a file: "a/b.md" cannot be
            "./dot.md": _hashed("./dot.md"), "x//y.md": _hashed("x//y.md"),
            "code/quill/sync.py": "code/quill/sync.py",
            "Guides/Sync.md": _hashed("Guides/Sync.md")}  # one file on a case-blind disk


def _text(doc_id: str) -> str:
    return f"Quillmate note {doc_id!r}: background sync runs every 15 minutes.\n"


def _jsonl_data(root: Path) -> Path:
    (root / "golden").mkdir(parents=True)
    (root / "documents.jsonl").write_text("".join(
        json.dumps({"id": i, "text": _text(i)}) + "\n" for i in IDS), encoding="utf-8")
    return root


def _tree(folder: Path) -> dict[str, tuple[str, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_text(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_a_corpus_folder_is_grepped_as_it_is_and_nothing_is_written(tmp_path, home, capsys):
    (tmp_path / "mine" / "corpus").mkdir(parents=True)
    assert raw_corpus(tmp_path / "mine", []) == tmp_path / "mine" / "corpus"
    assert capsys.readouterr().out == ""
    assert not (home / "cache").exists()


def test_documents_jsonl_is_written_once_as_files_with_safe_names(tmp_path, home, capsys):
    data = _jsonl_data(tmp_path / "mine")
    (data / "corpus").mkdir()  # load_shipped reads documents.jsonl before corpus/: so does grep
    before = _tree(data)
    documents = load_documents_jsonl(data / "documents.jsonl")
    folder = raw_corpus(data, documents)
    assert folder.parent == home / "cache" / "corpora"
    assert capsys.readouterr().out == (f"Grep searches the 10 documents of mine/documents.jsonl "
                                       f"as files in {folder} (written now).\n")
    files = _tree(folder)
    assert {name: text for name, (text, _) in files.items()} == {
        EXPECTED[i]: _text(i) for i in IDS}
    assert _tree(data) == before  # the user's folder: not a byte, not a timestamp changed
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name, f"{folder.name}.lock"]
    assert not (folder.parent / "escape.md").exists() and not Path("/tmp/absolute.md").exists()
    # the grep fallback reads every file and names a hit by the file's name
    grep = GrepCorpus(folder)
    assert sorted(grep.files) == sorted(EXPECTED.values())
    assert [c.id for c in grep("a/b.md")] == [f"{_hashed('a/b.md')}:1"]

    # the same documents again: the same folder, not rewritten; other documents: another one
    again = raw_corpus(data, documents)
    assert again == folder and _tree(folder) == files
    assert capsys.readouterr().out.endswith("(written by an earlier run).\n")
    assert raw_corpus(data, documents[:2]) != folder


def test_a_later_process_reuses_the_folder_the_first_wrote(tmp_path, home):
    data = _jsonl_data(tmp_path / "mine")
    script = ("import sys; from ragkit.cookbook import raw_corpus; "
              "from ragkit.documents import load_documents_jsonl; "
              "raw_corpus(sys.argv[1], load_documents_jsonl(sys.argv[1] + '/documents.jsonl'))")
    env = {**os.environ, "RAGKIT_HOME": str(home)}
    runs = [subprocess.run([sys.executable, "-c", script, str(data)], capture_output=True,
                           text=True, env=env, timeout=60) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    (folder,) = (home / "cache" / "corpora").glob("*[!k]")  # the folder, not its .lock
    assert runs[0].stdout.endswith(f"as files in {folder} (written now).\n")
    assert runs[1].stdout.endswith(f"as files in {folder} (written by an earlier run).\n")


def test_the_agents_tools_stay_inside_the_written_folder(tmp_path, home):
    data = _jsonl_data(tmp_path / "mine")
    folder = raw_corpus(data, load_documents_jsonl(data / "documents.jsonl"))
    (folder.parent / "outside.md").write_text("background sync secret\n")
    ctx = ToolContext(root=folder.resolve())
    found = run_tool("grep", {"pattern": "every 15 minutes"}, ctx)
    assert not found.is_error
    assert sorted(line.split(":", 1)[0] for line in found.content.splitlines()) == sorted(
        EXPECTED.values())
    for path in ("../outside.md", str(folder.parent / "outside.md")):
        refused = run_tool("read_file", {"path": path}, ctx)
        assert refused.is_error and "secret" not in str(refused.content)


def test_cache_clear_corpora_deletes_the_written_folders_but_not_one_being_written(
        tmp_path, home, capsys):
    """The folders were never cleaned: each is the size of its corpus."""
    from filelock import FileLock
    from ragkit.cli import main
    data = _jsonl_data(tmp_path / "mine")
    documents = load_documents_jsonl(data / "documents.jsonl")
    first, second = raw_corpus(data, documents), raw_corpus(data, documents[:2])
    size = sum(f.stat().st_size for f in first.rglob("*") if f.is_file()) + sum(
        f.stat().st_size for f in second.rglob("*") if f.is_file())
    capsys.readouterr()
    staging = second.parent / f".{second.name}.new-123"  # a notebook filling a new folder
    staging.mkdir()
    with FileLock(f"{second}.lock"):  # a notebook writing it now (another process, in use)
        assert main(["cache", "clear", "--corpora"]) == 0
    assert staging.is_dir()
    assert capsys.readouterr().out == (
        f"removed 1 corpus folder(s) ({(size - _size(second)) / 1e6:.1f} MB) from "
        f"{home / 'cache' / 'corpora'}; 1 left: a notebook is writing it now; a notebook "
        f"writes its folder again when it next needs it\n")
    assert not first.exists() and second.is_dir() and not Path(f"{first}.lock").exists()
    assert main(["cache", "clear", "--corpora"]) == 0
    assert not second.exists()
    assert raw_corpus(data, documents) == first and first.is_dir()  # written again
    assert main(["cache", "stats", "--corpora"]) == 2


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
