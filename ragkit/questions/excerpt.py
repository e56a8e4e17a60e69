"""The document text each question's write request sends: the whole document, or — when it
is longer than the model's context window leaves room for — the part of it around the
question's passage(s).

What it is: `excerpts(items, chunks, model, llm, log)` → one text per item. The room is
the model's context window less the reply (`prompts.WRITE_TOKENS`), two of the document's
longest chunks (a multi-chunk question's passages) and `FRAME` (instruction, title, kind
guide). A document whose estimated tokens (one per 4 UTF-8 bytes, `estimate_tokens`) pass
half the room is counted by `llm` (`messages.count_tokens`: free, cached; the estimate is
a lower bound for code and Korean); one that does not fit is cut into parts of consecutive
whole chunks of at most half the room each. A question then sends the part holding its
chunk — a multi-chunk question the two parts holding its two chunks, joined by a `[…]`
line — so every request fits, and the questions of one part share its cached document
block. Never cut silently: `log` gets one line per such document.

Why: the whole document went into every request. A thesis or a long log past the window
(claude-haiku-4-5: 200,000 tokens) made the API refuse the first request ("prompt is too
long") and `ragkit questions generate` stop, and its projected cost counted tokens no
request can send (a 1.6 MB text file: 20.7 million input tokens for 40 questions).

What it is not: a summary of the rest — a question about a passage in one part is written
without the others, as the claude contextualizer does (`ragkit.contextualize.claude`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ragkit.cache import CacheUnusable
from ragkit.contextualize.claude import document_block
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.errors import MissingKey
from ragkit.llm import LLM
from ragkit.pricing import price
from ragkit.questions.prompts import WRITE_TOKENS
from ragkit.questions.sample import Item
from ragkit.text_stats import estimate_tokens

FRAME = 1_000  # tokens of the write prompt around the passages (WRITE_PROMPT is ~600)
GAP = "\n\n[…]\n\n"  # between the two parts a multi-chunk question sends


def excerpts(items: Sequence[Item], chunks: Sequence[Chunk], model: str, llm: LLM,
             log: Callable[[str], None] | None = None) -> list[str]:
    """The document text each item's write request sends (see the module docstring)."""
    def count(doc: Document) -> int:
        try:
            return llm.count_tokens(model=model, messages=[
                {"role": "user", "content": [document_block(doc.text)]}])
        except (CacheUnusable, MissingKey):  # damaged, read-only here, no key: their own line
            raise
        except RagkitError as exc:
            raise RagkitError(f"{doc.id}: counting its tokens: {exc}") from None
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    parts: dict[str, tuple[list[str], dict[str, int]]] = {}
    out = []
    for item in items:
        doc = item.document
        if doc.id not in parts:
            parts[doc.id] = _parts(doc, by_doc.get(doc.id, list(item.chunks)), model, count,
                                   log)
        texts, part_of = parts[doc.id]
        held = sorted({part_of[c.id] for c in item.chunks if c.id in part_of})
        out.append(GAP.join(texts[i] for i in held) if texts and held else doc.text)
    return out


def _parts(doc: Document, chunks: list[Chunk], model: str, count: Callable[[Document], int],
           log: Callable[[str], None] | None) -> tuple[list[str], dict[str, int]]:
    """([], {}) when `doc` fits whole; else its parts' texts and each chunk's part."""
    window = price(model).context_window
    longest = max((estimate_tokens(c.text) for c in chunks), default=0)
    room = window - WRITE_TOKENS - FRAME - 2 * longest
    if estimate_tokens(doc.text) <= room // 2:
        return [], {}
    tokens = count(doc)
    if tokens <= room:
        return [], {}
    per_char = tokens / max(len(doc.text), 1)
    spans: list[list[Chunk]] = []
    for chunk in chunks:
        if spans and _size(doc, spans[-1], chunk) * per_char <= room / 2:
            spans[-1].append(chunk)
        else:
            spans.append([chunk])
    if log is not None:
        log(f"questions: {doc.id}: {tokens:,} tokens exceed what {model}'s context window "
            f"({window:,} tokens) leaves for a document beside the reply and the passages: "
            f"each question sends the part around its passage ({len(spans)} parts of whole "
            f"consecutive chunks)")
    return ([_text(doc, members) for members in spans],
            {c.id: i for i, members in enumerate(spans) for c in members})


def _offsets(doc: Document, first: Chunk, last: Chunk) -> bool:
    """Whether the chunks' offsets point into `doc` (a data set's own chunks may not)."""
    return 0 <= first.start < last.end <= len(doc.text)


def _size(doc: Document, members: list[Chunk], chunk: Chunk) -> int:
    """The characters of `_text(doc, members + [chunk])`, without building it."""
    if _offsets(doc, members[0], chunk):
        return chunk.end - members[0].start
    return sum(len(c.text) + 1 for c in members) + len(chunk.text)


def _text(doc: Document, members: list[Chunk]) -> str:
    """The document text from the first member's start to the last one's end (the members'
    own texts, a line apart, for chunks given without offsets into it)."""
    first, last = members[0], members[-1]
    if _offsets(doc, first, last):
        return doc.text[first.start:last.end]
    return "\n".join(c.text for c in members)
