"""Self-RAG-style reflection: decide to retrieve, answer per passage, grade, keep the best.

What it is, as Self-RAG's short-form inference scores it (src: AkariAsai/self-rag
`retrieval_lm/run_short_form.py`; the agentic-RAG notes' diagram):
1. **Retrieve?** p(Retrieval); retrieve when p > `RETRIEVE_THRESHOLD` (0.2, the README's
   commands). No retrieval → one plain answer without passages.
2. One candidate answer per retrieved passage (`ragkit.answer.answer` over that passage
   alone: one call each; offline, the stand-in's extractive answerer).
3. Each candidate graded with Self-RAG's reflection labels: IsRel (`[Relevant]`,
   `[Irrelevant]`), IsSup (`[Fully supported]`, `[Partially supported]`,
   `[No support / Contradictory]`), IsUse (`[Utility:1]` … `[Utility:5]`).
4. score = w_rel·s_rel + w_sup·s_sup + w_use·s_use with the `generate` wrapper's hard-coded
   weights 1.0, 1.0, 0.5; s_rel = p(Rel) / (p(Rel) + p(Irrel)); s_sup = (p(Full) +
   0.5·p(Partial)) / Σ p(IsSup); s_use = Σ u_i·p(Utility:i) / Σ p with u = [−1, −0.5, 0,
   0.5, 1] (`score`). The best candidate wins; NaN scores rank last.

Label probabilities: Self-RAG reads them off its own token logits. `ClaudeReflector` asks
versioned judge prompts (`ragkit.answer_judge.Judge`) and uses the share of the n samples giving each
label (n = 1: the one label gets 1); a malformed reply is no vote (counted, warned), all
malformed → an empty distribution → NaN. `OfflineReflector` uses documented word-overlap
rules (below); the stand-in answers the judge prompts with the same rules' labels.

What it is not: a model trained to emit reflection tokens; no `--use_seqscore` term.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragkit.agent.crag import passage_text
from ragkit.answer import DEFAULT_MODEL, MAX_TOKENS, Answer, answer, is_decline
from ragkit.assemble import Assembly
from ragkit.documents import Chunk
from ragkit.answer_judge import Judge, Malformed, Template
from ragkit.llm import LLM
from ragkit.pricing import Usage
from ragkit.support import coverage, is_noncommittal, sentences, supported

W_REL, W_SUP, W_USE = 1.0, 1.0, 0.5
UTILITY = (-1.0, -0.5, 0.0, 0.5, 1.0)  # u for [Utility:1] … [Utility:5]
RETRIEVE_THRESHOLD = 0.2
REL = ("Relevant", "Irrelevant")
SUP = ("Fully supported", "Partially supported", "No support / Contradictory")
USE = ("1", "2", "3", "4", "5")
Dist = Mapping[str, float]  # label → probability (may be empty: undecided)
CHITCHAT = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening)|"
                      r"how are you|who are you|bye|안녕|고마워|감사합니다)\b[\s\W]*", re.I)


def _share(p: Dist, weights: Mapping[str, float]) -> float:
    total = sum(p.get(k, 0.0) for k in weights)
    if total <= 0:
        return math.nan
    return sum(w * p.get(k, 0.0) for k, w in weights.items()) / total


def s_rel(p: Dist) -> float:
    return _share(p, {"Relevant": 1.0, "Irrelevant": 0.0})


def s_sup(p: Dist) -> float:
    return _share(p, {SUP[0]: 1.0, SUP[1]: 0.5, SUP[2]: 0.0})


def s_use(p: Dist) -> float:
    return _share(p, dict(zip(USE, UTILITY)))


def score(p_rel: Dist, p_sup: Dist, p_use: Dist) -> float:
    """Self-RAG's final score of one candidate (NaN if any distribution is empty)."""
    return W_REL * s_rel(p_rel) + W_SUP * s_sup(p_sup) + W_USE * s_use(p_use)


class Reflector(Protocol):
    def retrieve(self, question: str) -> float: ...
    def isrel(self, question: str, passage: str) -> Dist: ...
    def issup(self, question: str, passage: str, answer: str) -> Dist: ...
    def isuse(self, question: str, answer: str) -> Dist: ...


# --------------------------------------------------------------------------- offline rules
def retrieve_rule(question: str) -> float:
    """p(Retrieval): 0 for chit-chat (a greeting or thanks with at most two more words),
    else 1 — a knowledge-base assistant retrieves for every real question."""
    rest = CHITCHAT.sub("", question)
    return 0.0 if CHITCHAT.match(question) and len(rest.split()) <= 2 else 1.0


def isrel_rule(question: str, passage: str) -> str:
    """Relevant iff the passage holds at least half of the question's content terms."""
    return REL[0] if supported(question, passage) else REL[1]


def issup_rule(answer_text: str, passage: str) -> str:
    """Fully supported if every sentence of the answer is supported by the passage (half
    its content terms in it, `ragkit.support`), Partially if some, else No support; a
    declined or noncommittal answer supports nothing."""
    if is_decline(answer_text) or is_noncommittal(answer_text):
        return SUP[2]
    said = sentences(re.sub(r"\s*\[\d+\]", "", answer_text))
    share = sum(supported(s, passage) for s in said) / len(said) if said else 0.0
    return SUP[0] if share == 1 else SUP[1] if share > 0 else SUP[2]


def isuse_rule(question: str, answer_text: str) -> str:
    """Utility 1 for a decline or noncommittal answer, else 1 + round(4 × the share of the
    question's content terms the answer mentions)."""
    if is_decline(answer_text) or is_noncommittal(answer_text):
        return USE[0]
    return USE[round(4 * coverage(question, answer_text))]


