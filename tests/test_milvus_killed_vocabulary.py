"""A Milvus index build killed (kill -9) while it wrote the BM25 vocabulary folder beside the
collection: the temporary folder it left inside the index folder is ragkit's, so updating the
index or re-indexing it with the memory store goes on, and the next Milvus build removes it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("milvus_lite")
RAGKIT = Path(sys.executable).parent / "ragkit"
# `ragkit ...`, killed with SIGKILL just before the vocabulary folder is renamed in
KILLED = """
import os, signal, sys
import ragkit.atomic as atomic
real = atomic.fsync_tree
def die(folder):
    if folder.name.startswith(".bm25-"):
        os.kill(os.getpid(), signal.SIGKILL)
    real(folder)
atomic.fsync_tree = die
from ragkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    return env


def _docs(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"kettle descaling {i}"})
                            + "\n" for i in range(n)))
    return path


def _run(env: dict, *args, script: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", script] if script else [str(RAGKIT)]
    return subprocess.run([*command, *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)


def _killed_build(tmp_path: Path) -> tuple[dict, Path]:
    """An index of 5 documents whose rebuild from 6 was killed writing its vocabulary."""
    env = _env(tmp_path)
    folder = tmp_path / "ix"
    built = _run(env, "index", _docs(tmp_path / "five.jsonl", 5), "--out", folder, "--store",
                 "milvus", "--embedder", "none")
    assert built.returncode == 0, built.stderr
    killed = _run(env, "index", _docs(tmp_path / "six.jsonl", 6), "--out", folder, "--store",
                  "milvus", "--embedder", "none", script=KILLED)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [p.name for p in folder.glob(".bm25-*")], "the kill left no temporary folder"
    return env, folder


def test_an_update_goes_on_and_a_milvus_build_removes_the_killed_vocabulary(tmp_path):
    env, folder = _killed_build(tmp_path)
    updated = _run(env, "index", tmp_path / "six.jsonl", "--out", folder, "--update")
    assert updated.returncode == 0, updated.stderr
    assert "updated" in updated.stdout
    assert not list(folder.glob(".bm25-*"))
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "kettle 5"}\n')
    found = _run(env, "search", folder, "--queries", tmp_path / "q.jsonl", "--mode", "bm25",
                 "--out", tmp_path / "run.trec")
    assert found.returncode == 0, found.stderr
    assert (tmp_path / "run.trec").read_text().split()[2] == "d5#0"


def test_a_memory_index_replaces_a_milvus_index_a_killed_build_left(tmp_path):
    env, folder = _killed_build(tmp_path)
    built = _run(env, "index", tmp_path / "six.jsonl", "--out", folder, "--embedder", "none")
    assert built.returncode == 0, built.stderr
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []
