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
import threading
import time
from pathlib import Path

import pytest
from test_index_orphans import children

from ragkit.cli import main
from ragkit.jobs import SEND_GRACE, _Context, die_with_parent

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
    # 200,000 rows: the build runs for seconds after its workers start, so the signal lands
    # mid-build on a fast machine too (20,000 had ended 0.4 s after its folder appeared, and a
    # fast CI runner's SIGTERM then reached a process that had finished)
    docs = _docs(tmp_path / "docs.jsonl", 200_000)
    env = {**os.environ, "RAGKIT_WORKER_BLOCK": "500"}  # workers even on a small corpus
    build = subprocess.Popen([*RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"),
                              "--embedder", "none"], stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
    _until(lambda: _hidden(tmp_path) and children(build.pid), build)
    time.sleep(0.3)  # into the build: its workers run
    if group:
        os.killpg(build.pid, signal.SIGTERM)
    else:
        build.send_signal(signal.SIGTERM)
    _, err = build.communicate(timeout=60)
    assert (build.returncode, err.splitlines()[-1:]) == (143, [LINE])
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


def _send(queue, size: int) -> None:
    """A pool worker's last act: its signal handlers set, one result of `size` bytes sent."""
    die_with_parent(os.getppid())
    queue.put(b"r" * size)


def _signalled_mid_result(size: int, read: bool) -> tuple[int | None, bytes | None, float]:
    """A worker sending a result larger than the pipe holds, signalled (SIGTERM, as a CI
    cancel sends the whole group) while the message is half written: (its exit status, what
    the pool reads — None if reading it never ended — and seconds from the signal to its
    exit). Without `read`, nothing reads the message, as in a pool that saw another worker
    end and stopped reading."""
    context = _Context("spawn")
    queue = context.SimpleQueue()
    worker = context.Process(target=_send, args=(queue, size))
    worker.start()
    # until the message has begun: the worker is then inside its write, which the pipe's
    # 64 KiB cannot hold
    deadline = time.monotonic() + 60
    while not queue._reader.poll(0.05):
        assert worker.is_alive() and time.monotonic() < deadline
    time.sleep(0.2)
    assert worker.is_alive()
    signalled = time.monotonic()
    os.kill(worker.pid, signal.SIGTERM)
    got: list[bytes] = []
    if read:
        reader = threading.Thread(target=lambda: got.append(queue.get()), daemon=True)
        reader.start()
        reader.join(10)
    worker.join(10)
    took = time.monotonic() - signalled
    if worker.is_alive():
        worker.kill()
    return worker.exitcode, got[0] if got else None, took


def test_a_worker_signalled_while_sending_its_result_sends_all_of_it_then_exits():
    """SIGTERM to a build's process group ended a worker mid-way through writing a block's
    rows; the pool then read the rest of that message forever, and the build told to stop
    never ended (the index-build test above hung one run in four). The message is now whole,
    and the worker then exits as signalled."""
    status, result, _ = _signalled_mid_result(4 << 20, read=True)
    assert result == b"r" * (4 << 20)
    assert status == 143


def test_a_signalled_worker_whose_result_is_never_read_still_exits():
    """The pool stops reading once it sees a worker end, and signals the others: a worker
    mid-way through its message then exits within the grace, not never."""
    status, result, took = _signalled_mid_result(4 << 20, read=False)
    assert result is None and status == 143
    assert took < SEND_GRACE + 5
