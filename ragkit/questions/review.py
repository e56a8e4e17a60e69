"""A domain expert's review of generated questions: a sheet out, the decisions folded back.

What it is:
- `write_golden(questions, path)` / `read_golden(path)`: the golden JSONL (one question per
  line, the shipped format), written atomically; reading checks each line's fields.
- `review_sheet(questions, path)`: the sheet to review at `path` — an existing sheet written
  for these same questions (its `<sheet>.sha256` stamp says so) is kept as the reviewer left
  it, so re-running a notebook or `ragkit questions review` after editing it never throws
  the review away; any other sheet there is replaced by `write_review`'s, after a sheet a
  reviewer edited for other questions is moved aside (`review.edited-1.csv`).
- `write_review(questions, path)`: a CSV sheet, one row per question, columns `COLUMNS`:
  id, question, answer_span (answer_span_2: a multi-chunk question's second span), source
  (document, page, section), kind, keep (prefilled `yes`), notes. UTF-8 with a byte-order
  mark: Excel reads a CSV without one in the machine's legacy code page and garbles every
  non-ASCII character (Korean, €, curly quotes); LibreOffice, Google Sheets and Python's
  `utf-8-sig` read it either way. A cell starting with `=`, `+`, `-`, `@`, a tab, a line
  break or NUL gets a leading `'`: a spreadsheet shows it as text, not a formula (OWASP's CSV
  injection advice, ASVS 1.2.10; `ragkit.sheet_cells`, every CSV ragkit writes); `accept`
  takes the `'` off.
- `accept(review_path, golden_path)`: the questions marked keep `yes`, with the expert's
  edits to question and span. Refused, one line naming the file, row (the spreadsheet's:
  the header is row 1) and field: a missing column, a keep that is not yes/no (y/n, any
  case), an id that is not in the golden file or comes twice, an empty question, a span
  emptied or edited so that it is no longer verbatim in its passage (white space aside: a
  re-wrapped span is re-anchored to the passage's own text), a span added to an
  unanswerable question. Questions of the golden file without a row are left out, with a
  warning. The sheet may be saved with `;` or tab separators (spreadsheets in some locales).
What it is not: a merge of two reviews; the last sheet decides.
"""
from __future__ import annotations

import csv
import difflib
import hashlib
import io
import itertools
import json
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragkit.atomic import check_target, write_text
from ragkit.documents import (RagkitError, RagkitWarning, parse_golden, read_jsonl, require,
                              where)
from ragkit.errors import not_a_file
from ragkit.jsonl import parse_json
from ragkit.loaders.folder import escaped
from ragkit.questions.sheets import (COLUMNS, delimiter_of, golden_missing,  # noqa: F401
                                    is_review_csv, sheet_missing, sheet_text, stamp_of)
from ragkit.questions.review_rows import kept_row
from ragkit.sheet_cells import sheet_cell, unsheet_cell

if TYPE_CHECKING:
    import pandas as pd

REQUIRED = ("id", "question", "answer_span", "keep")
_YES, _NO = {"yes", "y"}, {"no", "n"}
STAMP = "a review sheet's stamp (the sha256 of the sheet as written)"


