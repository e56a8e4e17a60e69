"""`results.json`: everything a cookbook run measured, and what it ran on, in one file.

What it is: `build_results(executed, started)` turns the notebooks `ragkit.cookbook`
executed into one JSON document — for each notebook its title, what it teaches, its finding,
status, seconds, parameters, recorded tables, numbers and figures; for the run the ragkit
version, git commit, data set hashes, Python and package versions, CPU cores and whether each
paid backend was online. `SCHEMA` is its JSON Schema (documented in notebooks/README.md),
and `validate` checks a document against it.

What it is not: the report (`ragkit.report` renders this document) nor a store of figures:
figures stay in the executed notebooks, which the document names.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import ragkit

FORMAT, VERSION = "ragkit-cookbook-results", 1
ROOT = Path(__file__).resolve().parent.parent
LEARN = re.compile(r"^\W*what you will learn\W*$", re.I)
FIGURE = re.compile(r"^#\s*Figure:\s*(.+)$")

_TABLE = {"type": "object", "required": ["caption", "metrics", "index", "columns", "data"],
          "properties": {"caption": {"type": "string"},
                         "metrics": {"type": "array", "items": {"type": "string"}},
                         "index_name": {"type": ["string", "null"]},
                         "index": {"type": "array", "items": {"type": "string"}},
                         "columns": {"type": "array", "items": {"type": "string"}},
                         "column_levels": {"type": "array", "items": {
                             "type": "array", "items": {"type": "string"}}},
                         "column_metrics": {"type": "object",
                                            "additionalProperties": {"type": "string"}},
                         "data": {"type": "array", "items": {"type": "array"}}}}
_NOTEBOOK = {
    "type": "object",
    "required": ["name", "title", "learn", "finding", "status", "seconds", "error",
                 "parameters", "overridden", "datasets", "tables", "numbers", "values",
                 "figures", "executed"],
    "properties": {
        "name": {"type": "string", "pattern": r"^\d\d_.*\.ipynb$"},
        "title": {"type": "string"}, "learn": {"type": "array", "items": {"type": "string"}},
        "finding": {"type": ["string", "null"]},
        "status": {"enum": ["ok", "failed"]}, "seconds": {"type": "number", "minimum": 0},
        "error": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["line", "cell", "ename", "evalue", "source"],
            "properties": {"line": {"type": "string"}, "cell": {"type": ["integer", "null"]},
                           "ename": {"type": "string"}, "evalue": {"type": "string"},
                           "source": {"type": "string"}, "traceback": {"type": "string"}}}]},
        "parameters": {"type": "object"},
        "overridden": {"type": "array", "items": {"type": "string"}},
        "datasets": {"type": "array", "items": {"type": "string"}},
        "tables": {"type": "object", "additionalProperties": _TABLE},
        "numbers": {"type": "object", "additionalProperties": {"type": "number"}},
        "values": {"type": "object"},
        "figures": {"type": "array", "items": {
            "type": "object", "required": ["cell", "caption"],
            "properties": {"cell": {"type": "integer"}, "caption": {"type": "string"}}}},
        "executed": {"type": "string"}}}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ragkit cookbook results", "type": "object",
    "required": ["format", "version", "run", "notebooks"],
    "properties": {
        "format": {"const": FORMAT}, "version": {"const": VERSION},
        "run": {"type": "object",
                "required": ["command", "started", "seconds", "ragkit", "git", "python",
                             "platform", "cpu_count", "packages", "backends", "datasets"],
                "properties": {
                    "command": {"type": "string"}, "started": {"type": "string"},
                    "seconds": {"type": "number", "minimum": 0},
                    "ragkit": {"type": "string"},
                    "git": {"type": "object", "required": ["commit", "dirty"],
                            "properties": {"commit": {"type": ["string", "null"]},
                                           "dirty": {"type": ["boolean", "null"]}}},
                    "python": {"type": "string"}, "platform": {"type": "string"},
                    "cpu_count": {"type": "integer", "minimum": 1},
                    "jobs": {"type": "integer", "minimum": 1},
                    "packages": {"type": "object",
                                 "additionalProperties": {"type": ["string", "null"]}},
                    "backends": {"type": "object", "additionalProperties": {
                        "enum": ["online", "offline"]}},
                    "datasets": {"type": "object", "additionalProperties": {
                        "type": "object", "required": ["sha256", "files", "bytes"],
                        "properties": {"sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                                       "files": {"type": "integer"},
                                       "bytes": {"type": "integer"}}}}}},
        "notebooks": {"type": "array", "items": _NOTEBOOK}}}


def validate(document: dict) -> None:
    """Raise `jsonschema.ValidationError` unless `document` follows `SCHEMA`."""
    import jsonschema
    jsonschema.validate(document, SCHEMA)


def intro(notebook: Path) -> tuple[str, list[str]]:
    """The title (first `# ` line) and the "What you will learn" bullets of the first cell."""
    import nbformat
    cells = nbformat.read(notebook, as_version=4).cells
    lines = cells[0].source.splitlines() if cells and cells[0].cell_type == "markdown" else []
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), notebook.stem)
    bullets: list[str] = []
    start = next((i for i, ln in enumerate(lines) if LEARN.match(ln.strip())), None)
    for line in lines[start + 1:] if start is not None else []:
        if line.startswith(("- ", "* ")):
            bullets.append(line[2:].strip())
        elif bullets and line.startswith(" ") and line.strip():
            bullets[-1] += " " + line.strip()
        elif bullets or line.strip():
            break
    return title, bullets


def figures(executed: Path) -> list[dict[str, Any]]:
    """Each figure cell of an executed notebook: its index and its `# Figure:` caption."""
    import nbformat
    if not executed.is_file():
        return []
    found = []
    for index, cell in enumerate(nbformat.read(executed, as_version=4).cells):
        if any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
            first = cell.source.splitlines()[0] if cell.source else ""
            match = FIGURE.match(first.strip())
            found.append({"cell": index, "caption": match.group(1).strip() if match else ""})
    return found


def folder_hash(folder: Path) -> dict[str, Any]:
    """sha256 over every file's relative path and content (hidden files skipped)."""
    digest, files, size = hashlib.sha256(), 0, 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(folder).parts)):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
        digest.update(hashlib.sha256(data).digest())
        files, size = files + 1, size + len(data)
    return {"sha256": digest.hexdigest(), "files": files, "bytes": size}


