"""TREC run files: `qid Q0 doc_id rank score tag`, one line per retrieved chunk.

The format trec_eval, ranx and ir_measures read. Runs are written through `ragkit.atomic`:
a crash never leaves a truncated run behind, and an existing file is replaced only when it
is already a TREC run (`is_trec_run`), so a mistyped `--out` cannot destroy a user's file.

- Ids: a run line is split on whitespace, so query ids, chunk ids and the tag are written
  percent-encoded: every whitespace character (`str.isspace`) and `%` becomes `%XX` per
  UTF-8 byte (`a b` → `a%20b`, `50%` → `50%25`); nothing else changes, so ordinary ids are
  written as they are. `read_trec` decodes them. Empty ids cannot be written.
- Scores are written `repr`-exact (the shortest text that reads back as the same float), so
  the order a reader rebuilds from the scores is the order ragkit ranked.
- Order: trec_eval ignores the rank column and sorts each query by score descending, then
  doc id descending as written — and it keeps scores in single precision (`float sim` in
  its `form_res_rels.c`), so scores equal to single precision are ties there (`trec_score`).
  `read_trec` sorts the same way, and that is ragkit's tie rule (see `ragkit.fusion`): a run
  read back, or scored by trec_eval / ir_measures, ranks exactly as ragkit ranked it.
"""
from __future__ import annotations

import math
import os
import re
import unicodedata
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from ragkit.atomic import write_text
from ragkit.documents import RagkitError, where
from ragkit.ranking import Ranking

_UNSAFE = re.compile(r"[\s%]")


def escape_id(ident: str) -> str:
    """An id as a run file spells it: white space, `%` and control, format (zero-width,
    bidi) and unassigned characters percent-encoded (UTF-8 bytes)."""
    # every whitespace character but " " is unprintable: most ids return here (0.3 µs, not 0.85)
    if ident.isprintable() and " " not in ident and "%" not in ident:
        return ident
    return "".join("".join(f"%{b:02X}" for b in c.encode()) if _unsafe(c) else c
                   for c in ident)


def _unsafe(char: str) -> bool:
    """White space, `%`, and what a terminal would obey or hide: control and format
    characters (an id's ESC ] 0 ; … BEL retitled the terminal that printed the run; zero-width
    and bidi marks), unassigned or private code points (Unicode categories C* but Cs: a lone
    surrogate has no UTF-8 bytes to encode, and is written as before)."""
    category = unicodedata.category(char)
    return bool(_UNSAFE.match(char)) or (category.startswith("C") and category != "Cs")


def unescape_id(field: str) -> str:
    """The id a run-file field spells (inverse of `escape_id`)."""
    return unquote(field, errors="strict") if "%" in field else field


def _fits_float32(score: float) -> bool:
    """True when `score` stays finite in single precision ("3.4028235e+38", as numpy prints
    its largest value, is a hair above it as a double, and fits)."""
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.float32(score)))


def trec_score(score: float) -> float:
    """A score as trec_eval compares it: rounded to single precision."""
    return float(np.float32(score))


