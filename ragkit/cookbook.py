"""Run the cookbook: execute notebooks with papermill and collect a report.

- `run_cookbook(out)`: executes every numbered notebook in `notebooks/` into the results
  folder `out/`, with `out/report.html` (each notebook's recorded tables and its figures) and
  `out/summary.md` (status, time, recorded tables as Markdown).
- `sweep(notebook, out, grid)`: executes one notebook once per point of a parameter grid
  into `out/` and tabulates what each run recorded (`sweep.csv`, `sweep.md`).
- `refresh()`: re-executes notebooks in place (what a contributor runs before committing).
- `record(name, value)` / `record_metrics(name, table)`: called from a notebook; store a table
  or number for the report when the notebook runs under the cookbook (a no-op interactively).

Parameters are checked before anything runs: a name must be declared in the notebook's
`parameters` cell (with several notebooks: by at least one of them, and each notebook gets
only the names it declares). String values are read as on the command line: JSON numbers,
booleans and null, else the string itself (`"3"` -> 3, `"true"` -> True, `"256,512"` stays).

A failed notebook or sweep point does not stop the others; the report shows which one failed
and the failing cell's error, and the command then raises `RagkitError` (exit status 2).

Results folders: a run or sweep builds its folder beside `out` and swaps it in only when done
(`ragkit.atomic.replace_folder`), so an interrupted run leaves the previous results whole. The
folder holds a `.ragkit-results` marker listing every name ragkit wrote there; an existing
`out` is replaced only when it is empty or such a folder holding nothing else (results of a
sweep saved inside it count as ragkit's and are replaced with it). A user's folder, or a
results folder where the user has put a file of their own, is refused; so is a file.

Notebooks run with the environment set for reproducible outputs (IPYKERNEL_CELL_NAME, no
tqdm refresh timing in outputs), the same way the test suite executes them.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ragkit.atomic import replace_folder, write_text
from ragkit.documents import RagkitError
from ragkit.report import write_report

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
MARKER = ".ragkit-results"
RESULTS = "a ragkit results folder"
RECORD_ENV = "RAGKIT_RECORD"
NOTEBOOK_ENV = {"IPYKERNEL_CELL_NAME": "<IPY-INPUT>", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "TQDM_MININTERVAL": "1000",
                "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def _store(values: dict[str, Any]) -> None:
    """Merge `values` into the records file of the current cookbook run (if any)."""
    path = os.environ.get(RECORD_ENV)
    if not path:
        return
    store = json.loads(Path(path).read_text()) if Path(path).is_file() else {}
    for name, value in values.items():
        if isinstance(value, pd.DataFrame):
            value = {"table": json.loads(value.to_json(orient="split"))}
        store[name] = value
    write_text(path, json.dumps(store, indent=1))


def record(name: str, value: Any) -> None:
    """Save a DataFrame or JSON-able value under `name` for the cookbook report."""
    _store({name: value})


def record_metrics(name: str, table: pd.DataFrame,
                   metrics: tuple[str, ...] = ("Pass@5", "Pass@20")) -> None:
    """Record a methods × metrics table, plus each `method metric` cell as a number.

    The numbers are what `sweep` tabulates, one column each.
    """
    _store({name: table, **{f"{method} {metric}": round(float(table.loc[method, metric]), 2)
                            for method in table.index for metric in metrics}})


def notebook_paths(notebooks: Sequence[str | Path] | None = None) -> list[Path]:
    """The notebooks to run: the given paths, else every `notebooks/NN_*.ipynb` in order.

    The notebooks ship with the source checkout, not with an installed wheel; finding none
    is an error rather than an empty report.
    """
    if notebooks:
        paths = [Path(p) for p in notebooks]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise RagkitError(f"no such notebook: {', '.join(missing)}")
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


def parse_value(text: Any) -> Any:
    """A parameter value as typed: JSON numbers/booleans/null, else the string itself.

    Non-strings (values given from Python) pass through unchanged.
    """
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def declared_parameters(notebook: Path) -> list[str]:
    """The names assigned in the notebook's cell tagged `parameters` (papermill's reading)."""
    import papermill

    try:
        return list(papermill.inspect_notebook(str(notebook)))
    except Exception as exc:  # unreadable JSON, no kernel named, ...: the user's file
        raise RagkitError(f"{notebook}: cannot read its parameters ({exc})") from None


def parameters_for(paths: Sequence[Path], parameters: Mapping[str, Any]) -> dict[Path, dict]:
    """Each notebook's share of `parameters` (the names it declares), values parsed.

    A name that no notebook declares is an error naming the declared ones.
    """
    declared = {path: declared_parameters(path) for path in paths}
    known = sorted({name for names in declared.values() for name in names})
    unknown = [name for name in parameters if name not in known]
    if unknown:
        where = str(paths[0]) if len(paths) == 1 else ", ".join(p.name for p in paths)
        raise RagkitError(f"{where}: no parameter {', '.join(map(repr, unknown))}; declared "
                          f"parameters: {', '.join(known) or 'none'}")
    values = {name: parse_value(value) for name, value in parameters.items()}
    return {path: {k: v for k, v in values.items() if k in declared[path]} for path in paths}


def _error_of(exc: Exception) -> str:
    """One line: the failing cell and its error, or the exception that stopped papermill."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        text = f"cell In [{exc.exec_count}]: {exc.ename}: {exc.evalue}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def execute(notebook: Path, output: Path, parameters: dict[str, Any] | None = None) -> dict:
    """Execute one notebook with papermill; return its status, seconds and records."""
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    records = output.with_suffix(".records.json").resolve()  # the kernel runs elsewhere
    records.unlink(missing_ok=True)
    saved = {k: os.environ.get(k) for k in [*NOTEBOOK_ENV, RECORD_ENV]}
    os.environ.update({**NOTEBOOK_ENV, RECORD_ENV: str(records)})
    started, error = time.perf_counter(), ""
    try:
        papermill.execute_notebook(str(notebook), str(output), parameters=parameters or {},
                                   cwd=str(notebook.parent), kernel_name="python3",
                                   progress_bar=False)
    except Exception as exc:  # papermill re-raises the cell's error; keep going, report it
        error = _error_of(exc)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    found = json.loads(records.read_text()) if records.is_file() else {}
    return {"notebook": notebook.name, "output": output, "seconds": time.perf_counter() - started,
            "error": error, "records": found}


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


