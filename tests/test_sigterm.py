"""SIGTERM (`timeout`, `docker stop`, a cancelled CI job) is treated as Ctrl-C is: one line,
`ragkit: terminated; nothing half-written was kept (…)`, exit status 143, the temporary
output removed and the old output kept. It ended the process silently where it stood: a
search left its half-written `.run.trec.*.tmp`, an index build its `.ix.new-*` folder.
Real processes and real signals throughout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragkit.cli import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")

RAGKIT = [sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())"]
LINE = ("ragkit: terminated; nothing half-written was kept (paid calls and embeddings made so "
        "far are cached, so re-running resumes)")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _docs(path: Path, n: int) -> Path:
    return _jsonl(path, [{"id": f"d{i}", "text": f"refund policy {i} days shipping order "
                          f"{i * 7} notes on parcel {i % 13} and courier {i % 29}"}
                         for i in range(n)])


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _until(found, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 90
    while not found():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_search_sent_sigterm_mid_write_says_so_and_keeps_the_old_run(tmp_path):
    assert main(["index", str(_docs(tmp_path / "docs.jsonl", 300)), "--out",
                 str(tmp_path / "idx"), "--embedder", "none"]) == 0
    out = tmp_path / "runs" / "run.trec"
    out.parent.mkdir()
    out.write_text("q0 Q0 d1#0 1 2.5 bm25\n")
    many = _jsonl(tmp_path / "many.jsonl", [{"id": f"q{n}", "text": f"refund {n} days"}
                                            for n in range(20_000)])
    search = subprocess.Popen([*RAGKIT, "search", str(tmp_path / "idx"), "--queries",
                               str(many), "--out", str(out), "--mode", "bm25", "--k", "300",
                               "--rerank", "none"], stderr=subprocess.PIPE, text=True)
    _until(lambda: _hidden(out.parent), search)
    search.send_signal(signal.SIGTERM)
    _, err = search.communicate(timeout=60)
    assert (search.returncode, err.splitlines()[-1:]) == (143, [LINE])
    assert "Traceback" not in err
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.trec"]
    assert out.read_text() == "q0 Q0 d1#0 1 2.5 bm25\n"


@pytest.mark.parametrize("group", [False, True])
def test_an_index_build_sent_sigterm_leaves_no_temporary_folder(tmp_path, group):
    """`timeout` signals the command alone; a CI runner cancelling a job signals its whole
    process group, the build's workers too (a worker ends quietly, status 143, and the
    command alone says it was terminated)."""
    docs = _docs(tmp_path / "docs.jsonl", 20_000)
    env = {**os.environ, "RAGKIT_WORKER_BLOCK": "500"}  # workers even on a small corpus
    build = subprocess.Popen([*RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"),
                              "--embedder", "none"], stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
    _until(lambda: _hidden(tmp_path), build)
    time.sleep(0.3)  # into the build: its workers run
    if group:
        os.killpg(build.pid, signal.SIGTERM)
    else:
        build.send_signal(signal.SIGTERM)
    _, err = build.communicate(timeout=60)
    assert (build.returncode, err.splitlines()[-1:]) == (143, [LINE])
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]
