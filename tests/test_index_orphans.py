"""`ragkit index` killed with -9 mid-build: its worker processes end with it, its resource
tracker with them and without a warning, and the next build of the same folder removes the
temporary folder it left.

Real processes throughout: the build runs the installed CLI, with $RAGKIT_WORKER_BLOCK
lowering the size at which workers start (otherwise 50,000 lines for the block build of a
JSONL file, 100,000 chunks for BM25's tokenizing stage, which `--parents` builds take).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragkit.stale_temp import remove_stale

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] != b"Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def cli(tmp: Path, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "RAGKIT_HOME": str(tmp / "home"), "RAGKIT_WORKER_BLOCK": "50"}
    return subprocess.Popen([sys.executable, "-m", "ragkit.cli", *args], cwd=tmp, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def write_corpus(path: Path) -> None:
    """1,500 lines of 1,500 words: 30 blocks of the block build, a few seconds of work."""
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    with open(path, "w") as out:
        for i in range(1500):
            out.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choices(words, k=1500))})
                      + "\n")


def running_workers(build: subprocess.Popen) -> list[int]:
    """The build's worker processes, once at least two have started (within 60 s)."""
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and build.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
        workers = children(build.pid)
    assert len(workers) >= 2, f"no workers seen (exit {build.poll()})"
    return workers


@pytest.mark.parametrize("options, writing", [([], True), (["--parents"], False)],
                         ids=["block build", "BM25 workers"])
