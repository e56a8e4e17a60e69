"""`ragkit cookbook sweep`: one notebook over a parameter grid, tabulated and plotted.

What it is: `sweep(notebook, out, grid)` executes the notebook once per combination of the
grid's values into `out/` and writes `sweep.csv` and `sweep.md` (the swept parameters, then
every number the run recorded, then the error; `sweep.csv`'s text cells formula-safe, as
`ragkit.sheet_cells` writes them), and `sweep_<parameter>.png` for each swept
parameter, as readable as a notebook's figures (`ragkit.sweep_plots`; one that is not is
left out, and sweep.md and a warning line say why): one panel per recorded
metric (a `record_metrics` column, one line per method; or a number recorded alone) against
that parameter's values, averaged over the other parameters' values when several are
swept. A parameter given one value (`-p data_dir=DIR`)
is held fixed: it is in the tables but gets no plot. A progress bar over points goes to stderr
(`ragkit.progress`: in a notebook, to the cell's output), and above it, every
`RAGKIT_PROGRESS_SECONDS` (30), the running point's cells done (in a notebook, plain lines
of the cell's output below the bar).

Completed points are reused: each finished point is kept under
`$RAGKIT_HOME/cache/sweeps/`, keyed by the notebook's bytes, the point's parameters, the
ragkit source, the data sets' hashes and the online/offline backends, so a re-run (or a run
after an interrupted one) executes only the points whose inputs changed or that failed. A
point is written beside its place and swapped in whole (`_keep_point`), so sweeps sharing
one `RAGKIT_HOME` that finish the same point at once both succeed.
`fresh=True` (`--fresh`) executes every point.

What it is not: a scheduler — points run one after another, each in its own kernel.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ragkit import index_cache
from ragkit.atomic import check_target, replace_folder, write_text
from ragkit.chunking import ChunkerConfig
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.evaluate import fixed_text, metric_decimals, round_metrics
from ragkit.figure_check import UnreadableFigure
from ragkit.models import ragkit_home
from ragkit.notebook_params import check_splits, effective_parameters, parameters_for
from ragkit.notebook_runner import RESULTS, execute, is_results, mark, notebook_paths
from ragkit.progress import progress_bar
from ragkit.questions.sheets import edited_sheets
from ragkit.record import load_records
from ragkit.results import datasets_of, folder_hash
from ragkit.run_progress import progress_seconds
from ragkit.sheet_cells import csv_text
from ragkit.sweep_plots import metric_panels, parameter_figure, plot_parameter  # noqa: F401
from ragkit.text_stats import counted

PACKAGE = Path(__file__).resolve().parent


def _tag(params: Mapping[str, Any]) -> str:
    """`a=1__b=x` for file names (anything but letters, digits and `.,=-` becomes `_`)."""
    return re.sub(r"[^\w.,=-]+", "_", "__".join(f"{k}={v}" for k, v in params.items()))


def check_grid(grid: Mapping[str, Sequence[Any]]) -> None:
    """A grid with no parameter, or a parameter with no (or an empty) value, is an error; so
    is a value given twice (`chunk_size=256,256` ran the same point twice, two rows of the
    table and two marks on the plot for one result)."""
    if not grid:
        raise RagkitError("sweep needs at least one --param NAME=V1,V2")
    for name, values in grid.items():
        shown = ",".join(map(str, values))
        if not values or any(isinstance(v, str) and not v.strip() for v in values):
            raise RagkitError(f"--param {name}={shown}: a sweep needs values, "
                              f"e.g. {name}=V1,V2 (no empty ones)")
        twice = [v for i, v in enumerate(values) if v in values[:i]]
        if twice:
            raise RagkitError(f"--param {name}={shown}: {twice[0]} is given twice")


def source_fingerprint() -> str:
    """sha256 of ragkit's Python sources: a changed package re-runs the points."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


QUESTION_SET = "question_set"  # what a notebook records to name the questions it scored


