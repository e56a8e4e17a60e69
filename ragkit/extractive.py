"""The offline extractive answerer: quote the sentences of the top passages that best answer
the question, or decline when retrieval is weak. A documented program with a small fitted
linear sentence scorer, not a language model.

What it is: `extract(question, passages, embedder)` reads the assembled passages
(`ragkit.assemble`, one block per sentence or line, exactly the `search_result` blocks Claude
would get) and returns an `Extract`: up to `MAX_QUOTES` quoted units (best first, with their
search result and blocks), the retrieval `strength`, and whether (and why) it declined.
`ragkit.answer.answer(..., embedder=...)` uses it without an API key; its `Answer` has
citations and `model` `MODEL` ("offline-extractive"), never a Claude model name.

1. Units (`ragkit.extractive_units`): sentences rejoined where the blocks cut one, each
   heading also offered with the sentence under it, every line of a source file its own unit;
   a heading or the document's title alone (a PDF's cover line was quoted as an answer), a
   config file's bare key alone, a unit without a content term (")") or over
   `support.MAX_QUOTE_CHARS`, text inside an HTML comment (`support.hidden_blocks`), or a
   long sentence's clause without a question term but bare numbers is never quoted.
2. Terms: the question's and each unit's `auto` tokens minus `QUESTION_WORDS`, plural
   endings off (`s_stem`); IDF over the request's blocks, idf(t) = ln(1 + (N − n_t + 0.5) /
   (n_t + 0.5)), as the stand-in does.
3. Each unit is scored by the learned sentence scorer (`ragkit.extractive_scorer`): nine
   signals times weights fitted on dev questions. Closeness is the rank, among the request's
   units, of the index's own embedder's cosine between the question and the unit read under
   its document's title ("title\n" then the unit: a report's "Revenue grew 8 %" names its
   company only in the title), scaled from 1 (the closest) to 0; coverage the share of the
   question's IDF mass in the unit or its passage's `[Source | Section]` tag;
   the number cue 1 when the question asks for an amount, a time or a count and the unit
   holds a digit; rank 1 the most relevant passage. With `Params(learned=False)` the hand
   rule scores instead: MIX · closeness + (1 − MIX) · coverage + NUMBER_BONUS · cue +
   RANK_PRIOR / rank (the rule before). The `MAX_QUOTES` best are quoted (ties: the more
   relevant passage, then the earlier block), skipping a unit that says what a quoted one
   says (overlapping chunks or a copy repeat it, under its heading or not), overlapping a
   quoted one, or — after the first — touching the question neither by a term (its tag's too)
   nor by the number cue (a licence line beside the answer), or a data-like clause. A heading
   stays in its quote only where it holds a `=` value or a question term its sentence lacks
   (`extractive_units.heading_adds`): else the sentence is quoted and cited alone.
4. Strength of the retrieval: STRENGTH_MIX · (the question's IDF mass found anywhere in the
   passages) + (1 − STRENGTH_MIX) · (the best query–unit cosine of the units alone, no
   title: a title says what a document is about, not that a sentence of it answers; so is
   a heading over its sentence, left out, but for an FAQ's question over its answer). The
   answer is the decline when the strength is below THRESHOLD, or (DECLINE_MISSING) when a
   `distinctive` unit of the question — a quarter ("Q3 2022" = "third quarter of 2022"), a
   number or code, an acronym, a capitalised name — is in none of the passages' texts and
   tags: a question about Q3 2022 when no retrieved passage says 2022 is not answered by
   them, however close the rest of its words. `Extract.why` says which rule declined.

Calibration (`python benchmarks/bench_answers.py --calibrate`, dev only, the default stack's
top 5 reranked as `ragkit search` ranks them, e5-small): the scorer is fitted on the
answerable questions of the shipped dev split and the dev half of the held-out scikit-learn
questions (`python -m ragkit.train_extractive`); STRENGTH_MIX and THRESHOLD then minimise, on
the shipped dev split, the points missing from this project's goals, 60 % of answerable
questions quoting the span (white space normalised; a question with several spans counts the
share quoted; declines count as not quoted) and 70 % of unanswerable ones declined
(`ragkit.extractive_eval.shortfall`). The missing-unit rule was adopted after 5-fold
cross-validation on dev (`ragkit.extractive_eval.cross_validated`, printed by the benchmark), as
was leaving heading-and-sentence units out of the strength. Dev picked STRENGTH_MIX 0.0 (the
best cosine alone) and THRESHOLD 0.86 — e5-small's cosines run high, so only e5-small indexes
are answered by this program (`answers_with`); README "Cited answers" tabulates each rule tried.

What it is not: a reader. It cannot combine facts or compute, and no retrieval score separates
answerable from unanswerable questions well (best-cosine ROC AUC 0.56–0.60).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ragkit.assemble import Passage, blocks
from ragkit.config_keys import is_config_name, opens_block
from ragkit import extractive_scorer as scorer
from ragkit.extractive_decline import missing, under_threshold
from ragkit.extractive_scorer import closeness
from ragkit.extractive_units import (asked_above, heading_adds, quoted_as, readings,
                                     repeats, shown, under_heading, units)
from ragkit.file_kinds import is_code_name
from ragkit.support import question_terms as terms
from ragkit.support import (MAX_QUOTE_CHARS, clause_terms, data_like, hidden_blocks, request_idf,
                            weighted_share)

MODEL = "offline-extractive"
NAME = "the offline extractive answerer"
MAX_QUOTES = 3
# the hand rule's (`Params(learned=False)`); on the units' own cosines they were 0.5, 0.2, 0.1
MIX = 0.7
NUMBER_BONUS = 0.1
RANK_PRIOR = 0.03
STRENGTH_MIX = 0.0
THRESHOLD = 0.86
DECLINE_MISSING = True
TITLED_CLOSENESS = True
LEARNED = True
CALIBRATED_FOR = ("e5-small",)  # the registered embedders these constants were fitted with


def answers_with(embedder_name: str | None) -> bool:
    """True when an index built with the registered embedder `embedder_name` is answered by
    this program: one the constants were calibrated with (`CALIBRATED_FOR`: THRESHOLD is a
    cosine, MiniLM's run far lower), never a paid API embedder (`voyage:…`: every offline
    answer a paid call). Any other index gets the offline stand-in's rule."""
    return embedder_name in CALIBRATED_FOR

