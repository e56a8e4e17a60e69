"""Run one notebook with papermill, and the results folders `run` and `sweep` write into.

What it is: what `ragkit.cookbook` (`run`, `refresh`) and `ragkit.sweep` both need —
- `notebook_paths(notebooks)`: the notebooks to run, given as paths or by name or number in
  `notebooks/`;
- `execute(notebook, output, parameters)`: one notebook executed with papermill, in the
  environment set for reproducible outputs (IPYKERNEL_CELL_NAME, no tqdm refresh timing in
  outputs), the same way the test suite executes them; returns its status, seconds,
  effective parameters and what it recorded (`ragkit.record`). A failing cell does not
  raise: its source and error come back in the result.
- `is_results(path)` and `mark(folder, command)`: the `.ragkit-results` marker listing every
  name ragkit wrote into a results folder, so an existing folder is replaced only when it is
  ragkit's and holds nothing a user added.

What it is not: the report (`ragkit.report`), the results document (`ragkit.results`), nor
the commands (`ragkit.cookbook`, `ragkit.sweep`), which import this module and never each
other the other way round.
"""
from __future__ import annotations

import json
import logging
import os
import re
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragkit.atomic import write_text
from ragkit.documents import RagkitError
from ragkit.jsonl import read_json
from ragkit.loaded_folder import RESULTS_MARKER as MARKER
from ragkit.loaders.folder import escaped
from ragkit.notebook_marks import mark_text_cells
from ragkit.notebook_params import (CHANGED_ENV, SESSION_ENV, changed_parameters,
                                    effective_parameters)