def point_key(notebook: Path, params: Mapping[str, Any], fingerprint: str) -> str:
    """The cache key of one point: everything its results depend on — the notebook, the
    parameters, ragkit's sources, the input folders' contents, the online keys set, and
    the review sheets a reviewer edited in its output folders (`*_folder` parameters:
    notebook 08's review sheet; an edited sheet was ignored and every point reused)."""
    effective = effective_parameters(notebook, params)
    data = {name: folder_hash(path)["sha256"] for name, path in
            datasets_of(notebook, effective).items()}
    reviews = {name: edited_sheets((notebook.parent / value).resolve())
               for name, value in sorted(effective.items())
               if name.endswith("_folder") and isinstance(value, str) and value.strip()}
    online = sorted(k for k in ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY") if os.environ.get(k))
    text = json.dumps({"notebook": hashlib.sha256(notebook.read_bytes()).hexdigest(),
                       "params": params, "ragkit": fingerprint, "data": data,
                       "online": online, **({"reviews": reviews} if any(reviews.values())
                                            else {})}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _cache_dir() -> Path:
    return ragkit_home() / "cache" / "sweeps"


def _run_point(notebook: Path, target: Path, params: dict, key: str, fresh: bool) -> dict:
    """Execute one point into `target`, or copy it from the cache; keep it there if it passed.

    While it executes, its cells done go to stderr every `RAGKIT_PROGRESS_SECONDS`
    (`ragkit.run_progress`), above the bar over points; in a notebook, to the cell's output."""
    cached = _cache_dir() / key
    if not fresh and (cached / "point.json").is_file():
        shutil.copyfile(cached / "notebook.ipynb", target)
        shutil.copyfile(cached / "records.json", target.with_suffix(".records.json"))
        return {"records": load_records(target.with_suffix(".records.json")), "error": "",
                "reused": True}
    result = execute(notebook, target, params, progress=f"{notebook.stem} {_tag(params)}")
    if not result["error"]:
        _keep_point(cached, target, result["records"], params)
    return {**result, "reused": False}


def _is_point(path: Path) -> bool:
    """A completed point's folder in the cache (what `_keep_point` writes)."""
    return (path / "point.json").is_file()


def _keep_point(cached: Path, executed: Path, records: dict, params: Mapping[str, Any]) -> None:
    """Keep a completed point in the cache folder `cached`, written beside and swapped in
    whole (`replace_folder`: a staging folder of this process's own). Why: sweeps sharing a
    `RAGKIT_HOME` (a class on one machine) finish the same point at once; with one staging
    name for all, one deleted the other's half-written folder and that sweep failed ("cannot
    write a ragkit results folder (No such file or directory)"). Now each keeps a whole copy,
    the last one in stays, and a reader finds the old point or the new one, never neither."""
    with replace_folder(cached, _is_point, "a completed sweep point") as tmp:
        shutil.copyfile(executed, tmp / "notebook.ipynb")
        # from the result: a notebook that records nothing leaves no records file
        (tmp / "records.json").write_text(json.dumps(records, default=str))
        (tmp / "point.json").write_text(json.dumps({"params": params}, default=str))


_SCORES = ("Pass@", "Fail@", "R@", "MRR", "nDCG", "%", "$", "accuracy")  # not counts


def _shown(table: pd.DataFrame, grid: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """sweep.md's cells: the swept parameters as given (rounded, α 0.55 and 0.65 both read
    0.6), each metric at its column's decimals in every row (not "100" over "85.7"), a count
    that is whole in every row without decimals ("147", not "147.0")."""
    metrics = [c for c in table.columns if c not in grid]
    shown = table.copy()
    shown[metrics] = round_metrics(table[metrics])
    for column in metrics:
        values = shown[column]
        if values.dtype.kind == "f":
            whole = (values.dropna().size and (values.dropna() % 1 == 0).all()
                     and not any(m in column for m in _SCORES))
            places = 0 if whole else metric_decimals(str(column))
            shown[column] = fixed_text(values, places)
    return shown


def _numeric(values: Sequence[Any]) -> bool:
    """Whether a column's shown values (blanks aside) are all numbers, as tabulate aligns."""
    shown = [v for v in values if str(v) != ""]
    try:
        [float(v) for v in shown]
    except (TypeError, ValueError):
        return False
    return bool(shown)


def sweep(notebook: str | Path | None, out: Path | str, grid: Mapping[str, Sequence[Any]],
          fresh: bool = False) -> Path:
    """Execute one notebook for every combination in `grid`; tabulate and plot the numbers.

    Every point runs (or is reused); when some failed, `sweep.md` shows their error and this
    raises after writing it. A plot that could not be made readable is not drawn: `sweep.md`
    says why and so does a `RagkitWarning` (the CLI's `ragkit: warning:` line, exit 0) — the
    numbers of a long sweep are whole whatever its figures.
    """
    if not notebook:
        raise RagkitError("sweep needs --notebook PATH")
    check_grid(grid)
    progress_seconds()  # a bad RAGKIT_PROGRESS_SECONDS is refused before anything runs
    path, out = notebook_paths([notebook])[0], Path(out)
    points = [dict(parameters_for([path], dict(zip(grid, values)))[path])
              for values in itertools.product(*grid.values())]
    for params in points:  # a point the notebook would refuse is refused before any runs
        _check_chunking(path, params)
        check_splits({path: params})
    check_target(out, is_results, RESULTS, folder=True)
    fingerprint = source_fingerprint()
    with replace_folder(out, is_results, RESULTS) as tmp, index_cache.shared():
        rows, records, question_sets = [], [], set()
        for params in progress_bar(points, desc=f"sweep {path.stem}", unit="point"):
            res = _run_point(path, tmp / f"{path.stem}__{_tag(params)}.ipynb", params,
                             point_key(path, params, fingerprint), fresh)
            records.append(res["records"])
            question_sets.add(res["records"].get("values", {}).get(QUESTION_SET))
            rows.append({**params, **res["records"]["numbers"], "error": res["error"]})
            rows[-1]["reused"] = res["reused"]
        unreadable = _write_tables(tmp, pd.DataFrame(rows), grid, metric_panels(records),
                                   len(question_sets - {None}) > 1)
        mark(tmp, "sweep")
    failed = [_tag({k: row[k] for k in grid}) for row in rows if row["error"]]
    if failed:
        raise RagkitError(f"{len(failed)} of {len(rows)} sweep points failed: "
                          f"{', '.join(failed)} (see {out / 'sweep.md'})")
    for problem in unreadable:  # the numbers are whole: a warning, not a failed sweep
        warnings.warn(f"{problem} (not drawn; the tables are in {out / 'sweep.md'})",
                      RagkitWarning, stacklevel=2)
    return out / "sweep.md"


def _check_chunking(notebook: Path, params: Mapping[str, Any]) -> None:
    """A point whose chunk size and overlap (given, else the notebook's) no chunker takes:
    one line naming the point, before the sweep runs (it failed only after running)."""
    used = effective_parameters(notebook, params)
    if "chunk_size" in used and "overlap" in used:
        try:
            ChunkerConfig(int(used["chunk_size"]), int(used["overlap"]))
        except (RagkitError, TypeError, ValueError) as exc:
            raise RagkitError(f"sweep point {_tag(params)}: {exc}; sweep overlap too "
                              f"(--param overlap=...) or drop the point") from None


def _cell_md(value: Any) -> Any:
    """A text cell of sweep.md on one line of its row: "|" escaped, a line break a space (a
    swept folder named `a|b` split its row, every number then under the next column's name,
    as an error's "|" once did)."""
    if not isinstance(value, str):
        return value
    return " ".join(value.splitlines()).replace("|", "\\|")


def _write_tables(folder: Path, table: pd.DataFrame, grid: Mapping[str, Sequence[Any]],
                  panels: dict[str, list[str]], own_questions: bool = False) -> list[str]:
    """sweep.csv, sweep.md (with the plots and which points were reused), the plots; returns
    what made a plot unreadable ("sweep_k.png: unreadable figure: …"), that plot not drawn
    and sweep.md saying so: the tables of a long sweep are kept whatever its figures. With
    `own_questions` (the points recorded different `QUESTION_SET`s: notebook 08 generates its
    questions per point, so a chunk size's point is scored on its own questions) sweep.md
    says that a difference between points is not the parameter's effect alone."""
    reused = int(table.pop("reused").sum())
    write_text(folder / "sweep.csv", csv_text(table))  # formula-safe text cells
    shown = _shown(table, grid).map(_cell_md)  # sweep.csv keeps the exact numbers and texts
    lines = [shown.to_markdown(index=False, disable_numparse=True,  # numbers right-aligned
                               colalign=["right" if _numeric(shown[c]) else "left"
                                         for c in shown.columns]), "",
             f"{counted(len(table), 'point')}, {reused} reused from earlier runs, "
             f"{len(table) - reused} executed."]
    if own_questions:
        lines += ["", "The points were scored on different question sets (each generated its "
                  "own): a difference between them is not the swept parameter's effect alone. "
                  "To compare on one set, score the configurations on a reviewed golden file "
                  "(`ragkit eval DOCS --questions FILE`)."]
    unreadable = []
    for parameter in grid:
        if panels and len(set(map(str, grid[parameter]))) > 1:  # a fixed one has no axis
            name = f"sweep_{_tag({parameter: ''}).rstrip('=')}.png"
            try:
                averaged = [other for other in grid if other != parameter
                            and len(set(map(str, grid[other]))) > 1]
                plot_parameter(table[table["error"] == ""], parameter, panels, folder / name,
                               averaged)
                lines += ["", f"![recorded metrics against {parameter}]({name})"]
            except UnreadableFigure as exc:
                problem = " ".join(str(exc).split())  # one line: titles wrap
                unreadable.append(f"{name}: {problem}")
                lines += ["", f"{name} not drawn, {problem}"]
    write_text(folder / "sweep.md", "\n".join(lines) + "\n")
    return unreadable
