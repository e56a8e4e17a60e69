"""Run the cookbook: execute notebooks with papermill and collect a report.

- `run_cookbook(out)`: executes every numbered notebook in `notebooks/` into `out/`, and
  writes `out/report.html` (each notebook's recorded tables and its figures) and
  `out/summary.md` (status, time, recorded tables as Markdown).
- `sweep(notebook, out, grid)`: executes one notebook once per point of a parameter grid and
  tabulates what each run recorded.
- `refresh()`: re-executes notebooks in place (what a contributor runs before committing).
- `record(name, value)` / `record_metrics(name, table)`: called from a notebook; store a table or number for the report
  when the notebook runs under the cookbook (a no-op interactively).

Notebooks run with the environment set for reproducible outputs (IPYKERNEL_CELL_NAME, no
tqdm refresh timing in outputs), the same way the test suite executes them.
"""
from __future__ import annotations

import base64
import html
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ragkit.documents import RagkitError
from ragkit.atomic import write_text as write_atomic

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
RECORD_ENV = "RAGKIT_RECORD"
NOTEBOOK_ENV = {"IPYKERNEL_CELL_NAME": "<IPY-INPUT>", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "TQDM_MININTERVAL": "1000", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


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
    write_atomic(path, json.dumps(store, indent=1))


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


def notebook_paths(notebooks: list[str] | None = None) -> list[Path]:
    """The notebooks to run: the given paths, else every `notebooks/NN_*.ipynb` in order."""
    if notebooks:
        paths = [Path(p) for p in notebooks]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise RagkitError(f"no such notebook: {', '.join(missing)}")
        return paths
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


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
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc) else ''}"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    found = json.loads(records.read_text()) if records.is_file() else {}
    return {"notebook": notebook.name, "output": output, "seconds": time.perf_counter() - started,
            "error": error, "records": found}


def _as_frame(value: Any) -> pd.DataFrame | None:
    if isinstance(value, dict) and "table" in value:
        t = value["table"]
        return pd.DataFrame(t["data"], index=t["index"], columns=t["columns"])
    return None


def _figures(output: Path) -> list[str]:
    nb = json.loads(output.read_text()) if output.is_file() else {"cells": []}
    return [o["data"]["image/png"] for c in nb["cells"] for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def _tables(records: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Recorded tables by name; every other recorded value gathered into one `values` table."""
    tables = {name: frame for name, value in records.items()
              if (frame := _as_frame(value)) is not None}
    others = {name: value for name, value in records.items() if name not in tables}
    if others:
        tables["values"] = pd.DataFrame({"value": pd.Series(others, dtype=object)})
    return tables


def write_report(results: list[dict], out: Path) -> Path:
    """`report.html` with every recorded table and figure; `summary.md` in plain text."""
    parts = ["<html><head><meta charset='utf-8'><title>ragkit cookbook report</title>"
             "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
             "</style></head><body><h1>ragkit cookbook report</h1>"]
    lines = ["# ragkit cookbook summary", "", "| notebook | status | seconds |", "|---|---|---|"]
    sections = []
    for res in results:
        status = f"failed: {res['error']}" if res["error"] else "ok"
        lines.append(f"| {res['notebook']} | {status} | {res['seconds']:.0f} |")
        parts.append(f"<h2>{html.escape(res['notebook'])}</h2><p>{html.escape(status)}</p>")
        for name, frame in _tables(res["records"]).items():
            table = frame.to_html(float_format=lambda v: f"{v:.3g}")
            parts.append(f"<h3>{html.escape(name)}</h3>{table}")
            sections += ["", f"## {res['notebook']}: {name}", "", frame.to_markdown(floatfmt=".3g")]
        for png in _figures(res["output"]):
            parts.append(f"<img src='data:image/png;base64,{png}' style='max-width:100%'>")
    write_atomic(out / "report.html", "".join(parts) + "</body></html>")
    write_atomic(out / "summary.md", "\n".join(lines + sections) + "\n")
    return out / "report.html"


def run_cookbook(out: Path | str = "results", notebooks: list[str] | None = None,
                 parameters: dict[str, Any] | None = None) -> Path:
    """Execute the notebooks into `out` and write the report; fail if any notebook failed."""
    out = Path(out)
    results = [execute(nb, out / nb.name, parameters) for nb in notebook_paths(notebooks)]
    report = write_report(results, out)
    failed = [r["notebook"] for r in results if r["error"]]
    if failed:
        raise RagkitError(f"notebooks failed: {', '.join(failed)} (see {out})")
    return report


def _strip_run_metadata(path: Path) -> None:
    """Drop papermill's timings and paths so a committed notebook holds outputs only."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    write_atomic(path, nbformat.writes(nb) + "\n")


def refresh(notebooks: list[str] | None = None) -> list[Path]:
    """Re-execute notebooks in place, so the committed outputs are those of the offline run."""
    done = []
    for path in notebook_paths(notebooks):
        tmp = path.with_name(f".{path.stem}.run.ipynb")
        result = execute(path, tmp)
        tmp.with_suffix(".records.json").unlink(missing_ok=True)
        if result["error"]:
            tmp.unlink(missing_ok=True)
            raise RagkitError(f"{path}: {result['error']}")
        _strip_run_metadata(tmp)
        tmp.replace(path)
        done.append(path)
    return done


def sweep(notebook: str | None, out: Path | str, grid: dict[str, list[str]]) -> Path:
    """Execute one notebook for every combination in `grid`; tabulate the recorded numbers."""
    if not notebook:
        raise RagkitError("sweep needs --notebook PATH")
    if not grid:
        raise RagkitError("sweep needs at least one --param NAME=V1,V2")
    path, out = notebook_paths([notebook])[0], Path(out)
    rows = []
    for values in itertools.product(*grid.values()):
        params = {k: _literal(v) for k, v in zip(grid, values)}
        tag = "__".join(f"{k}={v}" for k, v in params.items())
        res = execute(path, out / f"{path.stem}__{tag}.ipynb", params)
        scalars = {k: v for k, v in res["records"].items() if isinstance(v, (int, float))}
        rows.append({**params, **scalars, "error": res["error"]})
    table = pd.DataFrame(rows)
    write_atomic(out / "sweep.csv", table.to_csv(index=False))
    write_atomic(out / "sweep.md", table.to_markdown(index=False) + "\n")
    return out / "sweep.md"


def _literal(text: str) -> Any:
    """Parse a sweep value: JSON numbers/booleans/null, else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
