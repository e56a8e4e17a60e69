"""The filters that make a generated question trustworthy, each a rule stated here.

What it is:
- `anchor(span, passage)`: the span as it stands in the passage — verbatim, or else the one
  place whose words match it with different white space (a model often re-wraps a line);
  None when it is not there. A span that is not in its passage cannot be scored. It lives
  in `ragkit.questions.spans`, which the review shares without loading the tokenizers.
- `found_elsewhere(spans, doc_id, documents)`: a span also occurs verbatim in another
  document (boilerplate: the same sentence in every quarterly report). Only the question's
  own document is labelled, so a retriever that finds the twin would be marked wrong; a
  contextual question names its document and is exempt (the caller decides).
- `round_trip_ok(spans, answered, unanswerable)`: the round-trip answer (the question asked
  against its passage(s) alone) agrees with the span: white space and case aside, one holds
  the other, or the answer carries at least `ROUND_TRIP_COVER` of the span's content terms;
  for a multi-chunk question one of its spans is enough (one quote rarely spans two
  passages). An unanswerable question passes when the answer is empty.
- `gives_away(question, spans)`: the question alone answers it, by the lexical rule: it
  holds at least `GIVE_AWAY_SHARE` of a span's content terms (`ragkit.support.question_terms`:
  the retriever's tokenizer without question words, plurals folded). A question that states
  its own answer tests nothing.
- `closed_book_answers(reply, spans)`: the closed-book reply (no document) is not `UNKNOWN`
  and carries at least `GIVE_AWAY_SHARE` of a span's terms — the answer is general
  knowledge, so retrieval is not needed.
- `near_duplicates(questions, embedder, threshold)`: which questions repeat an earlier one:
  cosine of their embeddings (the index's local embedder, as queries) at least `threshold`;
  the first of a group is kept.

What it is not: a judge of quality. These are cheap, stated rules; a domain expert's review
(`ragkit questions review`) is the judge.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.documents import Document
from ragkit.questions.defaults import DUP_THRESHOLD, UNKNOWN
from ragkit.questions.spans import anchor  # noqa: F401 (one of the filters)
from ragkit.support import question_terms

ROUND_TRIP_COVER = 0.5
GIVE_AWAY_SHARE = 0.8
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def found_elsewhere(spans: Sequence[str], doc_id: str, documents: Sequence[Document]) -> bool:
    """True when some span occurs verbatim in a document other than `doc_id`."""
    return any(span in doc.text for doc in documents if doc.id != doc_id for span in spans)


def _agrees(span: str, answered: str) -> bool:
    a, s = _norm(answered), _norm(span)
    if not a or not s:
        return False
    if s in a or a in s:
        return True
    terms = question_terms(span)
    return bool(terms) and len(terms & question_terms(answered)) / len(terms) >= ROUND_TRIP_COVER


def round_trip_ok(spans: Sequence[str], answered: str, unanswerable: bool = False) -> bool:
    """True when the round-trip answer agrees with the question's span(s)."""
    if unanswerable:
        return not answered.strip()
    return any(_agrees(span, answered) for span in spans)


def _share(span: str, text: str) -> float:
    terms = question_terms(span)
    return len(terms & question_terms(text)) / len(terms) if terms else 0.0


def gives_away(question: str, spans: Sequence[str]) -> bool:
    """True when the question holds `GIVE_AWAY_SHARE` of some span's content terms."""
    return any(_share(span, question) >= GIVE_AWAY_SHARE for span in spans)


def closed_book_answers(reply: str, spans: Sequence[str]) -> bool:
    """True when the reply without a document still answers (see the module docstring)."""
    if not reply.strip() or reply.strip().upper().startswith(UNKNOWN):
        return False
    return any(_norm(span) in _norm(reply) or _share(span, reply) >= GIVE_AWAY_SHARE
               for span in spans)


def near_duplicates(questions: Sequence[str], embedder, threshold: float = DUP_THRESHOLD
                    ) -> list[bool]:
    """For each question, True when an earlier kept one has cosine ≥ `threshold` with it."""
    if not questions:
        return []
    vectors = embedder.embed(list(questions), input_type="query")
    kept: list[int] = []
    out = []
    for i in range(len(questions)):
        dup = any(float(vectors[i] @ vectors[j]) >= threshold for j in kept)
        out.append(dup)
        if not dup:
            kept.append(i)
    return out