def _mark(folder: Path, command: str) -> None:
    """Write the marker listing every name in `folder` (last, once the folder is complete)."""
    files = sorted(p.name for p in folder.iterdir())
    write_text(folder / MARKER, json.dumps({"written_by": f"ragkit cookbook {command}",
                                            "files": files}, indent=1) + "\n")


def run_cookbook(out: Path | str = "results", notebooks: Sequence[str | Path] | None = None,
                 parameters: Mapping[str, Any] | None = None) -> Path:
    """Execute the notebooks into `out` and write the report; fail if any notebook failed.

    The report is written either way; the error then names the notebooks that failed.
    """
    out, paths = Path(out), notebook_paths(notebooks)
    shares = parameters_for(paths, parameters or {})
    with replace_folder(out, is_results, RESULTS) as tmp:
        results = [execute(nb, tmp / nb.name, shares[nb]) for nb in paths]
        write_report(results, tmp)
        _mark(tmp, "run")
    failed = [r["notebook"] for r in results if r["error"]]
    if failed:
        raise RagkitError(f"notebooks failed: {', '.join(failed)} (see {out / 'summary.md'})")
    return out / "report.html"


def _strip_run_metadata(text: str) -> str:
    """Drop papermill's timings and paths so a committed notebook holds outputs only."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    return nbformat.writes(nb) + "\n"


def refresh(notebooks: Sequence[str | Path] | None = None) -> list[Path]:
    """Re-execute notebooks in place, so the committed outputs are those of the offline run.

    Replacing the notebook with its executed self is the point of this command; a notebook
    that fails is left as it was and stops the refresh.
    """
    done = []
    for path in notebook_paths(notebooks):
        scratch = Path(tempfile.mkdtemp(prefix=f".{path.stem}.run-", dir=path.parent))
        try:
            result = execute(path, scratch / path.name)
            if result["error"]:
                raise RagkitError(f"{path}: {result['error']}")
            write_text(path, _strip_run_metadata((scratch / path.name).read_text()))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        done.append(path)
    return done


def _tag(params: Mapping[str, Any]) -> str:
    """`a=1__b=x` for file names (anything but letters, digits and `.,=-` becomes `_`)."""
    return re.sub(r"[^\w.,=-]+", "_", "__".join(f"{k}={v}" for k, v in params.items()))


def sweep(notebook: str | Path | None, out: Path | str,
          grid: Mapping[str, Sequence[Any]]) -> Path:
    """Execute one notebook for every combination in `grid`; tabulate the recorded numbers.

    Every point runs; when some failed, `sweep.md` shows their error and this raises after
    writing it.
    """
    if not notebook:
        raise RagkitError("sweep needs --notebook PATH")
    if not grid:
        raise RagkitError("sweep needs at least one --param NAME=V1,V2")
    path, out = notebook_paths([notebook])[0], Path(out)
    parameters_for([path], grid)
    points = [{k: parse_value(v) for k, v in zip(grid, values)}
              for values in itertools.product(*grid.values())]
    with replace_folder(out, is_results, RESULTS) as tmp:
        rows = []
        for params in points:
            res = execute(path, tmp / f"{path.stem}__{_tag(params)}.ipynb", params)
            scalars = {k: v for k, v in res["records"].items() if isinstance(v, (int, float))}
            rows.append({**params, **scalars, "error": res["error"]})
        table = pd.DataFrame(rows)
        write_text(tmp / "sweep.csv", table.to_csv(index=False))
        shown = table.assign(error=table["error"].str.replace("|", "\\|", regex=False))
        write_text(tmp / "sweep.md", shown.to_markdown(index=False) + "\n")
        _mark(tmp, "sweep")
    failed = [_tag({k: row[k] for k in grid}) for row in rows if row["error"]]
    if failed:
        raise RagkitError(f"{len(failed)} of {len(rows)} sweep points failed: "
                          f"{', '.join(failed)} (see {out / 'sweep.md'})")
    return out / "sweep.md"