def is_trec_run(path: Path | str) -> bool:
    """True for an empty file or one whose every non-blank line is `qid Q0 doc rank score tag`.

    This is what `write_trec` may overwrite; anything else (a user's notes, a JSONL file, a
    binary, a device such as /dev/null, a FIFO) is not a run. Only a regular file is opened:
    opening a FIFO would block.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with Path(path).open(encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if fields and (len(fields) != 6 or fields[1] != "Q0"):
                    return False
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _field(ident: str, what: str) -> str:
    if not ident:
        raise RagkitError(f"cannot write an empty {what} to a TREC run")
    return escape_id(ident)


def trec_lines(rankings: Mapping[str, Ranking] | Iterable[tuple[str, Ranking]],
               tag: str = "ragkit") -> Iterator[str]:
    """The run's lines, each ending in a newline: 6 fields, ids escaped, scores `repr`-exact,
    ranks from 1. `rankings` is a mapping or (query id, ranking) pairs, read as they come."""
    tag = _field(tag, "run tag")
    pairs = rankings.items() if isinstance(rankings, Mapping) else rankings
    for qid, ranking in pairs:
        query = _field(qid, "query id")
        for rank, (ident, score) in enumerate(ranking, start=1):
            yield f"{query} Q0 {_field(ident, 'chunk id')} {rank} {float(score)!r} {tag}\n"


def write_trec(path: Path | str, rankings: Mapping[str, Ranking] | Iterable[tuple[str, Ranking]],
               tag: str = "ragkit") -> Path:
    """Write {query id: [(chunk id, score), ...]} (or such pairs, e.g. made a batch of
    queries at a time) as a TREC run; lines go to disk as they come, and the file takes its
    place only once whole.

    Refuses (RagkitError) to replace an existing file that is not a TREC run.
    """
    return write_text(path, trec_lines(rankings, tag), is_ours=is_trec_run, what="a TREC run")


def _score(text: str, path: Path | str, number: int) -> float:
    try:
        score = float(text)
    except ValueError:
        score = math.nan
    if math.isnan(score):
        raise RagkitError(f"{where(path, number, 'score')}: not a number")
    if math.isfinite(score) and not _fits_float32(score):  # numpy warned "overflow"
        raise RagkitError(f"{where(path, number, 'score')}: {text} is beyond single precision "
                          f"(±3.4e38), where trec_eval compares scores")
    return score


def decode_id(field: str, path: Path | str, number: int, name: str, decode: bool = True) -> str:
    """An id field of a TREC file (run or qrels) decoded by `unescape_id` (or, `decode`
    False, as written), in Unicode's NFC form; a bad %-escape is a `RagkitError` naming file,
    line and field. NFC: a run `ragkit search` wrote carries a macOS file name's NFD id,
    qrels typed by hand the NFC one, and the two print alike ("run: 환불정책.md; qrels:
    환불정책.md"). Here, not after reading: "café" written both ways in one run became one
    id listed twice, past the check that refuses that (nDCG@10 1.631)."""
    try:
        return unicodedata.normalize("NFC", unescape_id(field) if decode else field)
    except UnicodeDecodeError:
        raise RagkitError(f"{where(path, number, name)}: bad %-escape in '{field}'") from None


def read_trec(path: Path | str, decode: bool = True) -> dict[str, Ranking]:
    """Read a TREC run: {query id: [(chunk id, score), ...]} in trec_eval's order, ids decoded
    (`decode_id`; `decode` False: as written, in NFC form).

    Each query's lines are sorted by score (to single precision) descending, then the doc id
    as written descending — trec_eval's `comp_sim_docno`; the rank column is ignored, as
    trec_eval ignores it. Refused, naming file and line: a file that is not UTF-8, a line
    without six fields, and a document listed twice for one query (trec_eval refuses it too;
    scored, each copy would earn its gain again, nDCG above 1).
    """
    rows: dict[str, list[tuple[float, str, str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    try:
        with Path(path).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                fields = line.removeprefix("\ufeff").split()  # a byte-order mark, if any
                if not fields:
                    continue
                if len(fields) != 6:
                    raise RagkitError(f"{where(path, number)}: expected 6 fields "
                                      f"(qid Q0 doc rank score tag), got {len(fields)}")
                qid = decode_id(fields[0], path, number, "qid", decode)
                doc = decode_id(fields[2], path, number, "doc_id", decode)
                first = seen.setdefault((qid, doc), number)
                if first != number:
                    raise RagkitError(f"{where(path, number, 'doc_id')}: '{doc}' is listed for "
                                      f"query '{qid}' already (line {first})")
                rows.setdefault(qid, []).append((_score(fields[4], path, number), fields[2],
                                                 doc))
    except UnicodeDecodeError as exc:
        raise RagkitError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return {qid: [(doc, score) for score, _, doc in
                  sorted(r, key=lambda row: (trec_score(row[0]), row[1]), reverse=True)]
            for qid, r in rows.items()}
