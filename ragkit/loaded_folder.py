"""What a folder load gave beside its documents: what it left out, and why.

What it is:
- `Skipped(path, reason)`: a file (or a folder that could not be listed) that
  `load_folder(..., skip_bad=True)` left out.
- `Loaded`: the documents, a list, with `skipped`, `unread`, `linked`, `broken` and
  `outputs` (the folders ragkit wrote — an index, a results folder of `ragkit cookbook` —
  which are not read as documents).
- `ragkit_output(folder)`: what such a folder is, from its marker: an index's `index.json`,
  a results folder's `.ragkit-results` (`ragkit.notebook_runner.mark` writes it last, listing
  the report, results.json, summary.md, the executed notebooks and their records, and any
  sweep's output). Read back as documents, a report became chunks, and notebook 08 asked
  questions about its own earlier report.
- `removed_while_read(path)`: the line for a file that went away between the listing and
  its reading ("cannot read (No such file or directory)" read as a fault of the file).

What it is not: the reading (`ragkit.document_folder`), nor the table of a load
(`ragkit.folder_summary`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ragkit.documents import Document
from ragkit.index_owner import is_index
from ragkit.loaders.folder import shown

RESULTS_MARKER = ".ragkit-results"  # `ragkit.notebook_runner.MARKER`, written by run and sweep


@dataclass(frozen=True)
class Skipped:
    """A file `load_folder(..., skip_bad=True)` left out, and why (its error line)."""

    path: str  # relative to the folder
    reason: str


class Loaded(list):
    """The documents of a folder, in path order — a list, as `load_folder` always returned
    — `skipped`: the files left out under `skip_bad`, each with its reason, `unread`: the
    files of a type ragkit does not read (`.tex`, `.csv`, images), `linked`: the symbolic
    links to folders, not followed, `broken`: those to nothing or in a loop, and `outputs`:
    the folders ragkit wrote, not read (each a `Skipped` saying what it is); relative
    paths."""

    def __init__(self, documents: list[Document], skipped: list[Skipped],
                 unread: list[str] | None = None, linked: list[str] | None = None,
                 broken: list[str] | None = None, outputs: list[Skipped] | None = None
                 ) -> None:
        super().__init__(documents)
        self.skipped, self.unread = skipped, unread or []
        self.linked, self.broken, self.outputs = linked or [], broken or [], outputs or []


def ragkit_output(folder: Path) -> str | None:
    """What ragkit wrote `folder` as — "a ragkit index folder", "a ragkit results folder
    (ragkit cookbook run)" — or None for a folder ragkit did not mark as its own."""
    if is_index(folder):
        return "a ragkit index folder"
    try:
        marker = json.loads((folder / RESULTS_MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(marker, dict) or not isinstance(marker.get("files"), list):
        return None
    by = marker.get("written_by")
    known = isinstance(by, str) and by.startswith("ragkit cookbook ") and by.isprintable()
    return "a ragkit results folder" + (f" ({by[:40]})" if known else "")


def removed_while_read(path: Path) -> str | None:
    """The error line for a file (or folder) that is no longer there — it was deleted or
    moved after the folder was listed, not a fault of the file — or None while it is."""
    if os.path.lexists(path):
        return None
    return f"{shown(path)}: removed while the folder was read"
