"""Stand-in rule: the golden-set generator's three requests → replies by a fixed rule.

Recognises a user turn that starts with a `[ragkit questions: NAME v1]` header
(`ragkit.questions.prompts`). Never a model's question: a template filled from the passage's
own words, so the generator's whole path (write, round trip, closed book, filters, report,
review) runs offline and gives the same set on every machine.

- write: the passage's *key sentence* is its quotable sentence with the most distinct
  content terms, at least `MIN_TERMS` (ties: the earlier); without one the reply has an
  empty question, which the generator counts as `no question written` (it was counted as a
  `malformed reply`, read as the writer failing). A sentence is a unit the offline
  answerer quotes (`ragkit.extractive_units.units`: no Markdown heading, no clause of an
  overlong sentence, at most 300 characters; every line one when the `<title>`, a source
  file's id, ends in a `ragkit.file_kinds.CODE_SUFFIXES` suffix, as the answerer cuts a
  source file's passage), so a hard-wrapped sentence is one sentence, line break kept: a
  cut at every line break worded the question from a fragment ("What does the text state
  about acidic, field and apply?") while the golden span, widened by
  `ragkit.questions.filters.whole_units`, was the whole sentence. Its *topic* is its
  first three distinct content terms (`ragkit.lexical.auto` tokens of two characters or
  more, minus question words, in order). The answer span is the whole key sentence,
  verbatim. The question, by kind:
  - lexical: "What does the text state about A, B and C?"
  - paraphrase: "Which statement concerns C, B and A?" (the topic reversed: the stand-in
    cannot paraphrase, it only reorders);
  - contextual: "In TITLE, what is stated about A, B and C?" (the title from `<title>`);
  - multi-chunk: "What is stated about A and B, and about D and E?", A B from the first
    passage's key sentence, D E from the second's; two spans (no title: its words would
    compete with the topic's in the round trip);
  - unanswerable: "In TITLE, what is stated about ZX-HHHH?", HHHH the first four hex digits
    of the passage's sha256, upper case — a code no real corpus is expected to hold; no span.
  A Korean key sentence (`ragkit.text_stats.reads_korean`: more of its words hold Hangul
  than hold Latin letters alone, the rule the generator's `lang` label uses; for
  unanswerable, the passage) gets the same kinds in Korean, the list joined by 와/과 as the
  final sound of the word before it asks (`joined_ko`):
  "본문에는 A, B와 C에 관해 무엇이 적혀 있나요?" (lexical),
  "C, B와 A에 관한 내용은 무엇인가요?" (paraphrase),
  "TITLE에는 A, B와 C에 관해 무엇이 적혀 있나요?" (contextual),
  "A와 B, 그리고 D와 E에 관해 각각 무엇이 적혀 있나요?" (multi-chunk),
  "TITLE에는 ZX-HHHH에 관해 무엇이 적혀 있나요?" (unanswerable).
  An English template around Korean words ("What does the text state about 카드, 결제 and
  카드사?") read as no user would ask.
- answer (the round trip): if the question holds a code (`CODE`, e.g. ZX-1A2B) the passages
  lack, an empty span; else the quotable sentence of the passages holding the most of the
  question's content terms (`ragkit.support.question_terms`; the writer's sentences, then
  the lines as a source file's, since the request names no document; ties: the earlier),
  if it holds at least `ANSWER_TERMS` of them (all, for a question with fewer), else an
  empty span. A count, not a share: a contextual question also names its document's
  title, whose words its passage does not hold.
- closed-book: always `UNKNOWN` (the stand-in knows nothing beyond the request), so offline
  only the lexical give-away rule can drop a question as answerable from itself.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from ragkit.extractive_units import units
from ragkit.file_kinds import is_code_name
from ragkit.lexical import auto
from ragkit.questions.prompts import ANSWER_HEADER, CLOSED_BOOK_HEADER, UNKNOWN, WRITE_HEADER
from ragkit.standin.base import Reply, user_text
from ragkit.support import question_terms, quotable
from ragkit.text_stats import QUESTION_WORDS, joined, reads_korean

MIN_TERMS = 5
ANSWER_TERMS = 2
# no `\b` after it: a Korean particle there is a word character too ("ZX-43A1에")
CODE = re.compile(r"\b[A-Z]{2,}-[0-9A-Z]{3,}(?![0-9A-Za-z_])")
_PASSAGE = re.compile(r'<passage n="\d+">\n(.*?)\n</passage>', re.S)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_KIND = re.compile(r"^Kind of question: ([\w-]+)\.", re.M)
_QUESTION = re.compile(r"<question>(.*?)</question>", re.S)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# The questions by kind, English and Korean: {topic} a joined list, {title}, {second}; an
# unanswerable question is the contextual one about its code.
TEMPLATES = {
    "en": {"lexical": "What does the text state about {topic}?",
           "paraphrase": "Which statement concerns {topic}?",
           "contextual": "In {title}, what is stated about {topic}?",
           "multi-chunk": "What is stated about {topic}, and about {second}?"},
    "ko": {"lexical": "본문에는 {topic}에 관해 무엇이 적혀 있나요?",
           "paraphrase": "{topic}에 관한 내용은 무엇인가요?",
           "contextual": "{title}에는 {topic}에 관해 무엇이 적혀 있나요?",
           "multi-chunk": "{topic}, 그리고 {second}에 관해 각각 무엇이 적혀 있나요?"}}
# A digit's Korean reading ends in a consonant (영 일 삼 육 칠 팔; 십 백 천 만 for a final 0).
_DIGIT_FINAL = {"0": True, "1": True, "2": False, "3": True, "4": False, "5": False,
                "6": True, "7": True, "8": True, "9": False}


def _candidates(passage: str, code: bool = False) -> list[str]:
    """The passage's sentences a question may be written from or answered with, stripped:
    its answerer units (`ragkit.extractive_units.units`), not a rule of the stand-in's own,
    so a wrapped line does not cut a sentence the answerer quotes whole. Not a heading
    (alone or joined to its sentence: a title is no answer) nor a clause of an overlong
    sentence (no whole sentence, and the stand-in asks about sentences)."""
    return [u.text.strip() for u in units(passage, code)
            if not (u.heading or u.titled or u.clause) and quotable(u.text)
            and len(u.text.strip()) <= 300]


def key_sentence(passage: str, code: bool = False) -> str | None:
    """The passage's quotable sentence with the most distinct content terms (≥ MIN_TERMS);
    `code`: a source file's passage, every line a sentence, as the answerer cuts it."""
    best, most = None, MIN_TERMS - 1
    for sentence in _candidates(passage, code):
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


