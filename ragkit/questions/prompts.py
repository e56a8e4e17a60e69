"""The three requests a generated golden set is made of: write, answer back, closed book.

What it is: the prompts as module constants and the Messages API bodies built from them.
- `WRITE_PROMPT` asks for one test question of a given kind about one passage (two for
  `multi-chunk`) of a document, with the exact answer span copied from the passage, as one
  JSON object `{"question", "answer_span", "second_span", "answer", "kind"}`. The whole
  document goes first in its own block with `cache_control` (Anthropic's Contextual
  Retrieval recipe, `ragkit.contextualize.claude.document_block`), so a document's later
  questions read it from the prompt cache instead of paying for it again.
- `ANSWER_PROMPT` (the round trip) gives the passage(s) alone — no document — and the
  question, and asks for the shortest exact text that answers it, or an empty span:
  `{"answer_span"}`. A question its own passage cannot answer is no test of retrieval.
- `CLOSED_BOOK_PROMPT` gives the question alone and asks for an answer from general
  knowledge, or `UNKNOWN`: a question answered without any document tests nothing.
Each prompt opens with a `[ragkit questions: NAME vN]` header (the version is part of every
request, so of the paid-call cache key: a changed prompt is a new call). The offline
stand-in recognises the requests by that header (`ragkit.standin.questions`).

What it is not: the filters that judge the replies (`ragkit.questions.filters`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragkit.contextualize.claude import document_block
from ragkit.questions.defaults import KINDS, UNKNOWN  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from anthropic.types import Message

WRITE_HEADER = "[ragkit questions: write v1]"
ANSWER_HEADER = "[ragkit questions: answer v1]"
CLOSED_BOOK_HEADER = "[ragkit questions: closed-book v1]"

KIND_GUIDES = {
    "lexical": "Use the passage's own distinctive terms (names, codes, numbers) in the "
               "question, as a user who knows the vocabulary would.",
    "paraphrase": "Avoid the passage's distinctive words: use synonyms or describe a "
                  "situation, so that only a reader who understands the passage finds it.",
    "contextual": "The passage does not name its document. The question must name what only "
                  "the document says (its title, company, product, period), so that the "
                  "passage's words alone do not single it out.",
    "multi-chunk": "The question needs both passages: answer_span is copied from passage 1 "
                   "and second_span from passage 2.",
    "unanswerable": "Write a plausible question a user of this document might ask that "
                    "neither the passage nor the document answers (a period, product, figure "
                    "or code it does not have). answer_span and second_span are empty.",
}

WRITE_PROMPT = WRITE_HEADER + """
You are writing one test question for a search system over a collection of documents. The \
whole document is above; the passage(s) below are from it.

<title>{title}</title>
{passages}

Kind of question: {kind}. {guide}

Rules:
- Copy the shortest exact text of the passage that answers the question as answer_span, \
character for character: at most 300 characters, no ellipsis, no change to spacing or \
punctuation. second_span is empty unless the kind is multi-chunk.
- Ask the way a user of this collection would, in the passage's language, without quoting \
the answer in the question.
- The question must make sense on its own, to someone who has not seen the passage.

Reply with one JSON object and nothing else:
{"question": "...", "answer_span": "...", "second_span": "", "answer": "a one-sentence \
reference answer", "kind": "{kind}"}
"""

ANSWER_PROMPT = ANSWER_HEADER + """
Answer the question from the passage(s) below alone.

{passages}

<question>{question}</question>

If the passage(s) answer it, copy the shortest exact text that does as answer_span; if they \
do not, answer_span is empty. Reply with one JSON object and nothing else: \
{"answer_span": "..."}
"""

CLOSED_BOOK_PROMPT = CLOSED_BOOK_HEADER + """
Answer this question from general knowledge only, in at most one sentence. If it needs a \
particular document you have not seen, reply exactly UNKNOWN.

<question>{question}</question>
"""

WRITE_TOKENS, ANSWER_TOKENS, CLOSED_BOOK_TOKENS = 600, 400, 100  # max_tokens of each call


def passages_text(passages: Sequence[str]) -> str:
    """The passages as numbered `<passage n="i">` blocks, one per line group."""
    return "\n".join(f'<passage n="{i}">\n{text}\n</passage>'
                     for i, text in enumerate(passages, start=1))


def _fill(template: str, **values: str) -> str:
    """`template` with `{name}` replaced (not str.format: the JSON examples keep braces)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def write_request(model: str, document: str, title: str, passages: Sequence[str],
                  kind: str) -> dict[str, Any]:
    """The body asking for one question of `kind` about `passages` of `document`."""
    prompt = _fill(WRITE_PROMPT, title=title, passages=passages_text(passages), kind=kind,
                   guide=KIND_GUIDES[kind])
    return {"model": model, "max_tokens": WRITE_TOKENS, "temperature": 0.0, "messages": [
        {"role": "user", "content": [document_block(document),
                                     {"type": "text", "text": prompt}]}]}


def answer_request(model: str, passages: Sequence[str], question: str) -> dict[str, Any]:
    """The round trip: the question against its passage(s) alone."""
    prompt = _fill(ANSWER_PROMPT, passages=passages_text(passages), question=question)
    return {"model": model, "max_tokens": ANSWER_TOKENS, "temperature": 0.0,
            "messages": [{"role": "user", "content": prompt}]}


def closed_book_request(model: str, question: str) -> dict[str, Any]:
    """The question with no document at all."""
    return {"model": model, "max_tokens": CLOSED_BOOK_TOKENS, "temperature": 0.0,
            "messages": [{"role": "user", "content": _fill(CLOSED_BOOK_PROMPT,
                                                          question=question)}]}


def reply_text(message: Message) -> str:
    """The reply's text blocks, joined and stripped."""
    return "".join(b.text for b in message.content if getattr(b, "type", "") == "text").strip()


_OBJECT = re.compile(r"\{.*\}", re.S)


def reply_json(message: Message) -> dict[str, Any] | None:
    """The JSON object of a reply (also inside a Markdown code fence or after a preamble);
    None when there is none."""
    found = _OBJECT.search(reply_text(message))
    if not found:
        return None
    try:
        value = json.loads(found.group(0))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    return value if isinstance(value, dict) else None
