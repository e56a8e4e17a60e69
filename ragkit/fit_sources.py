"""Which of ragkit's source files a fitted model was last refitted or checked against.

A training script's `--check` refits its model from the dev data and compares the result
with the committed file: the only way to know that a change to the code (answer units,
reranker features, chunking, an embedder's windows) left the fitted numbers as they were. It
costs what a fit costs — the e5-small windows of every dev document, about 11 minutes of two
cores when the embedding cache is cold, as on a fresh machine — too much for every test run.
So the check runs where the code changes, and what it ran against is recorded: after a refit
that reproduces the model file (or writes it), the script writes beside it
`<model>.sources.json`, the sha256 of every ragkit module the fit had imported, each read as
code (docstrings, comments, blank lines and trailing spaces left out, and the `MODEL_SHA256`
pins, since pinning a new file moves no fitted number). `changed(model)` names the modules
that differ now; the test suite asserts there are none, so a change that could move the
numbers fails the suite until the check is run again.

What it is not: proof that the numbers moved — a changed module may move nothing, and the
check then says "reproduced" and records the new code. Nor does it see an installed package
change (ONNX Runtime, NumPy, scikit-learn): those are pinned by the project's package list,
and the check's tolerance covers the CPU's kernels.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import sys
import tokenize
from pathlib import Path

from ragkit.atomic import write_text
from ragkit.jsonl import has_format, read_json

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


def _is_docstring(node: ast.AST, first: ast.stmt) -> bool:
    return (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str))


def _cuts(text: str, lines: list[bytes]) -> list[tuple[int, int, int, int]]:
    """(first line, first byte, last line, end byte) of each docstring, pin and comment."""
    cuts = []
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            continue
        for stmt in body:
            if _is_pin(stmt) or (stmt is body[0] and _is_docstring(node, stmt)):
                cuts.append((stmt.lineno, stmt.col_offset, stmt.end_lineno or stmt.lineno,
                             stmt.end_col_offset or 0))  # ast's columns count UTF-8 bytes
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:  # tokenize's columns count characters
            (row, col), (_, end) = token.start, token.end
            line = lines[row - 1].decode("utf-8")
            cuts.append((row, len(line[:col].encode()), row, len(line[:end].encode())))
    return cuts


def source_digest(path: Path) -> str:
    """sha256 of the code of one Python file: its lines without docstrings, comments,
    `MODEL_SHA256` pins, trailing spaces and blank lines. Cut by the positions Python's own
    parser and tokenizer give, not by re-printing the parsed tree (`ast.unparse` writes
    f-strings differently from one Python to the next), so every Python gives one digest."""
    text = path.read_text(encoding="utf-8")
    lines = text.encode().splitlines(keepends=True)  # as the parser counts: \n, \r\n, \r
    kept = [bytearray(line) for line in lines]
    for row, col, last, end in _cuts(text, lines):
        for r in range(row, last + 1):
            lo = col if r == row else 0
            hi = end if r == last else len(kept[r - 1])
            kept[r - 1][lo:hi] = b" " * (hi - lo)  # blanked in place: later cuts keep columns
    code = [line.rstrip() for line in kept if line.strip()]
    return hashlib.sha256(b"\n".join(code)).hexdigest()


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
    return has_format(path, FORMAT)


def changed(model: Path, root: Path = ROOT) -> list[str]:
    """The recorded modules whose code differs from what `model` was last checked against
    (a module gone is listed too); `[record path]` when there is no record to compare."""
    path = record_path(model)
    if not _is_record(path):
        return [f"{path.name} (no record: the model was never checked)"]
    recorded = read_json(path)["sources"]
    return [name for name, digest in recorded.items()
            if not (root / name).is_file() or source_digest(root / name) != digest]