class OfflineReflector:
    """The rules above; IsRel is soft (p(Relevant) = the share of the question's content
    terms in the passage), IsSup and IsUse put all mass on the rule's label."""

    name = "offline rules"

    def retrieve(self, question: str) -> float:
        return retrieve_rule(question)

    def isrel(self, question: str, passage: str) -> Dist:
        c = coverage(question, passage)
        return {REL[0]: c, REL[1]: 1.0 - c}

    def issup(self, question: str, passage: str, answer_text: str) -> Dist:
        return {issup_rule(answer_text, passage): 1.0}

    def isuse(self, question: str, answer_text: str) -> Dist:
        return {isuse_rule(question, answer_text): 1.0}


# --------------------------------------------------------------------------- Claude judge
RETRIEVE = Template("selfrag_retrieve", "v1", (
    "Decide whether answering the question needs facts from the company's document "
    'collection ("yes") or can be answered without it, e.g. small talk ("no").\n'
    'Reply as {"reason": "...", "retrieve": "yes"}.'))
ISREL = Template("selfrag_isrel", "v1", (
    "Decide whether the passage is relevant to the question (it provides useful information "
    'to answer it): "Relevant" or "Irrelevant".\n'
    'Reply as {"reason": "...", "label": "Relevant"}.'))
ISSUP = Template("selfrag_issup", "v1", (
    "Decide whether everything the answer states is supported by the passage: "
    '"Fully supported", "Partially supported", or "No support / Contradictory" (also for '
    "an answer that declines).\n"
    'Reply as {"reason": "...", "label": "Fully supported"}.'))
ISUSE = Template("selfrag_isuse", "v1", (
    "Rate how useful the answer is for the question, from 1 (not at all: off topic or "
    "declined) to 5 (complete and highly informative).\n"
    'Reply as {"reason": "...", "utility": 5}.'))


def _label(field: str, allowed: Sequence[str]):
    def parse(obj: dict[str, Any]) -> str:
        value = str(obj.get(field, "")).strip()
        match = next((a for a in allowed if a.lower() == value.lower()), None)
        if match is None:
            raise Malformed(f"{field} is {obj.get(field)!r}, not one of {', '.join(allowed)}")
        return match
    return parse


class ClaudeReflector:
    """Self-RAG's four judgements as Claude judge prompts; probabilities = label shares."""

    name = "Claude judge"

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge if judge is not None else Judge()

    def _dist(self, template: Template, parse, **blocks: str) -> dict[str, float]:
        votes = [self.judge.ask(template, parse, k, **blocks) for k in range(self.judge.n)]
        valid = [v for v in votes if v is not None]
        return {v: valid.count(v) / len(valid) for v in set(valid)}

    def retrieve(self, question: str) -> float:
        p = self._dist(RETRIEVE, _label("retrieve", ("yes", "no")), question=question)
        return p.get("yes", 0.0) if p else 1.0  # undecided: retrieve

    def isrel(self, question: str, passage: str) -> Dist:
        return self._dist(ISREL, _label("label", REL), question=question, passage=passage)

    def issup(self, question: str, passage: str, answer_text: str) -> Dist:
        return self._dist(ISSUP, _label("label", SUP), question=question, passage=passage,
                          answer=answer_text)

    def isuse(self, question: str, answer_text: str) -> Dist:
        return self._dist(ISUSE, _label("utility", USE), question=question, answer=answer_text)


# --------------------------------------------------------------------------- the method
@dataclass(frozen=True)
class Candidate:
    """One passage's candidate answer, its label distributions and Self-RAG score."""

    chunk_id: str
    answer: Answer
    p_rel: Dist
    p_sup: Dist
    p_use: Dist
    score: float


@dataclass(frozen=True)
class SelfRagResult:
    question: str
    p_retrieve: float
    candidates: tuple[Candidate, ...]
    answer: Answer  # the best candidate's (or the no-retrieval answer)


NO_RETRIEVAL_SYSTEM = "Answer the user's question briefly."


def _direct(question: str, llm, model: str, max_tokens: int) -> Answer:
    """The no-retrieval branch: one plain call with the question alone."""
    message = llm.create(model=model, max_tokens=max_tokens, system=NO_RETRIEVAL_SYSTEM,
                         messages=[{"role": "user", "content": question}])
    text = "".join(b.text for b in message.content if b.type == "text")
    return Answer(question, text, (), (), Assembly((), (), 1), Usage.of(message.usage),
                  is_decline(text), message.model)


def self_rag(question: str, passages: Sequence[Chunk], reflector: Reflector, *, llm=None,
             threshold: float = RETRIEVE_THRESHOLD, model: str = DEFAULT_MODEL,
             max_tokens: int = MAX_TOKENS) -> SelfRagResult:
    """Self-RAG over the retrieved `passages` (best first); see the module docstring."""
    llm = llm or LLM()
    p = reflector.retrieve(question)
    if not p > threshold or not passages:
        return SelfRagResult(question, p, (), _direct(question, llm, model, max_tokens))
    candidates = []
    for chunk in passages:
        reply = answer(question, [(chunk.id, 1.0)], {chunk.id: chunk}, llm=llm, model=model,
                       max_tokens=max_tokens)
        text = passage_text(chunk)
        p_rel, p_sup = reflector.isrel(question, text), reflector.issup(question, text, reply.text)
        p_use = reflector.isuse(question, reply.text)
        candidates.append(Candidate(chunk.id, reply, p_rel, p_sup, p_use,
                                    score(p_rel, p_sup, p_use)))
    best = max(candidates, key=lambda c: -math.inf if math.isnan(c.score) else c.score)
    return SelfRagResult(question, p, tuple(candidates), best.answer)
