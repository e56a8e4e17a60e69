"""A notebook kernel's scratch folders (`ragkit.cookbook.run_folder`, the `reports_sql`
tables) do not outlive it. They were `TemporaryDirectory` objects, which a kernel that
papermill or nbval ends never deletes (it is killed first): a day of notebook runs left 19
of them in /tmp. Now a normal exit removes the folder, and a killed process's folder is
removed by the next process that makes one. Real processes: one killed with -9."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pids in /proc")

NOTEBOOK = ("from ragkit.cookbook import run_folder; w = run_folder('nb05'); "
            "(w / 'trace.jsonl').write_text('{}'); print(w, flush=True)")
REPORTS = ("from ragkit.agent.reports_db import database_file; "
           "print(database_file().parent, flush=True)")
KILLED = "; import os, signal; os.kill(os.getpid(), signal.SIGKILL)"


def _run(code: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp)}, timeout=120)


@pytest.mark.parametrize("code, prefix", [(NOTEBOOK, "ragkit-nb05-"),
                                          (REPORTS, "ragkit-reports-")],
                         ids=["notebook run folder", "reports_sql tables"])
def test_a_kernel_killed_with_9_leaves_its_folder_only_until_the_next_run(tmp_path, code,
                                                                          prefix):
    killed = _run(code + KILLED, tmp_path)
    assert killed.returncode == -signal.SIGKILL
    left = Path(killed.stdout.strip())
    assert left.parent == tmp_path and left.name.startswith(prefix) and any(left.iterdir())

    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert not left.exists()
    assert not Path(done.stdout.strip()).exists()  # removed at its own exit
    assert list(tmp_path.iterdir()) == []


def test_a_live_kernels_folder_is_not_removed_by_another(tmp_path):
    """Two kernels at once (`refresh --jobs 2`): the second leaves the first one's folder."""
    first = subprocess.Popen([sys.executable, "-c", NOTEBOOK + "; import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        mine = Path(first.stdout.readline().strip())
        other = _run(NOTEBOOK, tmp_path)
        assert other.returncode == 0, other.stderr
        assert (mine / "trace.jsonl").read_text() == "{}"
    finally:
        first.communicate("", timeout=60)
    assert first.returncode == 0 and not mine.exists()


def test_a_setup_cell_run_again_replaces_its_folder(tmp_path):
    """Each call made a folder kept till exit: notebook 05's setup cell run five times left
    five."""
    again = _run("from ragkit.cookbook import run_folder; import os; "
                 "a = run_folder('nb05'); b = run_folder('nb05'); c = run_folder('other'); "
                 "print(os.path.exists(a), os.path.exists(b), os.path.exists(c), flush=True); "
                 "os.kill(os.getpid(), 9)", tmp_path)
    assert again.stdout.split() == ["False", "True", "True"]
    assert len(list(tmp_path.iterdir())) == 2  # killed: the next run removes them
