"""A FIFO in an index folder is refused by every reader before it is opened, never waited on
(opening a FIFO for reading blocks until something writes to it)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line


def ragkit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI in a new process, with its own RAGKIT_HOME and no API key; a hang fails."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(cwd / ".home")
    try:
        return subprocess.run([sys.executable, "-m", "ragkit.cli", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ragkit {' '.join(args)} hung")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fifo")
    docs = [{"id": f"d{i}", "text": f"Refunds take {i} days at shop {i}."} for i in range(5)]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "q.jsonl").write_text(json.dumps({"id": "q1", "text": "refund days"}) + "\n")
    done = ragkit(folder, "index", "docs.jsonl", "--out", "ix", "--embedder", "none")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("name", ["chunks.offsets.npy", "index.json", "chunks.jsonl",
                                  "bm25/bm25.json", "bm25/terms.npy"])
@pytest.mark.parametrize("command", ["search", "ask"])
def test_a_fifo_in_the_index_is_one_error_line_not_a_hang(built, name, command):
    shutil.rmtree(built / "ix2", ignore_errors=True)
    shutil.copytree(built / "ix", built / "ix2")
    (built / "ix2" / name).unlink()
    os.mkfifo(built / "ix2" / name)
    argv = (["search", "ix2", "--queries", "q.jsonl", "--out", "r.trec", "--mode", "bm25"]
            if command == "search" else ["ask", "--index", "ix2", "how many days for a refund"])
    done = ragkit(built, *argv)
    assert one_error_line(done) == (f"ragkit: error: ix2/{name}: not a regular file (a FIFO); "
                                    f"ragkit reads only regular files")
    assert not (built / "r.trec").exists()
