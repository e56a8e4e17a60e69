"""The filters that make a generated question trustworthy, each a rule stated here.

What it is:
- `anchor(span, passage)`: the span as it stands in the passage — verbatim, or else the one
  place whose words match it with different white space (a model often re-wraps a line);
  None when it is not there. A span that is not in its passage cannot be scored. It lives
  in `ragkit.questions.spans`, which the review shares without loading the tokenizers.
- `whole_units(span, passage, code)`: a span widened to the sentences the offline answerer
  quotes (`ragkit.extractive_units`), where it starts or ends at a line break those join:
  a writer that cuts at every line break made "acidic field; apply about 2 tonnes…" of a
  hard-wrapped "Agricultural lime raises the pH of an / acidic field; …", a golden span
  starting mid-sentence that no quote of the answerer matches. Not a filter: nothing is
  dropped, and a span starting or ending mid-line (a short phrase) is kept as written.
- `found_elsewhere(spans, doc_id, texts)`: a span also occurs in another document, white
  space aside (boilerplate: the same sentence in every quarterly report). Only the question's
  own document is labelled, so a retriever that finds the twin would be marked wrong; a
  contextual question names its document, so the caller asks only about the documents of
  the same title (a copy of the file).
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
from collections.abc import Mapping, Sequence

from ragkit.assemble import blocks
from ragkit.extractive_units import units
from ragkit.questions.defaults import DUP_THRESHOLD, UNKNOWN
from ragkit.questions.spans import anchor  # noqa: F401 (one of the filters)
from ragkit.support import question_terms

ROUND_TRIP_COVER = 0.5
GIVE_AWAY_SHARE = 0.8
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def whole_units(span: str, passage: str, code: bool = False) -> str:
    """`span`, verbatim in `passage`, widened to whole answerer units where it starts or ends
    inside one at a block boundary (see the module docstring); else `span` unchanged."""
    at = passage.find(span)
    if at < 0 or not span:
        return span
    end, bounds = at + len(span), [0]
    for block in blocks(passage):
        bounds.append(bounds[-1] + len(block))
    for unit in units(passage, code):
        if unit.heading or unit.titled:
            continue
        lo, hi, inner = bounds[unit.start], bounds[unit.end], bounds[unit.start + 1:unit.end]
        if lo < at < hi and any(b <= at and not passage[b:at].strip() for b in inner):
            at = lo  # starts where a wrapped line of the unit does
        if lo < end < hi and any(b >= end and not passage[end:b].strip() for b in inner):
            end = hi  # ends where a wrapped line of the unit does
    return passage[at:end].strip()


def flat(text: str) -> str:
    """`text` with each run of white space one space: how `found_elsewhere` compares."""
    return _SPACE.sub(" ", text).strip()


def found_elsewhere(spans: Sequence[str], doc_id: str, texts: Mapping[str, str]) -> bool:
    """True when some span occurs in a document other than `doc_id`, white space aside:
    `texts` maps each document's id to its text as `flat` writes it (once per run, not per
    question). A twin saved in another format wraps its lines elsewhere (`notes/x.md` and
    `web/x.html`): compared verbatim it was missed, and the retriever that found it first
    was scored as missing the answer."""
    wanted = [flat(span) for span in spans]
    return any(span and span in text for other, text in texts.items() if other != doc_id
               for span in wanted)


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