# A question asking for an amount, a duration, a count or a date (English and Korean).
_ASKS_NUMBER = re.compile(
    r"\b(?:how (?:many|much|long|often|far|old|big|large|fast|soon)|by how much|when|"
    r"what (?:is|was|were|are) the (?:rate|limit|price|fee|number|amount|maximum|minimum|"
    r"default)|which year|what percentage)\b|며칠|몇|얼마", re.I)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Params:
    """The constants of the rule, so a calibration can try others."""

    mix: float = MIX
    number_bonus: float = NUMBER_BONUS
    rank_prior: float = RANK_PRIOR
    strength_mix: float = STRENGTH_MIX
    threshold: float = THRESHOLD
    decline_missing: bool = DECLINE_MISSING
    titled_closeness: bool = TITLED_CLOSENESS  # hand rule: False ranks the unit's own cosine
    learned: bool = LEARNED  # False: the hand rule (MIX, NUMBER_BONUS, RANK_PRIOR) ranks units


@dataclass(frozen=True)
class Block:
    """One quotable block of one passage, with what its score is made of."""

    result: int  # index of the passage's search_result block in the request
    block: int  # index of the block in that search result's content
    text: str
    cosine: float
    coverage: float
    rank: int  # 1 = the most relevant passage
    has_digit: bool
    end: int = 0  # one past the unit's last block; 0: the unit is block `block` alone
    titled: bool = False  # a heading joined to the sentence under it
    # the cosine of the unit read under its document's title ("title\nunit"); None: `cosine`
    doc_cosine: float | None = None
    dump: bool = False  # a data-like clause of a long sentence: never a 2nd or 3rd quote
    clause: bool = False  # ends in a clause of a long sentence (shown without its ", ")
    body: int = 0  # a titled unit's first block under its heading; 0 otherwise
    label: str = ""  # a table row under its columns' names (`labelled_row`), as it is shown
    hidden: bool = False  # in an HTML comment (`support.hidden_blocks`): no quote, no strength

    @property
    def stop(self) -> int:
        """One past the last block the quote cites."""
        return max(self.end, self.block + 1)

    @property
    def closeness_cosine(self) -> float:
        """The cosine the unit is ranked by: `doc_cosine` when known, else `cosine`."""
        return self.cosine if self.doc_cosine is None else self.doc_cosine