from ragkit.record import RECORD_ENV, load_records
from ragkit.results import datasets_of
from ragkit.run_progress import register
from ragkit.stale_temp import scratch

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
RESULTS = "a ragkit results folder"
NOTEBOOK_ENV = {"IPYKERNEL_CELL_NAME": "<IPY-INPUT>", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "TQDM_MININTERVAL": "1000",
                "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def _find(name: str | Path) -> Path | None:
    """A notebook given as a path, or by its name or number in `notebooks/` (`01`, `01_x`)."""
    path = Path(name)
    if path.is_file():
        return path
    if len(path.parts) == 1:
        matches = sorted(NOTEBOOKS.glob(f"{path.stem}*.ipynb")) if path.stem else []
        exact = [m for m in matches if m.stem == path.stem or m.stem.startswith(path.stem + "_")]
        if len(exact) == 1:
            return exact[0]
    return None


def notebook_paths(notebooks: Sequence[str | Path] | None = None) -> list[Path]:
    """The notebooks to run: the given ones, else every `notebooks/NN_*.ipynb` in order.

    The notebooks ship with the source checkout, not with an installed wheel; finding none
    is an error rather than an empty report.
    """
    if notebooks:
        found = {str(n): _find(n) for n in notebooks}
        missing = [name for name, path in found.items() if path is None]
        if missing:
            shipped = ", ".join(p.stem for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
            raise RagkitError(f"no such notebook: {', '.join(missing)} (give a path, or one of: "
                              f"{shipped or 'none found in ' + str(NOTEBOOKS)})")
        paths = list(found.values())
    else:
        paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
        if not paths:
            raise RagkitError(f"no notebooks found in {NOTEBOOKS} (looked for NN_*.ipynb): "
                              "the notebooks ship with the source checkout, not with the "
                              "installed package; run from a clone or pass --notebook PATH")
    names = [p.name for p in paths]
    if len(set(names)) < len(names):
        raise RagkitError(f"two notebooks share a name: {', '.join(names)}")
    return paths


def _failure(exc: Exception, kernel_stderr=None) -> dict[str, Any]:
    """The failing cell and its error (or the exception that stopped papermill), with one
    `line` for terminals, its control characters and bidirectional overrides escaped
    (`\\x1b`: an error quoting a question or document id of the data sent its escape
    sequences to the run's stderr and to summary.md); a kernel that died or never started
    adds the end of its own stderr (`kernel_stderr`, a file; its last 4,000 bytes) as the
    traceback."""
    # deferred: papermill (and nbclient, jupyter_client) load only when a notebook runs
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        line = f"cell In [{exc.exec_count}]: {exc.ename}: {exc.evalue}"
        tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(exc.traceback or []))
        return {"line": escaped(" ".join(line.split())), "cell": exc.exec_count, "ename": exc.ename,
                "evalue": str(exc.evalue), "source": exc.source or "", "traceback": tb}
    line = escaped(" ".join(f"{type(exc).__name__}: {exc}".split()))
    said = ""
    if kernel_stderr is not None:
        kernel_stderr.seek(0)
        said = kernel_stderr.read()[-4000:].decode("utf-8", "replace")
    return {"line": line, "cell": None, "ename": type(exc).__name__, "evalue": str(exc),
            "source": "", "traceback": f"the kernel's stderr ended:\n{said}" if said else ""}


# papermill waits 60 s for a kernel by default; two notebooks starting their kernels while
# a build or a test run holds both cores have missed that (seen once in a test on 2 cores)
KERNEL_START_SECONDS = 180
KERNEL_FOLDER = "ragkit-kernel-"  # the prefix of a kernel's folder in the temporary folder


def execute(notebook: Path, output: Path, parameters: dict[str, Any] | None = None,
            progress: str | None = None) -> dict:
    """Execute one notebook with papermill; return its status, seconds, parameters, records.

    With `progress` (a label such as "[2/7] 02_x.ipynb"), a line of cells done goes to stderr
    every `RAGKIT_PROGRESS_SECONDS` while it runs (`ragkit.run_progress`).
    """
    # deferred: papermill (and nbclient, jupyter_client) load only when a notebook runs
    import papermill

    parameters = parameters or {}
    output.parent.mkdir(parents=True, exist_ok=True)
    records = output.with_suffix(".records.json").resolve()  # the kernel runs elsewhere
    records.unlink(missing_ok=True)
    saved = {k: os.environ.get(k) for k in [*NOTEBOOK_ENV, RECORD_ENV, CHANGED_ENV,
                                             SESSION_ENV]}
    changed = json.dumps(changed_parameters(notebook, parameters), default=str)
    os.environ.update({**NOTEBOOK_ENV, RECORD_ENV: str(records), CHANGED_ENV: changed})
    os.environ.pop(SESSION_ENV, None)  # run from a JupyterLab kernel: its kernel is not one
    started, failure, cpu = time.perf_counter(), None, _child_cpu()
    engine, quiet = register()
    kernel_stderr = tempfile.TemporaryFile()  # the kernel's own log, not the terminal's
    try:
        with scratch(Path(tempfile.gettempdir()), KERNEL_FOLDER) as folder:
            papermill.execute_notebook(
                str(notebook), str(output), parameters=parameters, cwd=str(notebook.parent),
                kernel_name="python3", progress_bar=False,
                config=_kernel_config(folder / "kernel.json"),
                start_timeout=KERNEL_START_SECONDS, engine_name=engine,
                progress_label=progress,
                kernel_manager_class=type("QuietKernel", (quiet,), {"stderr": kernel_stderr}))
    except RagkitError:  # no temporary folder to work in: the run cannot start at all
        raise
    except KeyboardInterrupt:  # Ctrl-C: the CLI says "interrupted" in one line
        # nbclient's cell task, finished with the kernel's own KeyboardInterrupt and never
        # awaited, was logged by asyncio at exit: 225 lines of traceback after that line
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        raise
    except Exception as exc:  # papermill re-raises the cell's error; keep going, report it
        failure = _failure(exc, kernel_stderr)
    finally:
        kernel_stderr.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    mark_text_cells(output, notebook, parameters)  # text of the default run, said where read
    effective = effective_parameters(notebook, parameters)
    return {"notebook": notebook.name, "source": notebook, "output": output,
            "seconds": time.perf_counter() - started, "cpu_seconds": _child_cpu() - cpu,
            "failure": failure,
            "error": failure["line"] if failure else "", "records": load_records(records),
            "parameters": effective, "given": dict(parameters),
            "datasets": datasets_of(notebook, effective)}


def _child_cpu() -> float:
    """User + system CPU seconds of this process's finished children (the kernels)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _kernel_config(connection_file: Path):
    """Kernels talk to papermill over CurveZMQ-encrypted sockets where pyzmq has Curve
    (jupyter_client's `transport_encryption = "auto"`): a plain-TCP kernel prints a warning
    per notebook into the run's output. Older jupyter_client ignores the setting.

    The kernel's connection file is `connection_file`, in a folder of this run's
    (`ragkit.stale_temp.scratch`), not jupyter_client's default `/tmp/tmpXXXXXXXX.json`:
    a run killed with -9 left that file behind for good; its folder is removed by the next
    run."""
    # deferred: pyzmq and traitlets load only when a notebook runs
    import zmq
    from traitlets.config import Config
    policy = "auto" if zmq.has("curve") else "disabled"
    return Config({"KernelManager": {"transport_encryption": policy,
                                      "connection_file": str(connection_file)}})


# JupyterLab's copies of a notebook opened from a results folder: replaced with the folder
CHECKPOINTS = ".ipynb_checkpoints"


def is_results(path: Path) -> bool:
    """True for a folder ragkit's run or sweep wrote, holding nothing else; False for a
    folder without a readable `.ragkit-results` marker. A results folder holding something
    its marker does not list raises a RagkitError naming it, so a file a user added keeps it
    from being replaced, and the user learns which.

    JupyterLab's `.ipynb_checkpoints` folder (made when an executed notebook is opened) is
    not a stranger: `make cookbook` refused a results folder after a notebook of it was
    opened, "exists and is not a ragkit results folder". A results folder of another command
    inside it (a sweep in `results/sweep`) is one: a run into `results` deleted it unasked.
    """
    try:
        written = set(read_json(path / MARKER)["files"])
        entries = sorted(path.iterdir())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    for entry in entries:
        if entry.name in written or entry.name == MARKER or (
                entry.name == CHECKPOINTS and entry.is_dir() and not entry.is_symlink()):
            continue
        kind = ("the results of another ragkit cookbook command" if entry.is_dir()
                and (entry / MARKER).is_file() else "not written by ragkit cookbook")
        raise RagkitError(f"{entry}: {kind}, but inside the results folder {path}, which a new "
                          f"run replaces whole; move it out first (or choose another --out)")
    return True


def mark(folder: Path, command: str) -> None:
    """Write the marker listing every name in `folder` (last, once the folder is complete)."""
    files = sorted(p.name for p in folder.iterdir())
    write_text(folder / MARKER, json.dumps({"written_by": f"ragkit cookbook {command}",
                                            "files": files}, indent=1) + "\n")
