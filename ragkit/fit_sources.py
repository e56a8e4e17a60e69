"""Which of ragkit's source files a fitted model was last refitted or checked against.

A training script's `--check` refits its model from the dev data and compares the result
with the committed file: the only way to know that a change to the code (answer units,
reranker features, chunking, an embedder's windows) left the fitted numbers as they were. It
costs what a fit costs — the e5-small windows of every dev document, about 11 minutes of two
cores when the embedding cache is cold, as on a fresh machine — too much for every test run.
So the check runs where the code changes, and what it ran against is recorded: after a refit
that reproduces the model file (or writes it), the script writes beside it
`<model>.sources.json`, the sha256 of every ragkit module the fit had imported, each read as
code (docstrings, comments and layout left out, and the `MODEL_SHA256` pins, since pinning a
new file moves no fitted number). `changed(model)` names the modules that differ now; the
test suite asserts there are none, so a change that could move the numbers fails the suite
until the check is run again.

What it is not: proof that the numbers moved — a changed module may move nothing, and the
check then says "reproduced" and records the new code. Nor does it see an installed package
change (ONNX Runtime, NumPy, scikit-learn): those are pinned by the project's package list,
and the check's tolerance covers the CPU's kernels.
"""
from __future__ import annotations

import ast
import hashlib
import json
import sys
from pathlib import Path

from ragkit.atomic import write_text
from ragkit.jsonl import read_json

ROOT = Path(__file__).resolve().parents[1]
PINS = frozenset({"MODEL_SHA256"})  # names whose value is a file's hash, not a fitted number
FORMAT = "ragkit.fit_sources"


def record_path(model: Path) -> Path:
    """`<model>.sources.json` beside the model file."""
    return model.with_name(f"{model.stem}.sources.json")


def _is_pin(node: ast.stmt) -> bool:
    """True for `MODEL_SHA256 = "..."` (annotated or not)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return False
    return any(isinstance(t, ast.Name) and t.id in PINS for t in targets)


def _code_only(tree: ast.AST) -> ast.AST:
    """`tree` without docstrings and without assignments to a pin."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        node.body = [n for n in body if not _is_pin(n)] or [ast.Pass()]
    return tree


def source_digest(path: Path) -> str:
    """sha256 of the code of one Python file, read as code: the same for a file whose only
    change is a docstring, a comment, its layout or a `MODEL_SHA256` pin."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return hashlib.sha256(ast.unparse(_code_only(tree)).encode()).hexdigest()


def imported_sources(root: Path = ROOT) -> dict[str, str]:
    """{path below `root`: digest} of every module of the `ragkit` package imported so far."""
    package = (root / "ragkit").resolve()
    found = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and file.endswith(".py") and Path(file).resolve().is_relative_to(package):
            path = Path(file).resolve()
            found[path.relative_to(root.resolve()).as_posix()] = source_digest(path)
    return dict(sorted(found.items()))


def write_record(model: Path, sources: dict[str, str]) -> Path:
    """Record that `model` was refitted or checked against `sources`; the record's path."""
    path = record_path(model)
    write_text(path, json.dumps({"format": FORMAT, "model": model.name, "sources": sources},
                                indent=2) + "\n",
               is_ours=_is_record, what="a fitted model's sources record")
    return path


def _is_record(path: Path) -> bool:
    """True for a file `write_record` wrote."""
    try:
        return read_json(path).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def changed(model: Path, root: Path = ROOT) -> list[str]:
    """The recorded modules whose code differs from what `model` was last checked against
    (a module gone is listed too); `[record path]` when there is no record to compare."""
    path = record_path(model)
    if not _is_record(path):
        return [f"{path.name} (no record: the model was never checked)"]
    recorded = read_json(path)["sources"]
    return [name for name, digest in recorded.items()
            if not (root / name).is_file() or source_digest(root / name) != digest]