def test_a_killed_build_leaves_no_workers_and_its_temporary_folder_is_removed(tmp_path,
                                                                              options, writing):
    """The block build writes its temporary folder while workers run; a `--parents` build
    tokenizes for BM25 on workers before it writes anything."""
    write_corpus(tmp_path / "docs.jsonl")
    build = cli(tmp_path, "index", "docs.jsonl", "--out", "ix", "--embedder", "none", *options)
    workers = running_workers(build)
    assert bool(list(tmp_path.glob(".ix.new-*"))) == writing
    os.kill(build.pid, signal.SIGKILL)
    build.wait()
    deadline = time.monotonic() + 5
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if alive(p)], "workers outlived the killed build"
    stale = [p.name for p in tmp_path.glob(".ix.new-*")]
    assert all(f"-{build.pid}." in name for name in stale) and bool(stale) == writing

    (tmp_path / "small.jsonl").write_text('{"id": "a", "text": "the kettle boils"}\n')
    again = cli(tmp_path, "index", "small.jsonl", "--out", "ix", "--embedder", "none")
    assert again.wait(60) == 0, again.stderr.read()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".ix")) == []
    assert json.loads((tmp_path / "ix" / "index.json").read_text())["chunks"] == 1


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: files read in-process")
def test_a_killed_folder_load_leaves_no_leaked_semaphore_warning(tmp_path):
    """A folder's HTML files are read by spawned workers, whose pool's semaphores the
    resource tracker of the killed command unlinks: it printed "resource_tracker: There
    appear to be 5 leaked semaphore objects to clean up at shutdown" to the same terminal,
    under whatever ran next. It still cleans up (and ends); it says nothing."""
    (tmp_path / "site").mkdir()
    for i in range(400):  # 11 MB of HTML: workers, and a load of a few seconds
        body = "".join(f"<p>Part {j} of page {i}: " + " ".join(f"w{(i * j + k) % 991}"
                                                              for k in range(80)) + "</p>"
                       for j in range(60))
        (tmp_path / "site" / f"p{i}.html").write_text(
            f"<html><head><title>Page {i}</title></head><body>{body}</body></html>")
    build = cli(tmp_path, "index", "site", "--out", "ix", "--embedder", "none", text=True)
    helpers = running_workers(build)  # the tracker and a worker at least
    os.kill(build.pid, signal.SIGKILL)
    _, err = build.communicate(timeout=30)  # at EOF: every process holding stderr ended
    assert "leaked" not in err, err
    deadline = time.monotonic() + 5
    while any(map(alive, helpers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in helpers if alive(p)]


def test_ctrl_c_mid_build_is_one_line_and_leaves_nothing_behind(tmp_path):
    """Ctrl-C in a terminal sends SIGINT to the whole foreground group, workers included: the
    user sees one line (no traceback from the CLI or a worker), exit 130, no worker left, no
    temporary folder and no --out."""
    write_corpus(tmp_path / "docs.jsonl")
    build = cli(tmp_path, "index", "docs.jsonl", "--out", "ix", "--embedder", "none",
                text=True, start_new_session=True,  # its own group, as a terminal job is
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers = running_workers(build)
    os.killpg(build.pid, signal.SIGINT)
    _, err = build.communicate(timeout=60)
    assert build.returncode == 130, err
    assert "Traceback" not in err
    assert err.rstrip().splitlines()[-1].startswith("ragkit: interrupted; nothing half-written")
    deadline = time.monotonic() + 5
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if alive(p)]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["docs.jsonl"]


BROKEN_POOL = """
import argparse, os, signal, sys
from concurrent.futures.process import BrokenProcessPool
from ragkit import cli

def broken(args):
    if sys.argv[1] == "ctrl-c":  # Ctrl-C reached this process; its handler has not run yet
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        os.kill(os.getpid(), signal.SIGINT)
    raise BrokenProcessPool("A process in the process pool was terminated abruptly")

parser = type("Parser", (), {"parse_args": lambda self, argv: argparse.Namespace(func=broken)})
cli.build_parser = parser
os._exit(cli.main([]))
"""


@pytest.mark.parametrize("how", ["ctrl-c", "crash"])
def test_a_pool_broken_by_ctrl_c_is_the_interrupted_line_and_a_crash_stays_a_crash(how):
    """Under load a worker can exit on Ctrl-C and break the pool before the command's own
    handler runs (seen in CI: a BrokenProcessPool traceback, exit 1, instead of one line and
    130). A pool broken with no Ctrl-C is still a failure, not reported as an interruption."""
    done = subprocess.run([sys.executable, "-c", BROKEN_POOL, how], capture_output=True,
                          text=True, timeout=60)
    if how == "ctrl-c":
        assert done.returncode == 130, done.stderr
        assert done.stderr.strip().splitlines() == [
            "ragkit: interrupted; nothing half-written was kept (paid calls and embeddings "
            "made so far are cached, so re-running resumes)"]
    else:
        assert done.returncode == 1
        assert "BrokenProcessPool: A process in the process pool" in done.stderr


UNSTARTED_POOL = """
import argparse, os, signal, time
from concurrent.futures import process
from ragkit import cli, jobs

def interrupted_start(self):  # Ctrl-C lands while the pool starts its manager thread
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)

def build(args):
    process._ExecutorManagerThread.start = interrupted_start
    with jobs.worker_pool(2) as pool:
        pool.submit(print, "never")

parser = type("Parser", (), {"parse_args": lambda self, argv: argparse.Namespace(func=build)})
cli.build_parser = parser
os._exit(cli.main([]))
"""


def test_ctrl_c_while_a_pool_starts_is_the_interrupted_line(tmp_path):
    """Seen under load: Ctrl-C landed while the pool's first `submit` started its manager
    thread, and the `with` block's shutdown raised "cannot join thread before it is started"
    over the KeyboardInterrupt: a traceback and status 1, not one line and 130."""
    done = subprocess.run([sys.executable, "-c", UNSTARTED_POOL], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [
        "ragkit: interrupted; nothing half-written was kept (paid calls and embeddings "
        "made so far are cached, so re-running resumes)"]


def test_only_folders_of_dead_processes_of_this_host_are_removed(tmp_path):
    from ragkit.stale_temp import owner
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    pid, host = owner().split(".")
    names = [f".ix.new-{dead}.{host}-abc", f".ix.old-{dead}.{host}-abc",  # a dead build
             f".ix.new-{os.getppid()}.{host}-abc",  # a live process
             f".ix.new-{dead}.000000-abc" if host != "000000" else ".ix.new-1.ffffff-abc",
             ".ix.new-abcd1234",  # written before pids were recorded
             f".other.new-{dead}.{host}-abc"]  # another target's
    for name in names:
        (tmp_path / name).mkdir()
    target = tmp_path / "ix"
    assert remove_stale(target) == [tmp_path / names[0]]  # the old copy is all there is
    target.mkdir()
    assert remove_stale(target) == [tmp_path / names[1]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ix", *names[2:]])


UNRAISABLE = """
import sys, time
from ragkit.jobs import interrupts_in_main_only

class Closing:
    def __init__(self, error):
        self.error = error
    def __del__(self):  # Python cannot raise from here: an "Exception ignored" report
        raise self.error

with interrupts_in_main_only():
    try:
        Closing(KeyboardInterrupt())
        time.sleep(5)
        print("the Ctrl-C was lost")
    except KeyboardInterrupt:
        print("interrupted")
    Closing(ValueError("a real bug"))
Closing(KeyboardInterrupt())
"""


def test_a_ctrl_c_python_cannot_raise_prints_no_traceback_while_a_command_runs():
    """Seen in CI: Ctrl-C landing in logging's at-fork hook while a worker started printed
    "Exception ignored ... Traceback ... KeyboardInterrupt" above the one interrupted line.
    Inside a command such a KeyboardInterrupt is not printed but raised again in the
    command's code (not lost); any other ignored error, and one outside a command, is still
    reported."""
    done = subprocess.run([sys.executable, "-c", UNRAISABLE], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    assert done.stdout == "interrupted\n"
    assert done.stderr.count("Traceback") == 2
    assert "ValueError: a real bug" in done.stderr
    assert done.stderr.count("KeyboardInterrupt") == 1  # the one outside the command


def test_a_dead_folder_that_could_not_be_deleted_is_not_reported_removed(tmp_path, monkeypatch):
    from ragkit import stale_temp
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    host = stale_temp.owner().split(".")[1]
    stuck, gone = tmp_path / f"nb-{dead}.{host}-stuck", tmp_path / f"nb-{dead}.{host}-gone"
    for folder in (stuck, gone):
        (folder / "sub").mkdir(parents=True)
    real = shutil.rmtree

    def refuses_stuck(path, ignore_errors=False):  # as a mount inside it would (EBUSY)
        if Path(path) != stuck:
            real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(stale_temp.shutil, "rmtree", refuses_stuck)
    assert stale_temp.remove_dead(tmp_path, "nb-") == [gone]
    assert stuck.is_dir() and not gone.exists()
    build = tmp_path / f".ix.new-{dead}.{host}-stuck"
    build.mkdir()
    stuck = build
    assert stale_temp.remove_stale(tmp_path / "ix") == []
