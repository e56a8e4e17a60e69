"""`--questions` of `ragkit eval` and `tune`: the labelled questions that replace a data
set's golden/, checked against its documents; and a review folder as the command line meets
it.

What it is: `with_questions(data, path)` → the data set with the questions of `path`, a
golden JSONL file or a folder of them, where
- a review folder — `accepted.jsonl` beside its review sheet (`review.csv`, or the sheet
  saved under another name: any CSV with the sheet's header), as notebook 08 and `ragkit
  questions accept --out accepted.jsonl` leave them — means its `accepted.jsonl`, the
  reviewed set, with one stderr line saying so (read whole, as any other folder is, the
  generated set beside it repeated every accepted id: "duplicate query id 'gen-001'");
- a folder with `accepted.jsonl`, no review sheet and another golden file repeating its ids
  (a review folder whose sheet was deleted) is refused in one line naming the folder, what
  is missing and the file to give; it stopped at "duplicate query id 'gen-001'";
- a question whose golden document `--skip-bad` left out is left out too, with one warning
  line naming the documents: it cannot be scored, and "no document 'notes/soil.md'" did not
  say that the file had been skipped.
`warn_unsplit(data, name)`: one warning line when scoring split `name` leaves out questions
that have no split (`"split": null`, or none given): the count shrank, unsaid.
`sheet_missing(path, golden)` (from `ragkit.questions.sheets`, as `accept` gives it): the
one line for a review sheet that is not a file, naming the review sheets where it looked.
What it is not: the reader (`ragkit.documents.load_golden`, `check_golden`), whose errors
name the file, line and field of any other bad question.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

from ragkit.documents import Dataset, RagkitError, RagkitWarning, check_golden, load_golden
from ragkit.errors import not_a_file
from ragkit.jsonl import jsonl_in
from ragkit.loaded_folder import without_skipped
from ragkit.questions.sheets import SHEET, sheets_in

ACCEPTED = "accepted.jsonl"


def check_questions(path: Path | None) -> None:
    """Refuse a `--questions` path that is not there, before the documents load (it was
    said after a folder of 134 files had loaded, ten seconds in)."""
    if path is not None and not path.exists():
        raise not_a_file(path)


def with_questions(data: Dataset, path: Path) -> Dataset:
    """The data set's documents with the labelled questions of `path` (see the module
    docstring), every span checked against the documents."""
    path = _golden_file(path)
    golden = load_golden(path)
    if not golden:  # it said "DATASET: no queries … give labelled questions with --questions"
        raise RagkitError(f"{path}: no questions" + (
            " (no *.jsonl file in this folder)" if path.is_dir()
            and not jsonl_in(path) else ""))
    golden = without_skipped(golden, data.documents, path)
    return Dataset(data.name, data.documents, check_golden(golden, data.documents, path),
                   data.chunks)


def warn_unsplit(data: Dataset, name: str | None) -> None:
    """Warn, naming the first one's file, line and field, when split `name` (None: every
    question) leaves out questions that name no split — `"split": null` or no `split` —
    which `eval --questions` dropped without a word while their neighbours were scored."""
    unsplit = [q for q in data.queries if not q.split] if name is not None else []
    if not unsplit or len(unsplit) == len(data.queries):  # none left out, or no splits at all
        return
    more = f" (and {len(unsplit) - 1} more without a split)" if len(unsplit) > 1 else ""
    warnings.warn(f"{unsplit[0].origin or data.name}: field 'split': null or missing, so "
                  f"split '{name}' leaves this question out{more}; give each question a "
                  f"split, or score every one with --split all", RagkitWarning, stacklevel=2)


def _golden_file(path: Path) -> Path:
    """`path`, or the accepted set of a review folder (see the module docstring)."""
    accepted = path / ACCEPTED
    if not (path.is_dir() and accepted.is_file()):
        return path
    others = [p for p in jsonl_in(path) if p.name != ACCEPTED]
    if not ((path / SHEET).is_file() or sheets_in(path)):
        _sheetless(path, accepted, others)
        return path
    if others:
        print(f"ragkit: {path}: a review folder; scoring {ACCEPTED}, the reviewed questions "
              f"(not {', '.join(p.name for p in others)})", file=sys.stderr)
    return accepted


def _sheetless(path: Path, accepted: Path, others: list[Path]) -> None:
    """Refuse a folder whose golden files repeat an id of its `accepted.jsonl` while no
    review sheet says it is a review folder (module docstring); else return."""
    ids = {query.id for query in load_golden(accepted)}
    for other in others:
        twin = next((query.id for query in load_golden(other) if query.id in ids), None)
        if twin is not None:
            raise RagkitError(
                f"{path}: {ACCEPTED} and {other.name} both hold question '{twin}', and no "
                f"review sheet is beside them to say {ACCEPTED} is the reviewed set ({SHEET} "
                f"deleted?); give --questions {accepted}")
