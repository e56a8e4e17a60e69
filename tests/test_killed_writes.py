"""A write killed midway (kill -9, the OOM killer) leaves its temporary file named by its
process and host, `.NAME.PID.HOST-XXXXXXXX.tmp`, and the next write of the same path removes
it once that process is gone; a `ragkit search` killed while writing a big run left a hidden
`.run.trec.XXXXXXXX.tmp` beside it for good."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragkit.atomic import write_text
from ragkit.cli import main
from ragkit.stale_temp import owner

DOCS = [{"id": f"d{n}", "text": f"refund policy {n} days shipping order {n * 7} notes"}
        for n in range(300)]
RAGKIT = [sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())"]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _temporary(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _wait_for_temporary(folder: Path, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + 60
    while not _temporary(folder):
        assert process.poll() is None and time.monotonic() < deadline, "no temporary file"
        time.sleep(0.01)
    (name,) = _temporary(folder)
    return name


def test_a_search_killed_mid_write_leaves_a_named_file_the_next_search_removes(tmp_path):
    assert main(["index", str(_jsonl(tmp_path / "docs.jsonl", DOCS)), "--out",
                 str(tmp_path / "idx"), "--embedder", "none"]) == 0
    many = _jsonl(tmp_path / "many.jsonl", [{"id": f"q{n}", "text": f"refund {n} days"}
                                            for n in range(20_000)])
    out = tmp_path / "runs" / "run.trec"
    out.parent.mkdir()
    search = subprocess.Popen([*RAGKIT, "search", str(tmp_path / "idx"), "--queries",
                               str(many), "--out", str(out), "--mode", "bm25", "--k", "300",
                               "--rerank", "none"], stderr=subprocess.DEVNULL)
    name = _wait_for_temporary(out.parent, search)
    search.kill()
    search.wait(timeout=30)
    host = owner().split(".")[1]
    assert re.fullmatch(rf"\.run\.trec\.{search.pid}\.{host}-[a-z0-9_]{{8}}\.tmp", name), name
    assert _temporary(out.parent) == [name]  # nothing ran to remove it

    one = _jsonl(tmp_path / "one.jsonl", [{"id": "q1", "text": "refund 3 days"}])
    assert main(["search", str(tmp_path / "idx"), "--queries", str(one), "--out", str(out),
                 "--mode", "bm25", "--k", "1", "--rerank", "none"]) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.trec"]
    assert [line.split()[:4] for line in out.read_text().splitlines()] == [
        ["q1", "Q0", "d3#0", "1"]]


WRITER = """
import sys, time
from ragkit.atomic import write_text

def pieces():
    yield "ours, half written\\n"
    time.sleep(600)

write_text(sys.argv[1], pieces())
"""


def test_only_the_files_of_dead_writers_of_this_host_are_removed(tmp_path):
    """A live writer's file is kept (it is being written), and so are a file of another host
    (a shared disk) and one named before the pid was recorded (no way to tell its writer)."""
    target = tmp_path / "report.csv"
    live = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
    try:
        live_name = _wait_for_temporary(tmp_path, live)
        dead = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
        dead_name = next(n for n in _wait_until_two(tmp_path, dead) if n != live_name)
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        host = owner().split(".")[1]
        other_host = "000000" if host != "000000" else "ffffff"
        others = [f".report.csv.{dead.pid}.{other_host}-abcdefgh.tmp",
                  ".report.csv.abcdefgh.tmp",  # written before pids were recorded
                  f".other.csv.{dead.pid}.{host}-abcdefgh.tmp"]  # another file's
        for name in others:
            (tmp_path / name).write_text("x")
        write_text(target, "ours\n")
        assert _temporary(tmp_path) == sorted([live_name, *others])
        assert target.read_text() == "ours\n"
    finally:
        live.kill()
        live.wait(timeout=30)
    assert dead_name.startswith(f".report.csv.{dead.pid}.")


def _wait_until_two(folder: Path, process: subprocess.Popen) -> list[str]:
    deadline = time.monotonic() + 60
    while len(_temporary(folder)) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "no temporary file"
        time.sleep(0.01)
    return _temporary(folder)


def test_an_earlier_versions_unnamed_file_is_removed_only_when_provably_its(tmp_path):
    """`.NAME.XXXXXXXX.tmp` (mkstemp's, before pids were recorded) stayed for good. Removed
    when every mark of a killed write is there — mkstemp's mode 0600, this user's, one link, a
    day untouched; a fresh one (its writer may still run), a file of another mode (a user's),
    a hard link, a link, or another name is kept."""
    target = tmp_path / "report.csv"
    day_old = time.time() - 2 * 24 * 3600

    def made(name: str, mode: int = 0o600, mtime: float = day_old) -> Path:
        path = tmp_path / name
        path.write_text("qid Q0 d1 1 0.5 bm25\n")
        path.chmod(mode)
        os.utime(path, (mtime, mtime))
        return path

    killed = made(".report.csv.k3x_9abz.tmp")
    kept = [made(".report.csv.fresh001.tmp", mtime=time.time()),  # its writer may run yet
            made(".report.csv.backup01.tmp", mode=0o644),  # a user's, by its mode
            made(".report.csv.abcdefghi.tmp"),  # 9 characters: not mkstemp's
            made(".other.csv.abcdefgh.tmp")]  # another file's
    linked = made(".report.csv.linked01.tmp")
    os.link(linked, tmp_path / "mine.csv")  # a second name: the user's too
    (tmp_path / ".report.csv.symlink1.tmp").symlink_to(killed.name)
    write_text(target, "ours\n")
    assert not killed.exists()
    assert _temporary(tmp_path) == sorted([*(p.name for p in kept), linked.name,
                                           ".report.csv.symlink1.tmp"])
    assert target.read_text() == "ours\n"


@pytest.mark.parametrize("how", ["gone", "none usable"])
def test_no_temporary_folder_to_work_in_is_one_line_naming_tmpdir(tmp_path, monkeypatch, how):
    """A notebook kernel's side folder (`ragkit.cookbook.run_folder`) when TMPDIR names a
    folder that is gone, or no candidate folder can be written: one line saying to set TMPDIR,
    not a traceback from `tempfile`."""
    import tempfile
    from ragkit.cookbook import run_folder
    from ragkit.documents import RagkitError
    missing = tmp_path / "gone"
    if how == "gone":
        monkeypatch.setattr(tempfile, "tempdir", str(missing))
        why = "No such file or directory"
    else:
        monkeypatch.setattr(tempfile, "tempdir", None)
        monkeypatch.setattr(tempfile, "_candidate_tempdir_list", lambda: [str(missing)])
        why = f"No usable temporary directory found in ['{missing}']"
    with pytest.raises(RagkitError) as caught:
        run_folder("trace")
    assert str(caught.value) == (f"no temporary folder to work in ({why}); set TMPDIR to a "
                                 f"folder you can write")
    assert not missing.exists()
