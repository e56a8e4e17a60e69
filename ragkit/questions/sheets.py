"""Where a review sheet is, and the one line for a sheet or golden file that is not a file.

What it is: `COLUMNS` (the sheet's header) and `is_review_csv(path)`; `sheets_in(folder)`,
the review sheets in a folder; `sheet_missing(path, golden)`, the error for a review sheet
that is not a file — a review folder given for its sheet, a sheet renamed or deleted —
naming the sheets where it looked, or the command that writes one; `golden_missing(path)`,
the error for a golden set that is not a file, saying it is the JSONL the sheet was written
from. Both `accept` (from Python) and `ragkit questions accept` give them: from Python it
said only "review: a folder, not a file", nothing of the sheet inside it.
`sheet_text(path)` reads a sheet's text, a byte that is not UTF-8 named by its row and
column (a spreadsheet saved as Latin-1 had said only "not UTF-8 text"). `stamp_of(sheet)`,
the file holding the sheet's hash as written, and `edited_sheets(folder)`, the sheets a
reviewer changed since.
What it is not: the sheet's parser or writer (`ragkit.questions.review`).
"""
from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from ragkit.errors import RagkitError, not_a_file
from ragkit.jsonl import jsonl_in

COLUMNS = ("id", "question", "answer_span", "answer_span_2", "source", "kind", "keep", "notes")
SHEET = "review.csv"  # the sheet's name in a review folder (notebook 08, the README)


def stamp_of(path: Path) -> Path:
    """The file beside a sheet holding the sha256 of the sheet as written: which questions
    it was written for, whatever the reviewer changed since."""
    return path.with_name(path.name + ".sha256")


def edited_sheets(folder: Path) -> dict[str, str]:
    """sha256 of each review sheet in `folder` that a reviewer changed since it was written
    (its stamp, `<sheet>.sha256`, no longer matches), by name; a sheet moved aside
    (`.edited-<n>`) is not read by anything and is left out. A sweep's points are keyed by
    these (`ragkit.sweep.point_key`): an edited sheet was ignored, every point reused."""
    found = {}
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        stamp = stamp_of(path)
        if ".edited-" in path.name or not stamp.is_file() or not path.is_file():
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != stamp.read_text(encoding="ascii", errors="replace").strip():
            found[path.name] = digest
    return found


def is_review_csv(path: Path) -> bool:
    """A CSV whose header row names the review sheet's `id` and two more of its `COLUMNS`
    (any of the separators `accept` reads, in any order, other columns beside them), or a file
    of white space only (a blank first line and then a thesis draft counted). Not the exact
    header: a reviewer's own column ("reviewer") or a misspelt one made the sheet "not a
    review sheet", and the notebook's advice was to delete the review (`accept` names what
    is wrong with a header instead)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    header = text.split("\n", 1)[0]
    names = {n.strip() for n in next(csv.reader([header], delimiter=delimiter_of(header)), [])}
    return ("id" in names and len(names & set(COLUMNS)) >= 3) or not text.strip()


def sheets_in(folder: Path) -> list[Path]:
    """The review sheets in `folder`: regular `*.csv` files with the sheet's header row."""
    return sorted(p for p in folder.glob("*.csv") if p.is_file() and p.stat().st_size
                  and is_review_csv(p))


def sheet_missing(path: Path, golden: Path | str) -> RagkitError:
    """Why the review sheet `path` cannot be read, when it is not a file (module docstring)."""
    if path.exists() and not path.is_dir():  # a pipe or a device
        return not_a_file(path)
    found = ", ".join(map(str, sheets_in(path if path.is_dir() else path.parent)))
    if found:
        hint = (f"its review sheet: {found}" if path.is_dir() else
                f"the review sheet beside it: {found} (renamed?)")
    else:
        hint = (f"no review sheet is {'in' if path.is_dir() else 'beside'} it; `ragkit "
                f"questions review {golden} --out {path / SHEET if path.is_dir() else path}` "
                f"writes one")
    return RagkitError(f"{not_a_file(path)}; {hint}")


def golden_missing(path: Path) -> RagkitError:
    """Why the golden set `path` cannot be read, when it is not a file: a folder names the
    JSONL files in it (`generated.jsonl` beside a sheet), one of which is likely meant."""
    found = [p.name for p in jsonl_in(path)] if path.is_dir() else []
    given = f" ({', '.join(found[:5])} in it)" if found else ""
    return RagkitError(f"{not_a_file(path)}; expected the golden questions JSONL file"
                       f"{given}, the one the review sheet was written from")


def delimiter_of(header: str) -> str:
    """The separator of a sheet's header row: a spreadsheet saves `,`, `;` or a tab."""
    return max((",", ";", "\t"), key=header.count)


def sheet_text(path: Path) -> str:
    """The text of the sheet at `path` (UTF-8, a BOM dropped); a byte that is not UTF-8 is
    one RagkitError naming its row (a CSV record, counted as `accept` counts them) and, past
    the header, its column."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:  # removed since
        raise not_a_file(path) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[:exc.start].decode("utf-8-sig", errors="replace") + "\ue000"  # the byte
        rows = list(csv.reader(io.StringIO(before, newline=""),
                               delimiter=delimiter_of(before.split("\n", 1)[0])))
        column = len(rows[-1]) - 1
        field = (f", field '{rows[0][column].strip()}'" if len(rows) > 1
                 and column < len(rows[0]) else "")
        raise RagkitError(f"{path}: row {len(rows)}{field}: not UTF-8 text ({exc.reason}); "
                          f"save the sheet as CSV UTF-8") from None
