"""`--questions` of `ragkit eval` and `tune`: the labelled questions that replace a data
set's golden/, checked against its documents.

What it is: `with_questions(data, path)` → the data set with the questions of `path`, a
golden JSONL file or a folder of them, where
- a review folder — `accepted.jsonl` beside `review.csv`, as notebook 08 and `ragkit
  questions accept --out accepted.jsonl` leave them — means its `accepted.jsonl`, the
  reviewed set, with one stderr line saying so (read whole, as any other folder is, the
  generated set beside it repeated every accepted id: "duplicate query id 'gen-001'");
- a question whose golden document `--skip-bad` left out is left out too, with one warning
  line naming the documents: it cannot be scored, and "no document 'notes/soil.md'" did not
  say that the file had been skipped.
What it is not: the reader (`ragkit.documents.load_golden`, `check_golden`), whose errors
name the file, line and field of any other bad question.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ragkit.documents import Dataset, RagkitError, check_golden, load_golden
from ragkit.loaded_folder import without_skipped

ACCEPTED, SHEET = "accepted.jsonl", "review.csv"


def with_questions(data: Dataset, path: Path) -> Dataset:
    """The data set's documents with the labelled questions of `path` (see the module
    docstring), every span checked against the documents."""
    path = _golden_file(path)
    golden = load_golden(path)
    if not golden:  # it said "DATASET: no queries … give labelled questions with --questions"
        raise RagkitError(f"{path}: no questions" + (
            " (no *.jsonl file in this folder)" if path.is_dir()
            and not any(path.glob("*.jsonl")) else ""))
    golden = without_skipped(golden, data.documents, path)
    return Dataset(data.name, data.documents, check_golden(golden, data.documents, path),
                   data.chunks)


def _golden_file(path: Path) -> Path:
    """`path`, or the accepted set of a review folder (see the module docstring)."""
    accepted = path / ACCEPTED
    if not (path.is_dir() and accepted.is_file() and (path / SHEET).is_file()):
        return path
    others = sorted(p.name for p in path.glob("*.jsonl") if p.name != ACCEPTED)
    if others:
        print(f"ragkit: {path}: a review folder; scoring {ACCEPTED}, the reviewed questions "
              f"(not {', '.join(others)})", file=sys.stderr)
    return accepted