@dataclass(frozen=True)
class Features:
    """Everything the rule needs about one question and its passages (no model inside)."""

    question: str
    asks_number: bool
    blocks: tuple[Block, ...]
    found: float  # the question's IDF mass found anywhere in the passages
    missing: tuple[str, ...] = ()  # the question's distinctive units no passage holds
    lengths: tuple[int, ...] = ()  # each passage's number of blocks, in request order

    def scored(self, params: Params = Params()) -> list[tuple[Block, float]]:
        """The quotable units with their scores, best first (ties: the more relevant
        passage, then the earlier block): the learned scorer's (`ragkit.extractive_scorer`)
        or, with `params.learned` False, the hand rule's. There the cosine enters as its rank
        among the request's units, 1 for the closest to 0 for the farthest: e5-small's
        cosines of one question span a few hundredths, so raw, they barely moved the sum; the
        cosine ranked is the unit's under its document's title (`Block.closeness_cosine`)."""
        if params.learned:
            scores = self.learned_scores
        else:
            near = closeness(np.array([b.closeness_cosine if params.titled_closeness
                                       else b.cosine for b in self.blocks]))
            scores = [params.mix * near[i] + (1 - params.mix) * b.coverage
                      + (params.number_bonus if self.asks_number and b.has_digit else 0.0)
                      + params.rank_prior / b.rank for i, b in enumerate(self.blocks)]
        return sorted(zip(self.blocks, scores),
                      key=lambda bs: (-bs[1], bs[0].rank, bs[0].block, bs[0].stop))

    @cached_property
    def learned_scores(self) -> list[float]:
        """The learned scorer's score of each unit, once: a decline curve asks for the same
        ranking at every threshold, and it depends on no `Params`."""
        return [float(v) for v in scorer.score(self)]

    def strength(self, params: Params = Params()) -> float:
        """How strong the retrieval is: IDF coverage of the question by all the passages
        mixed with the best query–sentence cosine. A heading joined to its sentence is left
        out: its words say what the section is about ("Rate limits"), not that a sentence
        of it answers; but not a question over its answer (an FAQ's: `asked_above`)."""
        best = max((b.cosine for b in self.blocks if not b.hidden and (
            not b.titled or asked_above(b.text))), default=0.0)
        return params.strength_mix * self.found + (1 - params.strength_mix) * best


@dataclass(frozen=True)
class Extract:
    """What `extract` returns: the quoted blocks (best first) or a decline, and why."""

    quotes: tuple[Block, ...]
    strength: float
    declined: bool
    why: str = ""  # a decline's reason, in words a user can check


