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

from tiny_notebooks import tiny_notebook
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


# A notebook run by `ragkit.notebook_runner.execute` in a process of its own: the kernel
# prints where its connection file is, then (when told to) kills the process running it.
RUNNER = ("import sys; from pathlib import Path; from ragkit.notebook_runner import execute; "
          "nb = Path(sys.argv[1]); r = execute(nb, nb.with_name('out.ipynb')); "
          "print(r['error'] or 'ok', flush=True)")
KERNEL_CELL = ("import os, signal, sys; print(sys.argv[sys.argv.index('-f') + 1], flush=True)\n"
               "if kill: os.kill(os.getppid(), signal.SIGKILL)")


def _kernel_notebook(path: Path) -> Path:
    return tiny_notebook(path, KERNEL_CELL, params="kill = False")


def test_a_notebook_run_killed_with_9_leaves_no_kernel_connection_file(tmp_path):
    """A `ragkit cookbook run` killed with -9 left its kernel's connection file,
    jupyter_client's `/tmp/tmpXXXXXXXX.json`, for good (one per killed run). It is now in a
    folder of the run's, which the next run removes; a run that ends leaves nothing."""
    import json
    import time
    work, tmp = tmp_path / "nb", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    notebook = _kernel_notebook(work / "01_kernel.ipynb")
    env = {**os.environ, "TMPDIR": str(tmp)}
    killed = subprocess.Popen([sys.executable, "-c", RUNNER.replace(
        "execute(nb, ", "execute(nb, parameters={'kill': True}, output="), str(notebook)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed.communicate(timeout=240)
    assert killed.returncode == -signal.SIGKILL
    deadline = time.time() + 60  # the orphaned kernel sees its parent gone and exits
    left = [p for p in tmp.rglob("*.json")]
    while time.time() < deadline and any(_kernel_alive(p) for p in left):
        time.sleep(0.2)
    assert [p.parent.name.startswith("ragkit-kernel-") for p in left] == [True]

    done = subprocess.run([sys.executable, "-c", RUNNER, str(notebook)], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.stdout.strip() == "ok", done.stderr
    printed = json.loads((work / "out.ipynb").read_text())["cells"][-1]["outputs"][0]["text"]
    connection = Path("".join(printed).strip())
    assert connection.name == "kernel.json"
    assert connection.parent.parent == tmp and connection.parent.name.startswith(
        "ragkit-kernel-")
    assert list(tmp.iterdir()) == []


def _kernel_alive(connection: Path) -> bool:
    """Whether a process still runs with `connection` on its command line."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(connection).encode() in cmdline.read_bytes():
                return True
        except OSError:
            continue
    return False


def test_ctrl_c_during_a_notebook_run_prints_no_asyncio_traceback(tmp_path):
    """Ctrl-C in `ragkit cookbook run` printed the one "interrupted" line, then 220 lines:
    "Task exception was never retrieved" and nbclient's cell task's traceback, which asyncio
    logs at exit for a task that finished with an error nobody awaited. Here papermill is
    replaced by such a task, then the interrupt."""
    code = ("import asyncio, sys, papermill\nfrom pathlib import Path\n"
            "from ragkit import notebook_runner\n"
            "def cell(*args, **kwargs):\n"
            "    loop = asyncio.new_event_loop()\n"
            "    async def failed():\n"
            "        raise RuntimeError('the kernel stopped the cell')\n"
            "    sys.modules['__main__'].task = loop.create_task(failed())\n"
            "    loop.run_until_complete(asyncio.sleep(0.01))\n"
            "    raise KeyboardInterrupt\n"
            "papermill.execute_notebook = cell\n"
            "nb = Path(sys.argv[1])\n"
            "try:\n"
            "    notebook_runner.execute(nb, nb.with_name('out.ipynb'))\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
            "    del task\n")
    notebook = _kernel_notebook(tmp_path / "01_kernel.ipynb")
    done = subprocess.run([sys.executable, "-c", code, str(notebook)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.stdout == "interrupted\n", done.stderr
    assert done.stderr == ""
