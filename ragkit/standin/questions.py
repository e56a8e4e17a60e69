"""Stand-in rule: the golden-set generator's three requests → replies by a fixed rule.

Recognises a user turn that starts with a `[ragkit questions: NAME v1]` header
(`ragkit.questions.prompts`). Never a model's question: a template filled from the passage's
own words, so the generator's whole path (write, round trip, closed book, filters, report,
review) runs offline and gives the same set on every machine.

- write: the passage's *key sentence* is its quotable sentence (`ragkit.support.sentences`,
  no Markdown heading, at most 300 characters) with the most distinct content terms, at
  least `MIN_TERMS` (ties: the earlier); without one the reply has an empty question, which
  the generator drops as malformed. Its *topic* is its first three distinct content terms
  (`ragkit.lexical.auto` tokens of two characters or more, minus question words, in
  order). The answer span is the whole key sentence, verbatim. The question, by kind:
  - lexical: "What does the text state about A, B and C?"
  - paraphrase: "Which statement concerns C, B and A?" (the topic reversed: the stand-in
    cannot paraphrase, it only reorders);
  - contextual: "In TITLE, what is stated about A, B and C?" (the title from `<title>`);
  - multi-chunk: "What is stated about A and B, and about D and E?", A B from the first
    passage's key sentence, D E from the second's; two spans (no title: its words would
    compete with the topic's in the round trip);
  - unanswerable: "In TITLE, what is stated about ZX-HHHH?", HHHH the first four hex digits
    of the passage's sha256, upper case — a code no real corpus is expected to hold; no span.
- answer (the round trip): if the question holds a code (`CODE`, e.g. ZX-1A2B) the passages
  lack, an empty span; else the quotable sentence of the passages holding the most of the
  question's content terms (`ragkit.support.question_terms`; ties: the earlier), if it
  holds at least `ANSWER_TERMS` of them (all, for a question with fewer), else an empty
  span. A count, not a share: a contextual question also names its document's title,
  whose words its passage does not hold.
- closed-book: always `UNKNOWN` (the stand-in knows nothing beyond the request), so offline
  only the lexical give-away rule can drop a question as answerable from itself.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ragkit.lexical import auto
from ragkit.questions.prompts import ANSWER_HEADER, CLOSED_BOOK_HEADER, UNKNOWN, WRITE_HEADER
from ragkit.standin.base import Reply, user_text
from ragkit.support import question_terms, quotable, sentences
from ragkit.text_stats import QUESTION_WORDS, joined

MIN_TERMS = 5
ANSWER_TERMS = 2
CODE = re.compile(r"\b[A-Z]{2,}-[0-9A-Z]{3,}\b")
_PASSAGE = re.compile(r'<passage n="\d+">\n(.*?)\n</passage>', re.S)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_KIND = re.compile(r"^Kind of question: ([\w-]+)\.", re.M)
_QUESTION = re.compile(r"<question>(.*?)</question>", re.S)


def _candidates(passage: str) -> list[str]:
    return [s for s in sentences(passage) if quotable(s) and len(s) <= 300]


def key_sentence(passage: str) -> str | None:
    """The passage's quotable sentence with the most distinct content terms (≥ MIN_TERMS)."""
    best, most = None, MIN_TERMS - 1
    for sentence in _candidates(passage):
        count = len(question_terms(sentence))
        if count > most:
            best, most = sentence, count
    return best


def topic(sentence: str, count: int = 3) -> list[str]:
    """The sentence's first `count` distinct content terms, in order."""
    out: list[str] = []
    for term in auto(sentence):
        if len(term) > 1 and term not in QUESTION_WORDS and term not in out:
            out.append(term)
    return out[:count]


def write(kind: str, title: str, passages: list[str]) -> dict[str, Any]:
    """The stand-in's written question (see the module docstring)."""
    empty = {"question": "", "answer_span": "", "second_span": "", "answer": "", "kind": kind}
    if kind == "unanswerable":
        code = "ZX-" + hashlib.sha256(passages[0].encode()).hexdigest()[:4].upper()
        return {**empty, "question": f"In {title}, what is stated about {code}?"}
    keys = [key_sentence(p) for p in passages[:2 if kind == "multi-chunk" else 1]]
    if not all(keys) or not all(topic(key) for key in keys):
        return empty  # no sentence, or only one-letter words (a PDF's vertical text)
    first = topic(keys[0])
    if kind == "multi-chunk":
        question = (f"What is stated about {joined(first[:2])}, and about "
                    f"{joined(topic(keys[1])[:2])}?")
    elif kind == "paraphrase":
        question = f"Which statement concerns {joined(first[::-1])}?"
    elif kind == "contextual":
        question = f"In {title}, what is stated about {joined(first)}?"
    else:
        question = f"What does the text state about {joined(first)}?"
    return {**empty, "question": question, "answer_span": keys[0],
            "second_span": keys[1] if len(keys) > 1 else "", "answer": keys[0]}


def answer(question: str, passages: list[str]) -> str:
    """The stand-in's round-trip quote, or "" (see the module docstring)."""
    text = "\n".join(passages)
    if any(code not in text for code in CODE.findall(question)):
        return ""
    asked = question_terms(question)
    if not asked:
        return ""
    best, most = "", min(ANSWER_TERMS, len(asked)) - 1
    for passage in passages:
        for sentence in _candidates(passage):
            found = len(asked & question_terms(sentence))
            if found > most:
                best, most = sentence, found
    return best


def rule(request: dict[str, Any]) -> Reply | None:
    """A generator request → its reply; anything else → None."""
    text = user_text(request)
    at = text.find(WRITE_HEADER)  # after the document block
    if at >= 0 and not text.startswith((ANSWER_HEADER, CLOSED_BOOK_HEADER)):
        prompt = text[at:]
        kind, title = _KIND.search(prompt), _TITLE.search(prompt)
        passages = _PASSAGE.findall(prompt)
        if kind and passages:
            reply = write(kind.group(1), title.group(1) if title else "the document", passages)
            return Reply.text(json.dumps(reply, ensure_ascii=False))
    if text.startswith(ANSWER_HEADER):
        question = _QUESTION.search(text)
        quote = answer(question.group(1) if question else "", _PASSAGE.findall(text))
        return Reply.text(json.dumps({"answer_span": quote}, ensure_ascii=False))
    if text.startswith(CLOSED_BOOK_HEADER):
        return Reply.text(UNKNOWN)
    return None
