"""Run the cookbook: execute notebooks with papermill into a results folder with a report.

- `run_cookbook(out)`: executes every numbered notebook in `notebooks/` into the results
  folder `out/`, with `results.json` (`ragkit.results`: what each notebook recorded, its
  parameters, and the run's versions and data hashes), `report.html` and `summary.md`
  (`ragkit.report`).
- `sweep(notebook, out, grid)` (`ragkit.sweep`): one notebook over a parameter grid.
- `refresh()`: re-executes notebooks in place (what a contributor runs before committing).
- `record`, `record_metrics`, `finding` (`ragkit.record`): called from a notebook; store
  a table, number or the one-line finding for the report (a no-op interactively).

Parameters are checked before anything runs (`ragkit.notebook_params`): a name must be
declared in the notebook's `parameters` cell (with several notebooks: by at least one of
them, and each notebook gets only the names it declares), and a value must have its
default's type.

A failed notebook or sweep point does not stop the others; the report shows which one failed
and the failing cell's source and error, and the command then raises `RagkitError` (exit 2).

Results folders: a run or sweep builds its folder beside `out` and swaps it in only when done
(`ragkit.atomic.replace_folder`), so an interrupted run leaves the previous results whole. The
folder holds a `.ragkit-results` marker listing every name ragkit wrote there; an existing
`out` is replaced only when it is empty or such a folder holding nothing else (results of a
sweep saved inside it count as ragkit's and are replaced with it). A user's folder, or a
results folder where the user has put a file of their own, is refused; so is a file.

Notebooks run with the environment set for reproducible outputs (IPYKERNEL_CELL_NAME, no
tqdm refresh timing in outputs), the same way the test suite executes them. They share one
embedding cache (`$RAGKIT_HOME/cache/embeddings.sqlite`), so a text embedded by one notebook
costs nothing in the next, and — for the length of one command — one folder of built indexes
(`ragkit.index_cache`), so an index two notebooks both build is built once. `run` and
`refresh` execute two notebooks at a time by default (`jobs`; `ragkit.jobs`): one fills the
other's one-threaded stretches, and lock files keep them from embedding a text or building an
index twice.
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragkit import index_cache
from ragkit.atomic import check_target, replace_folder, write_text
from ragkit.documents import RagkitError
from ragkit.jobs import check_jobs, default_jobs, run_jobs
from ragkit.notebook_params import effective_parameters, parameters_for, parse_value
from ragkit.record import RECORD_ENV, finding, load_records, record, record_metrics
from ragkit.results import build_results, datasets_of, validate
from ragkit.report import write_report

__all__ = ["finding", "is_results", "notebook_paths", "parameters_for", "parse_value",
           "record", "record_metrics", "refresh", "run_cookbook", "sweep"]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
MARKER = ".ragkit-results"
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


def _failure(exc: Exception) -> dict[str, Any]:
    """The failing cell and its error (or the exception that stopped papermill), with one
    `line` for terminals."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        line = f"cell In [{exc.exec_count}]: {exc.ename}: {exc.evalue}"
        tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(exc.traceback or []))
        return {"line": " ".join(line.split()), "cell": exc.exec_count, "ename": exc.ename,
                "evalue": str(exc.evalue), "source": exc.source or "", "traceback": tb}
    line = " ".join(f"{type(exc).__name__}: {exc}".split())
    return {"line": line, "cell": None, "ename": type(exc).__name__, "evalue": str(exc),
            "source": "", "traceback": ""}


def execute(notebook: Path, output: Path, parameters: dict[str, Any] | None = None,
            progress: str | None = None) -> dict:
    """Execute one notebook with papermill; return its status, seconds, parameters, records.

    With `progress` (a label such as "[2/7] 02_x.ipynb"), a line of cells done goes to stderr
    every `RAGKIT_PROGRESS_SECONDS` while it runs (`ragkit.run_progress`).
    """
    import papermill

    from ragkit.run_progress import register

    parameters = parameters or {}
    output.parent.mkdir(parents=True, exist_ok=True)
    records = output.with_suffix(".records.json").resolve()  # the kernel runs elsewhere
    records.unlink(missing_ok=True)
    saved = {k: os.environ.get(k) for k in [*NOTEBOOK_ENV, RECORD_ENV]}
    os.environ.update({**NOTEBOOK_ENV, RECORD_ENV: str(records)})
    started, failure, cpu = time.perf_counter(), None, _child_cpu()
    try:
        papermill.execute_notebook(str(notebook), str(output), parameters=parameters,
                                   cwd=str(notebook.parent), kernel_name="python3",
                                   progress_bar=False, config=_kernel_config(),
                                   engine_name=register(), progress_label=progress)
    except Exception as exc:  # papermill re-raises the cell's error; keep going, report it
        failure = _failure(exc)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
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


def is_results(path: Path) -> bool:
    """True for a folder ragkit's run or sweep wrote, holding nothing else.

    Everything in it must be listed in its `.ragkit-results` marker or be such a folder
    itself, so a file a user added to a results folder keeps it from being replaced.
    """
    try:
        written = set(json.loads((path / MARKER).read_text())["files"])
        entries = list(path.iterdir())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return all(e.name in written or e.name == MARKER
               or (e.is_dir() and not e.is_symlink() and is_results(e)) for e in entries)