def is_golden_file(path: Path) -> bool:
    """A JSONL file whose first non-blank lines are golden questions, or a file of white space
    only (five blank lines and then a user's notes counted as golden, and were replaced)."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip()][:5]
        return all({"question", "golden"} <= parse_json(line, path).keys() for line in lines)
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return False


def is_stamp(path: Path) -> bool:
    """A sheet's stamp as `write_review` writes it — a sha256 in hex and a newline — or an
    empty one (a crash while an older version wrote it non-atomically)."""
    try:
        return re.fullmatch(r"\s*|[0-9a-f]{64}\n?", path.read_text(encoding="ascii")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def write_golden(questions: Sequence[dict[str, Any]], path: Path | str) -> Path:
    """The questions as golden JSONL at `path`, atomically (only a golden file is replaced)."""
    text = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    return write_text(path, text, is_ours=is_golden_file, what="a golden questions file")


def read_golden(path: Path | str) -> list[dict[str, Any]]:
    """The golden JSONL's questions, each checked: id, question, golden list (each item an
    object with a doc_id), source (an object, if given)."""
    if not Path(path).is_file():
        raise golden_missing(Path(path))
    out, seen = [], set()
    for line, obj in read_jsonl(path):
        ident = str(require(obj, "id", (str, int), path, line))
        if ident in seen:
            raise RagkitError(f"{where(path, line, 'id')}: duplicate id '{ident}'")
        seen.add(ident)
        require(obj, "question", str, path, line, non_empty=True)
        parse_golden(require(obj, "golden", list, path, line), path, line)
        passages = require(obj, "source", dict, path, line, default={}).get("passages", [])
        if not (isinstance(passages, list) and all(isinstance(p, str) for p in passages)):
            raise RagkitError(f"{where(path, line, 'source.passages')}: expected a list of "
                              f"texts")  # an edited span is looked for in them
        out.append({**obj, "id": ident})
    return out


def source_text(question: dict[str, Any]) -> str:
    """`doc, p. N, Section > Sub` from a question's source (its first golden doc without),
    control characters of a document id or heading escaped (`\\x1b`): the column is read by
    people, and `cat review.csv` would obey an escape sequence."""
    source = question.get("source") or {}
    doc = source.get("doc_id") or next((g.get("doc_id") for g in question["golden"]), "")
    parts = [str(doc)]
    if source.get("page") is not None:
        parts.append(f"p. {source['page']}")
    if source.get("section"):
        parts.append(str(source["section"]))
    return escaped(", ".join(p for p in parts if p))


def _sheet(questions: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # RFC 4180, as spreadsheets write
    writer.writerow(COLUMNS)
    for q in questions:
        spans = [g.get("span", "") for g in q["golden"]] + ["", ""]
        writer.writerow([sheet_cell(str(v)) for v in (q["id"], q["question"], spans[0], spans[1],
                                                 source_text(q), q.get("kind", ""), "yes", "")])
    return "\ufeff" + buffer.getvalue()


def write_review(questions: Sequence[dict[str, Any]], path: Path | str) -> Path:
    """The review sheet for `questions` at `path` (see the module docstring), and its stamp."""
    sheet = _sheet(questions)
    path = Path(path)
    check_target(stamp_of(path), is_stamp, STAMP, folder=False)  # before the sheet is written
    written = write_text(path, sheet, is_ours=is_review_csv, what="a review sheet")
    write_text(stamp_of(written), hashlib.sha256(sheet.encode("utf-8")).hexdigest() + "\n",
               is_ours=is_stamp, what=STAMP)  # never through a link, never over a user's file
    return written


def fingerprint(questions: Sequence[dict[str, Any]]) -> str:
    """A short sha256 of a question set (ids, texts and spans, in id order): what a notebook
    records as the questions it scored, so a sweep can say when its points scored different
    ones (`ragkit.sweep.QUESTION_SET`)."""
    rows = sorted((q["id"], q["question"], [g.get("span", "") for g in q["golden"]])
                  for q in questions)
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:16]


def review_sheet(questions: Sequence[dict[str, Any]], path: Path | str) -> tuple[Path, str]:
    """(`path`, how): "kept" — the sheet already at `path`, when a reviewer changed it and it
    was written for these very questions (its stamp, `<sheet>.sha256`, is the hash of the
    sheet these questions make: a regenerated set with the same ids and sources is not the
    same) — else "written", a fresh `write_review` sheet (an untouched sheet is written again,
    the same bytes). Not a merge: a sheet a reviewer changed for other questions is not lost
    but moved aside first, to `<name>.edited-<n>.csv` with its stamp, and `how` says where
    ("written; ... moved to review.edited-1.csv")."""
    path = Path(path)
    fresh = _sheet(questions).encode("utf-8")
    check_target(stamp_of(path), is_stamp, STAMP, folder=False)  # a FIFO there hung the read
    if not (path.is_file() and is_review_csv(path)):
        return write_review(questions, path), "written"
    stamp = (stamp_of(path).read_text(encoding="ascii").strip()  # none, or empty: a sheet of
             if stamp_of(path).exists() else "") or None  # unknown questions
    now = path.read_bytes()
    if now != fresh and stamp == hashlib.sha256(fresh).hexdigest():
        return path, "kept"
    if now == fresh or stamp == hashlib.sha256(now).hexdigest():  # nobody changed it
        return write_review(questions, path), "written"
    aside = next(p for n in itertools.count(1)
                 if not (p := path.with_name(f"{path.stem}.edited-{n}{path.suffix}")).exists()
                 and not stamp_of(p).is_symlink() and not stamp_of(p).exists())
    path.replace(aside)
    if stamp is not None:
        stamp_of(path).replace(stamp_of(aside))
    what = ("a reviewer had edited there, for other questions," if stamp is not None else
            "there, which no stamp says was written for these questions,")
    return write_review(questions, path), f"written; the sheet {what} was moved to {aside.name}"


def sheet_preview(path: Path | str, n: int = 4) -> pd.DataFrame:
    """The first `n` rows of the review sheet at `path` as a notebook shows them: every cell
    on one line, its line breaks and runs of blanks one space (a span read straight from the
    CSV showed "the\\nhoney house"). Only a view: the sheet keeps the exact spans `accept`
    checks. A bad sheet is refused as `accept` refuses it, one line naming the file."""
    import pandas as pd  # deferred: pandas only for a notebook's table
    fields, rows = _rows(Path(path))
    return pd.DataFrame([[" ".join(row.get(f, "").split()) for f in fields] for row in rows[:n]],
                        columns=fields)


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.is_file():
        raise not_a_file(path)
    text = sheet_text(path)
    delimiter = delimiter_of(text.split("\n", 1)[0])
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # `write_review`'s own cells
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    fields = [f.strip() for f in reader.fieldnames or []]
    twice = sorted({f for f in fields if f in COLUMNS and fields.count(f) > 1})
    if twice:  # csv would read the last of them, silently
        raise RagkitError(f"{path}: row 1: column '{twice[0]}' appears twice; keep one")
    for name in fields:  # a misspelt column's edits were silently ignored
        close = difflib.get_close_matches(name, [c for c in COLUMNS if c not in fields], 1, 0.75)
        if name not in COLUMNS and close:
            raise RagkitError(f"{path}: row 1: column '{name}' is not one the sheet reads: is "
                              f"it a misspelling of '{close[0]}'? (its edits would be lost)")
    for name in REQUIRED:
        if name not in fields:
            raise RagkitError(f"{path}: row 1: missing column '{name}' (the header must name "
                              f"{', '.join(REQUIRED)})")
    reader.fieldnames = fields
    return fields, [{k: unsheet_cell(v or "") for k, v in row.items() if k} for row in reader]


def accept(review_path: Path | str, golden_path: Path | str) -> list[dict[str, Any]]:
    """The kept questions of a review sheet, with the expert's edits (module docstring)."""
    review_path = Path(review_path)
    if not review_path.is_file():
        raise sheet_missing(review_path, golden_path)
    golden = {q["id"]: q for q in read_golden(golden_path)}
    fields, rows = _rows(review_path)
    kept, seen = [], set()
    for number, row in enumerate(rows, start=2):
        if not any(value.strip() for value in row.values()):
            continue  # a spreadsheet's empty row (",,,,,,,"): nothing to accept or refuse
        at = f"{review_path}: row {number}"
        ident = row.get("id", "").strip()
        if ident not in golden:
            raise RagkitError(f"{at}: field 'id': unknown id '{ident}' (not in {golden_path})")
        if ident in seen:
            raise RagkitError(f"{at}: field 'id': '{ident}' has a row already")
        seen.add(ident)
        keep = row.get("keep", "").strip().lower()
        if keep not in _YES | _NO:
            raise RagkitError(f"{at}: field 'keep': expected yes or no, got "
                              f"'{row.get('keep', '')}'")
        if keep in _NO:
            continue
        kept.append(kept_row(golden[ident], row, at, "answer_span_2" in fields))
    missing = [i for i in golden if i not in seen]
    if missing:
        warnings.warn(f"{review_path}: {len(missing)} question(s) of {golden_path} have no row "
                      f"and are left out ({', '.join(missing[:5])}"
                      f"{', …' if len(missing) > 5 else ''})", RagkitWarning, stacklevel=2)
    return kept