def features(question: str, passages: Sequence[Passage], embedder) -> Features:
    """The question's features over `passages` (in request order: the most relevant last).
    Embeds the question and every quotable unit (a config file's line under its keys,
    `readings`) twice: alone, for the strength, and under its document's title."""
    asked, named = terms(question), clause_terms(question)  # named: no bare number
    every_block = []  # the terms of every block, for the request's IDF
    lengths = []  # each passage's number of blocks
    quotes = []  # (result, unit, terms, title terms)
    for r, passage in enumerate(passages):
        title = terms(passage.tag)
        mine_blocks = blocks(passage.text)
        lengths.append(len(mine_blocks))
        every_block += [terms(text) for text in mine_blocks]
        found = units(passage.text, is_code_name(passage.doc_id))  # code: '#' a comment
        hidden = frozenset() if is_code_name(passage.doc_id) else hidden_blocks(mine_blocks)
        config = is_config_name(passage.doc_id)
        read = readings(passage.doc_id, passage.section, mine_blocks, found, passage.head)
        for unit, reading in zip(found, read):
            mine = terms(unit.text)
            if (not unit.heading and mine and len(unit.text.strip()) <= MAX_QUOTE_CHARS
                    and not (config and opens_block(passage.doc_id, unit.text))
                    and " ".join(unit.text.split()).casefold() != passage.title.casefold()
                    and (mine & named or not unit.clause)):
                quotes.append((r, unit, mine, title, reading,
                               "" if config or reading == unit.text else reading,
                               not hidden.isdisjoint(range(unit.start, max(unit.end,
                                                                           unit.start + 1)))))
    idf = request_idf(every_block, asked)
    alone = [reading for *_, reading, _, _ in quotes]
    framed = [f"{passages[r].title}\n{reading}" for r, _, _, _, reading, _, _ in quotes]
    both = _cosines(question, alone + framed, embedder)
    cosines, doc_cosines = both[:len(alone)], both[len(alone):]
    every = (frozenset().union(*every_block, *(terms(p.tag) for p in passages))
             if every_block else frozenset())
    found = weighted_share(idf, lambda t: t in every)
    out = tuple(Block(r, u.start, u.text, float(c),
                      weighted_share(idf, lambda t, mine=mine | title: t in mine),
                      len(passages) - r, bool(_DIGIT.search(u.text)), u.end, u.titled,
                      float(d), u.clause and data_like(u.text), u.clause, u.body, label, hid)
                for (r, u, mine, title, _, label, hid), c, d in zip(quotes, cosines, doc_cosines))
    return Features(question, bool(_ASKS_NUMBER.search(question)), out, found,
                    missing(question, passages), tuple(lengths))


def _cosines(question: str, texts: list[str], embedder) -> np.ndarray:
    if not texts:
        return np.zeros(0, dtype=np.float32)
    query = embedder.embed([question], input_type="query")[0]
    return embedder.embed(texts, input_type="document") @ query


def choose(found: Features, params: Params = Params()) -> Extract:
    """The rule's decision on precomputed features: quotes (point 3 above), or the decline."""
    strength = found.strength(params)
    scored = [(b, score) for b, score in found.scored(params) if not b.hidden]
    if not scored:
        return Extract((), strength, True, "no sentence of the passages can be quoted")
    if params.decline_missing and found.missing:
        return Extract((), strength, True, "no retrieved passage mentions "
                       + ", ".join(f"'{unit}'" for unit in found.missing))
    if strength < params.threshold:  # the quote it would have led with: the user can judge
        best = scored[0][0]
        said = shown(best.label or best.text, best.clause, best.titled)
        return Extract((), strength, True, under_threshold(strength, params.threshold, said))
    quotes: list[Block] = []
    asked = terms(found.question)
    for b, _ in scored:
        touches = ((b.coverage > 0 or (found.asks_number and b.has_digit)) and not b.dump
                   and (b.has_digit or len(terms(b.text)) > 1))  # a lone "Terminal": no answer
        if quotes and not touches:
            continue
        says, before = quoted_as(b.text, b.titled), [quoted_as(q.text, q.titled) for q in quotes]
        held = [i for i, q in enumerate(quotes) if repeats(says, before[i])
                or (q.result == b.result and q.block < b.stop and b.block < q.stop)]
        b = b if not b.titled or heading_adds(b.text, asked) else replace(
            b, block=b.body, text=under_heading(b.text), titled=False, body=0)
        if not held:
            quotes.append(b)
        elif (len(held) == 1 and repeats(says, before[held[0]])
              and len(says) > len(before[held[0]])):  # the whole sentence, for its tail
            quotes[held[0]] = b
        if len(quotes) == MAX_QUOTES:
            break
    return Extract(tuple(quotes), strength, False)


def extract(question: str, passages: Sequence[Passage], embedder,
            params: Params = Params()) -> Extract:
    """Quote the blocks of `passages` that best answer `question`, or decline."""
    return choose(features(question, passages, embedder), params)
