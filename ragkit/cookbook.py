"""Run the cookbook: execute notebooks with papermill into a results folder with a report.

- `run_cookbook(out)`: executes every numbered notebook in `notebooks/` into the results
  folder `out/`, with `results.json` (`ragkit.results`: what each notebook recorded, its
  parameters, and the run's versions and data hashes), `report.html` and `summary.md`
  (`ragkit.report`).
- `sweep(notebook, out, grid)` (`ragkit.sweep`): one notebook over a parameter grid.
- `refresh()`: re-executes notebooks in place (what a contributor runs before committing).
- `record`, `record_metrics`, `finding` (`ragkit.record`): called from a notebook; store
  a table, number or the one-line finding for the report (a no-op interactively).
- `data_banner`, `parameters_banner`, `check_depth`, `check_every`, `check_folder`,
  `check_count`, `live`, `skip_unless`, `prose`, `counted` ("1 question", "2 questions"),
  `escaped` (text of the data printed with its escape sequences shown, not obeyed)
  and what a section needs from the data (`ragkit.notebook_data`; the checks:
  `ragkit.notebook_params`): called from a notebook, so it runs on any folder in the shipped
  layout (`raw_corpus`: the raw files 06 and 07 grep, also for a `documents.jsonl`);
  `run_folder`, a kernel's scratch folder that a killed kernel does not leave behind;
  `unchanged(*names)`, whether the run keeps those parameters at their defaults.

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
tqdm refresh timing in outputs), the same way the test suite executes them
(`ragkit.notebook_runner`, shared with `ragkit.sweep`). They share one
embedding cache (`$RAGKIT_HOME/cache/embeddings.sqlite`), so a text embedded by one notebook
costs nothing in the next, and — for the length of one command — one folder of built indexes
(`ragkit.index_cache`), so an index two notebooks both build is built once. `run` and
`refresh` execute two notebooks at a time by default (`jobs`; `ragkit.jobs`): one fills the
other's one-threaded stretches, and lock files keep them from embedding a text or building an
index twice.
"""
from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragkit import index_cache
from ragkit.atomic import check_target, replace_folder, write_text
from ragkit.documents import RagkitError
from ragkit.jobs import check_jobs, default_jobs, run_jobs
from ragkit.loaders.folder import escaped  # notebooks print data text with it
from ragkit.text_stats import counted  # notebooks count in their prose with it
from ragkit.notebook_data import (context_example, data_banner, data_label, document_kind,
                                  example_question, is_shipped, joined, korean_questions,
                                  leaders, parameters_banner, prose, raw_corpus, replay_path,
                                  skip_unless)
from ragkit.notebook_params import (check_count, check_depth, check_every, check_folder,
                                    check_splits, declared_parameters, live, parameters_for,
                                    parse_value, unchanged)
# MARKER, execute, is_results, notebook_paths: importable from here too, as before
from ragkit.notebook_runner import MARKER, RESULTS, execute, is_results, mark, notebook_paths
from ragkit.progress import note
from ragkit.record import finding, record, record_metrics
from ragkit.results import build_results, validate
from ragkit.report import write_report
from ragkit.run_progress import progress_seconds
from ragkit.stale_temp import process_scratch, scratch
from ragkit.sweep import sweep

__all__ = ["check_count", "check_depth", "check_every", "check_folder", "context_example",
           "counted", "data_banner", "data_label", "document_kind", "escaped", "example_question",
           "finding", "is_results", "is_shipped", "joined", "korean_questions", "leaders", "live",
           "notebook_paths", "parameters_banner", "parameters_for", "parse_value", "prose",
           "raw_corpus", "record", "record_metrics", "refresh", "replay_path", "run_cookbook",
           "run_folder", "skip_unless", "sweep", "unchanged"]

REFRESH_PREFIX = ".ragkit-refresh-"  # + PID.HOST-*: where `refresh` executes a notebook


def run_folder(name: str) -> Path:
    """A folder for what one kernel's run of a notebook writes on the side (notebook 05's
    traces and notes), `ragkit-NAME-PID.HOST-*` in the system's temporary folder: removed when
    the kernel exits, or by the next run's kernel when papermill or nbval killed this one
    (`ragkit.stale_temp.process_scratch`). Not a results folder: nothing in it is kept."""
    return process_scratch(f"ragkit-{name}-")


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def execute_numbered(number: int, total: int, notebook: Path, output: Path,
                     parameters: dict[str, Any]) -> dict:
    """`execute`, with a start line, progress lines and an end line as notes
    ("[2/8] 02_....ipynb: 7/26 cells done (3 min 05 s)", "[2/8] 02_....ipynb: ok (…)"):
    stderr in a terminal, the cell's plain output in a Jupyter kernel (`ragkit.progress`)."""
    label = f"[{number}/{total}] {notebook.name}"
    note(f"{label} ...")
    result = execute(notebook, output, parameters, progress=label)
    note(f"{label}: {result['error'] or 'ok'} "
         f"({result['seconds']:.0f} s, CPU {result['cpu_seconds']:.0f} s)")
    return result


def run_cookbook(out: Path | str = "results", notebooks: Sequence[str | Path] | None = None,
                 parameters: Mapping[str, Any] | None = None, jobs: int | None = None) -> Path:
    """Execute the notebooks into `out` and write the report; fail if any notebook failed.

    The report is written either way; the error then names the notebooks that failed.
    Progress (a line as each notebook starts and ends, and its cells done every
    `RAGKIT_PROGRESS_SECONDS`, default 30) goes to stderr (a cell's output in a kernel).
    `jobs` notebooks run at once (default `ragkit.jobs.default_jobs()`, 2 on a multi-core
    machine).
    """
    out, paths = Path(out), notebook_paths(notebooks)
    jobs = default_jobs() if jobs is None else check_jobs(jobs)
    progress_seconds()  # a bad RAGKIT_PROGRESS_SECONDS is refused before anything runs
    shares = parameters_for(paths, parameters or {})
    check_splits(shares)  # one line for a split the data lacks, not one per notebook
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


def _strip_run_metadata(text: str, path: Path) -> str:
    """Drop papermill's timings and paths so a committed notebook holds outputs only; record
    its defaults (`ragkit.notebook_params.edited_parameters` compares with them)."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    nb.metadata.pop("papermill", None)
    nb.metadata["ragkit"] = {"defaults": declared_parameters(path)}
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
    """Re-execute one notebook in place (see `refresh`), into a hidden folder beside it
    (`REFRESH_PREFIX`, named by its process: a refresh killed with -9 or by a closed terminal
    left it among the user's notebooks for good; the next refresh there deletes it)."""
    with scratch(path.parent, REFRESH_PREFIX) as folder:
        result = execute(path, folder / path.name, progress=path.name)
        if result["error"]:
            raise RagkitError(f"{path}: {result['error']}")
        write_text(path, _strip_run_metadata((folder / path.name).read_text(), path))
    return path