def mark(folder: Path, command: str) -> None:
    """Write the marker listing every name in `folder` (last, once the folder is complete)."""
    files = sorted(p.name for p in folder.iterdir())
    write_text(folder / MARKER, json.dumps({"written_by": f"ragkit cookbook {command}",
                                            "files": files}, indent=1) + "\n")


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def execute_numbered(number: int, total: int, notebook: Path, output: Path,
                     parameters: dict[str, Any]) -> dict:
    """`execute`, with a start line, progress lines and an end line on stderr
    ("[2/7] 02_....ipynb: 14/52 cells done (3 min 05 s)", "[2/7] 02_....ipynb: ok (…)")."""
    label = f"[{number}/{total}] {notebook.name}"
    print(f"{label} ...", file=sys.stderr, flush=True)
    result = execute(notebook, output, parameters, progress=label)
    print(f"{label}: {result['error'] or 'ok'} "
          f"({result['seconds']:.0f} s, CPU {result['cpu_seconds']:.0f} s)",
          file=sys.stderr, flush=True)
    return result


def run_cookbook(out: Path | str = "results", notebooks: Sequence[str | Path] | None = None,
                 parameters: Mapping[str, Any] | None = None, jobs: int | None = None) -> Path:
    """Execute the notebooks into `out` and write the report; fail if any notebook failed.

    The report is written either way; the error then names the notebooks that failed.
    Progress (a line as each notebook starts and ends, and its cells done every
    `RAGKIT_PROGRESS_SECONDS`, default 30) goes to stderr. `jobs` notebooks run at once
    (default `ragkit.jobs.default_jobs()`, 2 on a multi-core machine).
    """
    from ragkit.run_progress import progress_seconds

    out, paths = Path(out), notebook_paths(notebooks)
    jobs = default_jobs() if jobs is None else check_jobs(jobs)
    progress_seconds()  # a bad RAGKIT_PROGRESS_SECONDS is refused before anything runs
    shares = parameters_for(paths, parameters or {})
    check_target(out, is_results, RESULTS, folder=True)  # before the first notebook runs
    started, clock = now(), time.perf_counter()
    with replace_folder(out, is_results, RESULTS) as tmp, index_cache.shared():
        calls = [(number, len(paths), nb, tmp / nb.name, shares[nb])
                 for number, nb in enumerate(paths, start=1)]
        results = run_jobs(execute_numbered, calls, jobs)
        document = build_results(results, tmp, started, time.perf_counter() - clock,
                                 jobs=min(jobs, len(paths)))
        validate(document)
        write_text(tmp / "results.json", json.dumps(document, indent=1, ensure_ascii=False)
                   + "\n")
        write_report(document, tmp)
        mark(tmp, "run")
    failed = [r["notebook"] for r in results if r["error"]]
    if failed:
        raise RagkitError(f"notebooks failed: {', '.join(failed)} (see {out / 'summary.md'})")
    return out / "report.html"


def _kernel_config():
    """Kernels talk to papermill over CurveZMQ-encrypted sockets where pyzmq has Curve
    (jupyter_client's `transport_encryption = "auto"`): a plain-TCP kernel prints a warning
    per notebook into the run's output. Older jupyter_client ignores the setting."""
    import zmq
    from traitlets.config import Config
    policy = "auto" if zmq.has("curve") else "disabled"
    return Config({"KernelManager": {"transport_encryption": policy}})


def _strip_run_metadata(text: str) -> str:
    """Drop papermill's timings and paths so a committed notebook holds outputs only."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    return nbformat.writes(nb) + "\n"


def refresh(notebooks: Sequence[str | Path] | None = None, jobs: int | None = None
            ) -> list[Path]:
    """Re-execute notebooks in place, so the committed outputs are those of the offline run.

    Replacing the notebook with its executed self is the point of this command; a notebook
    that fails is left as it was and its error is raised once the others (`jobs` at a time,
    as `run_cookbook`) have finished.
    """
    jobs = default_jobs() if jobs is None else check_jobs(jobs)
    paths = notebook_paths(notebooks)
    with index_cache.shared():
        return run_jobs(_refresh_one, [(path,) for path in paths], jobs)


def _refresh_one(path: Path) -> Path:
    """Re-execute one notebook in place (see `refresh`)."""
    scratch = Path(tempfile.mkdtemp(prefix=f".{path.stem}.run-", dir=path.parent))
    try:
        result = execute(path, scratch / path.name, progress=path.name)
        if result["error"]:
            raise RagkitError(f"{path}: {result['error']}")
        write_text(path, _strip_run_metadata((scratch / path.name).read_text()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def sweep(notebook: str | Path | None, out: Path | str, grid: Mapping[str, Sequence[Any]],
          fresh: bool = False) -> Path:
    """One notebook over every combination of `grid` (see `ragkit.sweep.sweep`)."""
    from ragkit.sweep import sweep as run_sweep
    return run_sweep(notebook, out, grid, fresh=fresh)
