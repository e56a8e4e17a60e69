"""What a reviewer may change in one row of a review sheet, checked: `kept_row`.

What it is: `kept_row(original, row, at, second)`, the golden record of a question the
reviewer kept, with the row's edits — the question reworded; an answer span corrected (it
must still be found in its passage, `ragkit.questions.spans.anchor`, white space aside), and
the stand-in's `answer`, which is its span, corrected with it; the `kind` re-labelled among
the kinds of one span (lexical, paraphrase, contextual); notes kept as `review_notes`. Each
refusal is one line naming the sheet's row and field (`at`).

Why: an edited `kind` was silently ignored, and after a span edit the record's `answer` kept
the old span, which answer metrics grade against.

What it is not: a way to add questions (a row with an unknown id is refused by `accept`;
write a golden JSONL beside the generated one), nor to change a question's structure:
unanswerable and multi-chunk follow its golden spans.
"""
from __future__ import annotations

from typing import Any

from ragkit.errors import RagkitError
from ragkit.questions.defaults import KINDS
from ragkit.questions.spans import anchor
from ragkit.sheet_cells import sheet_cell, unsheet_cell


def _span(value: str, passage: str | None, label: str, original: str) -> str:
    if value.strip() == original.strip():
        return original
    if not value.strip():
        raise RagkitError(f"{label}: empty; a kept answerable question needs its span (or "
                          f"mark keep no)")
    if passage is None:
        return value.strip()
    found = anchor(value, passage)
    if found is None:
        raise RagkitError(f"{label}: edited span is not verbatim in the question's passage: "
                          f"{value.strip()[:80]!r}")
    return found


def kept_row(original: dict[str, Any], row: dict[str, str], at: str, second: bool) -> dict[str, Any]:
    """One kept question with the row's question and span edits checked."""
    question = " ".join(row.get("question", "").split())
    if not question:
        raise RagkitError(f"{at}: field 'question': empty")
    items = [dict(g) for g in original["golden"]]
    passages = (original.get("source") or {}).get("passages") or []
    columns = ["answer_span", "answer_span_2"] if second else ["answer_span"]
    if not items and any(row.get(c, "").strip() for c in columns):
        raise RagkitError(f"{at}: field 'answer_span': '{original['id']}' is unanswerable "
                          f"(golden []); leave its span empty")
    for column in columns[len(items):]:  # a span with no golden item to hold it: not dropped
        if items and row.get(column, "").strip():
            raise RagkitError(f"{at}: field '{column}': '{original['id']}' has "
                              f"{len(items)} golden span(s); a second span belongs to a "
                              f"question over two chunks — leave it empty, or write a new "
                              f"question for it")
    for i, (item, column) in enumerate(zip(items, columns)):
        passage = passages[i] if i < len(passages) else None
        if "span" not in item and not row.get(column, "").strip():
            continue  # a whole-document label stays one (it came back with "span": "")
        item["span"] = _span(row.get(column, ""), passage, f"{at}: field '{column}'",
                             str(item.get("span", "")))
    out = {**original, "question": question, "golden": items}
    kind = _kind(original, row, at)
    if kind != original.get("kind", ""):
        out["kind"] = kind
    spans = [str(g.get("span", "")) for g in original["golden"]]
    if original.get("answer") in spans:  # the stand-in's answer is its span: edited with it
        out["answer"] = items[spans.index(original["answer"])].get("span", original["answer"])
    if row.get("notes", "").strip():
        out["review_notes"] = row["notes"].strip()
    return out


def _kind(original: dict[str, Any], row: dict[str, str], at: str) -> str:
    """The row's `kind`: a reviewer may re-label a question among the kinds that have one
    span (an edit was silently ignored); unanswerable and multi-chunk follow its spans."""
    kind, was = row.get("kind", "").strip() or original.get("kind", ""), original.get("kind", "")
    if kind == unsheet_cell(sheet_cell(was)).strip():  # as the sheet shows it: unchanged
        return was
    fixed = ("unanswerable", "multi-chunk")  # and so is a question of 0 or 2+ spans unlabelled
    if kind not in KINDS or kind in fixed or was in fixed or len(original["golden"]) != 1:
        raise RagkitError(f"{at}: field 'kind': {kind!r} cannot replace {was!r} (one of "
                          f"{', '.join(k for k in KINDS if k not in fixed)}; unanswerable "
                          f"and multi-chunk follow the question's spans)")
    return kind