def datasets_of(notebook: Path, parameters: dict[str, Any]) -> dict[str, Path]:
    """The folders a notebook's `*_dir` and `*_root` parameters name (its inputs: notebook
    05's corpus and code folders too), by a short name (relative to the project when inside
    it). Not `review_folder` and other output folders: their hash would change as they are
    written."""
    found = {}
    for name, value in parameters.items():
        if name.endswith(("_dir", "_root")) and isinstance(value, str):
            folder = (notebook.parent / value).resolve()
            if folder.is_dir():
                try:
                    shown = folder.relative_to(ROOT.resolve()).as_posix()
                except ValueError:
                    shown = str(folder)
                found[shown] = folder
    return found


def _git() -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()
    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _packages() -> dict[str, str | None]:
    """Installed versions of ragkit's declared dependencies (None when absent)."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.is_file():  # a source checkout: what it declares, not a stale install's
        import tomllib
        requires = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    else:
        try:
            requires = importlib.metadata.requires("ragkit") or []
        except importlib.metadata.PackageNotFoundError:
            requires = []
    names = sorted({re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0] for r in requires
                    if "extra ==" not in r})
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def run_info(command: str, started: str, seconds: float,
             datasets: dict[str, Path], jobs: int = 1) -> dict[str, Any]:
    """The run's provenance: versions, commit, machine, backends, data set hashes, and how
    many notebooks ran at once (`jobs`: their seconds overlap when it is above 1)."""
    online = {"anthropic": "ANTHROPIC_API_KEY", "voyage": "VOYAGE_API_KEY"}
    return {"command": command, "started": started, "seconds": round(seconds, 1),
            "ragkit": ragkit.__version__, "git": _git(),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count() or 1, "jobs": jobs, "packages": _packages(),
            "backends": {name: "online" if os.environ.get(key) else "offline"
                         for name, key in online.items()},
            "datasets": {name: folder_hash(path) for name, path in sorted(datasets.items())}}


def notebook_entry(result: dict[str, Any], folder: Path) -> dict[str, Any]:
    """One executed notebook's part of the document (see `_NOTEBOOK`)."""
    title, learn = intro(result["source"])
    records = result["records"]
    return {"name": result["notebook"], "title": title, "learn": learn,
            "finding": records.get("finding"),
            "status": "failed" if result["error"] else "ok",
            "seconds": round(result["seconds"], 1), "error": result.get("failure"),
            "parameters": result["parameters"], "overridden": sorted(result["given"]),
            "datasets": sorted(result["datasets"]),
            "tables": records["tables"], "numbers": records["numbers"],
            "values": records["values"], "figures": figures(result["output"]),
            "executed": result["output"].relative_to(folder).as_posix()}


def build_results(results: list[dict[str, Any]], folder: Path, started: str,
                  seconds: float, command: str = "run", jobs: int = 1) -> dict[str, Any]:
    """The whole document for the notebooks executed into `folder`."""
    datasets = {k: v for r in results for k, v in r["datasets"].items()}
    return {"format": FORMAT, "version": VERSION,
            "run": run_info(command, started, seconds, datasets, jobs),
            "notebooks": [notebook_entry(r, folder) for r in results]}