def _final_consonant(word: str) -> bool | None:
    """Whether `word` ends in a consonant sound as Korean reads it: its last Hangul
    syllable's final consonant (받침), a digit's reading; None for anything else (a Latin
    letter, whose Korean reading no rule here knows)."""
    last = word[-1:]
    if _HANGUL.match(last):
        return (ord(last) - 0xAC00) % 28 != 0
    return _DIGIT_FINAL.get(last)


def joined_ko(words: Sequence[str]) -> str:
    """"A", "A와 B", "A, B와 C": the particle after the word before the last, 과 after a
    final consonant and 와 after a vowel (약관과 요금, 카드와 결제, 2024와 이전); "A, B 및 C"
    when that word ends in a Latin letter (API 및 요금), whose reading no rule here knows."""
    if len(words) == 1:
        return words[0]
    final = _final_consonant(words[-2])
    pair = (f"{words[-2]} 및 {words[-1]}" if final is None
            else f"{words[-2]}{'과' if final else '와'} {words[-1]}")
    return ", ".join([*words[:-2], pair])


def write(kind: str, title: str, passages: list[str]) -> dict[str, Any]:
    """The stand-in's written question (see the module docstring)."""
    empty = {"question": "", "answer_span": "", "second_span": "", "answer": "", "kind": kind}
    if kind == "unanswerable":
        code = "ZX-" + hashlib.sha256(passages[0].encode()).hexdigest()[:4].upper()
        lang = "ko" if reads_korean(passages[0]) else "en"
        return {**empty, "question": TEMPLATES[lang]["contextual"].format(title=title,
                                                                          topic=code)}
    source = is_code_name(title)  # a source file's id
    keys = [key_sentence(p, source) for p in passages[:2 if kind == "multi-chunk" else 1]]
    if not all(keys) or not all(topic(key) for key in keys):
        return empty  # no sentence, or only one-letter words (a PDF's vertical text)
    lang = "ko" if reads_korean(str(keys[0])) else "en"  # the language of the words asked about
    join = joined_ko if lang == "ko" else joined
    first = topic(keys[0])
    words = (first[:2] if kind == "multi-chunk" else first[::-1] if kind == "paraphrase"
             else first)
    second = join(topic(keys[1])[:2]) if kind == "multi-chunk" else ""
    template = TEMPLATES[lang].get(kind, TEMPLATES[lang]["lexical"])
    question = template.format(topic=join(words), title=title, second=second)
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
        # no title here to tell a source file by: its sentences, then its lines as code's
        for sentence in _candidates(passage) + _candidates(passage, code=True):
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
