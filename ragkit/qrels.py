"""Relevance judgments: TREC qrels and BEIR's qrels TSV, read line by line.

What it is: `read_qrels(path)` — query id -> {document (or chunk) id: grade}, the format
recognised by the first line — `relevant(qrels)`, the ids graded above 0, and
`judged_at(path, qid, doc)`, the line of one judgment, for an error to name. What it is
not: a scorer (`ragkit.eval_runs`). `ragkit.datasets` re-exports the first two, as before.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ragkit.errors import RagkitError, not_a_file, where
from ragkit.runs import decode_id

Qrels = dict[str, dict[str, int]]  # query id -> {document (or chunk) id: grade}
_BEIR_HEADER = ("query-id", "query_id", "qid")


def _qrels_format(fields_tab: list[str], fields_ws: list[str]) -> str | None:
    """'beir' for 3 tab-separated fields, 'trec' for 4 whitespace-separated ones, else None."""
    if len(fields_tab) == 3:
        return "beir"
    if len(fields_ws) == 4:
        return "trec"
    return None


_LAYOUT = {"beir": (3, "3 tab-separated fields (query-id, corpus-id, score)"),
           "trec": (4, "4 whitespace-separated fields (qid iter docid rel)")}


def _check_fields(fields: list[str], kind: str | None, path: Path, number: int) -> None:
    if kind is None:
        raise RagkitError(f"{where(path, number)}: expected {_LAYOUT['beir'][1]} or "
                          f"{_LAYOUT['trec'][1]}, got {len(fields)}")
    count, layout = _LAYOUT[kind]
    if len(fields) != count:
        raise RagkitError(f"{where(path, number)}: expected {layout} like the first line, "
                          f"got {len(fields)}")


def _is_int(text: str) -> bool:
    """An integer as int() reads it: one optional sign, ASCII digits ("+-1", "²" are not)."""
    return re.fullmatch(r"\s*[+-]?[0-9]+\s*", text) is not None


def _lines(path: Path):
    """(number, line) of a text file, a line that is not UTF-8 one error naming it (it was a
    UnicodeDecodeError traceback)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RagkitError(f"{where(path, number)}: not UTF-8 text ({exc.reason})"
                                  ) from None


def read_qrels(path: Path | str) -> Qrels:
    """Relevance judgments from TREC qrels or a BEIR TSV, recognised by the first line.

    - TREC (trec_eval's format): `qid iter docid rel`, 4 whitespace-separated fields, `iter`
      ignored; ids are %-decoded exactly as a run's are (`ragkit.runs.unescape_id`), so
      `my%20notes#0` judges the chunk a run spells the same way (trec_eval, comparing the
      text, matches the two as well);
    - BEIR: `query-id<TAB>corpus-id<TAB>score`, with or without that header line; ids are
      taken as written (they are the corpus's own ids, spaces and `%` included).

    Ids of both are read in Unicode's NFC form (`ragkit.runs.decode_id`), so one judged
    twice in two forms is refused as judged twice.

    Every grade is kept (a grade > 0 means relevant; 0 and negative grades are judged
    non-relevant). What it is not: a scorer — callers decide what a grade means. A wrong
    field count (or a line of the other format), a non-integer grade, or a (query, document)
    pair judged twice is a `RagkitError` naming file, line and field — the second judgment
    both lines, as a run listing a document twice for a query is refused: the last grade
    silently won, and a file of two merged sets was scored as one.
    """
    qrels: Qrels = {}
    for number, kind, qid, doc, grade in _judgments(Path(path)):
        judged = qrels.setdefault(qid, {})
        if doc in judged:  # found again to name it: no line is kept per judgment
            first, field = judged_at(path, qid, doc) or (0, "")
            raise RagkitError(f"{where(path, number, field)}: '{doc}' is judged for query "
                              f"'{qid}' already (line {first}); keep one of the two lines")
        judged[doc] = grade
    return qrels


def judged_at(path: Path | str, qid: str, doc: str) -> tuple[int, str] | None:
    """(line, the field naming the document: `corpus-id` or `docid`) of the (first) judgment
    of `doc` for `qid` in `path`, or None when there is none. Read again for an error
    message, not kept by `read_qrels`: a million judgments would each hold a line number
    that no caller reads unless something is wrong."""
    for number, kind, q, d, _ in _judgments(Path(path)):
        if (q, d) == (qid, doc):
            return number, "corpus-id" if kind == "beir" else "docid"
    return None


def _judgments(path: Path) -> Iterator[tuple[int, str, str, str, int]]:
    """(line, format, query id, document id, grade) of each judgment of `path`, in file
    order (`read_qrels`)."""
    if not path.is_file():
        raise not_a_file(path)
    kind = None
    for number, raw in _lines(path):
        text = raw.rstrip("\r\n").removeprefix("\ufeff")  # a byte-order mark, if any
        if not text.strip():
            continue
        tab, ws = text.split("\t"), text.split()
        if kind is None:
            kind = _qrels_format(tab, ws)
            if kind == "beir" and tab[0] in _BEIR_HEADER and not _is_int(tab[2]):
                continue  # the header line
        fields = tab if kind == "beir" else ws
        _check_fields(fields, kind, path, number)
        if kind == "beir":  # as written, in NFC form as a run's ids are (`decode_id`)
            qid, doc, grade = (decode_id(fields[0], path, number, "query-id", False),
                               decode_id(fields[1], path, number, "corpus-id", False),
                               fields[2])
        else:  # spelled as a run spells ids (`ragkit.runs.escape_id`)
            qid, doc, grade = (decode_id(fields[0], path, number, "qid"),
                               decode_id(fields[2], path, number, "docid"), fields[3])
        if not _is_int(grade):
            name = "score" if kind == "beir" else "rel"
            raise RagkitError(f"{where(path, number, name)}: not an integer: {grade!r}")
        yield number, str(kind), qid, doc, int(grade)


def relevant(qrels: Qrels) -> dict[str, list[str]]:
    """Query id -> ids graded > 0, in file order; queries with none are left out."""
    out = {qid: [doc for doc, grade in docs.items() if grade > 0] for qid, docs in qrels.items()}
    return {qid: docs for qid, docs in out.items() if docs}
