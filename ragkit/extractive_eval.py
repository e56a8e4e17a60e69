"""How well the offline extractive answerer quotes and declines: scores, the decline
trade-off curve, and the calibration of its constants.

What it is:
- `extractive_cases(pipeline, queries, k)`: each question's top-k hits (default: hybrid,
  reranked by `DEFAULT_RERANK`, as `ragkit ask` and `ragkit search` rank them), assembled
  exactly as `ragkit.answer.answer` hands them over (parents
  lifted, 8K-token budget), and the answerer's `Features` over them (the embedder runs here,
  once; every later score is arithmetic);
- `quotes_span(query, extract)`: the share of the question's golden spans contained in the
  quoted text (white space normalised, as `benchmarks/bench_answers.py` measures the
  stand-in): 1 or 0 for one span; a question with several spans counts the share quoted;
  0 for a decline;
- `extractive_scores(cases, params)`: the share of answerable questions quoting their span and
  of unanswerable ones declined (the quantities the answerer is judged by);
- `decline_curve(cases, thresholds)`: those two shares for a sweep of decline thresholds,
  everything else fixed — answering more against declining more;
- `extractive_sentence(cases, split, threshold)`: notebook 04's sentence on those shares and
  this project's goals for them; a share with no question behind it (a split without
  unanswerable questions) is said to be unmeasured, not "nan %";
- `calibrate(cases, mix_cases=...)`: the constants of `ragkit.extractive`, chosen on the
  cases given (dev only: `python benchmarks/bench_answers.py --calibrate` picks the sentence
  mix on the shipped dev split and the held-out scikit-learn set's dev half, the decline rule
  on the shipped dev split);
- `cross_validated(cases, decline_missing)`: the two shares of out-of-fold decisions, each
  fold's decline rule calibrated on the others — how a new decline signal was checked on dev
  before it was adopted.

What it is not: a judge of answers that are not quotes (`ragkit.answer_metrics`).
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ragkit.assemble import lift
from ragkit.assemble import DEFAULT_BUDGET, assemble
from ragkit.config import DEFAULT_RERANK, SearchConfig
from ragkit.documents import Query
from ragkit.extractive import Extract, Features, Params, choose, features
from ragkit.pipeline import Pipeline
from ragkit.progress import progress_bar
from ragkit.text_stats import counted

QUOTED = "answerable quoting the span %"
DECLINED = "unanswerable declined %"
# The calibration grid (dev split): sentence mixing first, then the decline rule.
MIXES = (0.3, 0.4, 0.5, 0.6, 0.7)
NUMBER_BONUSES = (0.0, 0.05, 0.1, 0.15, 0.2)
RANK_PRIORS = (0.0, 0.03, 0.06, 0.1, 0.15)
# This project's own goals for the answerer, which the decline rule is calibrated towards, in
# percent: QUOTED and DECLINED (set here, not taken from a published source).
TARGETS = (60.0, 70.0)
STRENGTH_MIXES = (0.0, 0.25, 0.5, 0.75, 1.0)
THRESHOLDS = tuple(round(t / 100, 2) for t in range(0, 101))


@dataclass(frozen=True)
class Case:
    """One question and the answerer's features over its passages."""

    query: Query
    features: Features

    @property
    def answerable(self) -> bool:
        return bool(self.query.golden)


def extractive_cases(pipeline: Pipeline, queries: Sequence[Query], k: int = 5,
                     config: SearchConfig = SearchConfig(rerank=DEFAULT_RERANK),
                     budget_tokens: int = DEFAULT_BUDGET, progress: bool = False) -> list[Case]:
    """Each query's features over its top-`k` hits, assembled as the answerer reads them
    (`progress`: a bar over the questions, whose sentences a first run embeds)."""
    if not pipeline.has_dense:
        config = replace(config, mode="bm25", rerank="none")
    hits = pipeline.search([q.text for q in queries], k, config) if queries else []
    by_id = {c.id: c for c in pipeline.chunks}
    out = []
    for query, found in progress_bar(list(zip(queries, hits)), desc="answer offline",
                                     unit="question", disable=not progress, leave=False):
        chunks = by_id
        if pipeline.parents:
            found, parents = lift(found, pipeline.parents)
            chunks = {**by_id, **parents}
        passages = list(assemble(found, chunks, budget_tokens))
        out.append(Case(query, features(query.text, passages, pipeline.embedder)))
    return out


def normalised(text: str) -> str:
    """`text` with each run of white space one space, ends stripped: how a golden span is
    looked for in quoted text (`quotes_span`) and in a unit (`ragkit.train_extractive`)."""
    return re.sub(r"\s+", " ", text).strip()


def quotes_span(query: Query, extract: Extract) -> float:
    """The share of `query`'s golden spans inside the quoted text (0 for a decline)."""
    if extract.declined or not query.golden:
        return 0.0
    text = normalised(" ".join(q.text for q in extract.quotes))
    spans = [normalised(g.span) for g in query.golden]
    return sum(s in text for s in spans) / len(spans)


def extractive_scores(cases: Sequence[Case], params: Params = Params()) -> dict[str, float]:
    """{QUOTED: %, DECLINED: %, "answerable": n, "unanswerable": n} under `params`."""
    quoted, declined = [], []
    for case in cases:
        extract = choose(case.features, params)
        if case.answerable:
            quoted.append(quotes_span(case.query, extract))
        else:
            declined.append(float(extract.declined))
    return {QUOTED: 100 * float(np.mean(quoted)) if quoted else float("nan"),
            DECLINED: 100 * float(np.mean(declined)) if declined else float("nan"),
            "answerable": len(quoted), "unanswerable": len(declined)}


def decline_curve(cases: Sequence[Case], thresholds: Iterable[float] | None = None,
                  params: Params = Params()) -> pd.DataFrame:
    """One row per decline threshold (everything else as `params`): QUOTED and DECLINED."""
    points = THRESHOLDS[::5] if thresholds is None else tuple(thresholds)
    rows = {t: extractive_scores(cases, replace(params, threshold=t)) for t in points}
    table = pd.DataFrame(rows).T[[QUOTED, DECLINED]].astype(float)
    table.index.name = "decline threshold"
    return table


def extractive_sentence(cases: Sequence[Case], split: str, threshold: float) -> str:
    """What the answerer did at `threshold` (the `cases` scored at it) against `TARGETS`, in
    Markdown. Without unanswerable questions it read "declines **nan %** of the 0
    unanswerable ones … (nan points short)"; now that share is said to be unmeasured."""
    scores = extractive_scores(cases, Params(threshold=threshold))
    missing = sum(bool(c.features.missing) for c in cases if not c.answerable)
    quoted, declined = scores[QUOTED], scores[DECLINED]
    n_answerable, n_unanswerable = int(scores["answerable"]), int(scores["unanswerable"])

    def target(share: float, goal: float, what: str) -> str:
        if share != share:  # NaN: no question of that kind
            return f"{goal:.0f} % {what} (not measured)"
        gap = "met" if share >= goal else f"{goal - share:.1f} points short"
        return f"{goal:.0f} % {what} ({gap})"

    does = (f"quotes the golden span for **{quoted:.1f} %** of the "
            f"{counted(n_answerable, f'answerable {split} question')}" if n_answerable
            else f"has no answerable {split} question to quote")
    declines = (f"declines **{declined:.1f} %** of the {n_unanswerable} unanswerable "
                f"{'one' if n_unanswerable == 1 else 'ones'}; {missing} of those "
                f"{'names' if missing == 1 else 'name'} a quarter, code or name that no "
                "retrieved passage holds" if n_unanswerable
                else f"there is no unanswerable {split} question to decline")
    joiner = " and " if n_unanswerable else "; "
    return (f"At the calibrated threshold {threshold}, the extractive answerer {does}{joiner}"
            f"{declines}. This project's goals: {target(quoted, TARGETS[0], 'quoted')} and "
            f"{target(declined, TARGETS[1], 'declined')}.")


def shortfall(scores: dict[str, float]) -> float:
    """Percentage points missing from the `TARGETS` (QUOTED ≥ 60, DECLINED ≥ 70), summed.
    Not the mean of the two shares: with no retrieval score that separates the questions, that
    mean is best when everything is declined (0 quoted, 100 declined)."""
    return (max(0.0, TARGETS[0] - scores[QUOTED]) + max(0.0, TARGETS[1] - scores[DECLINED]))


def _mix(cases: Sequence[Case], learned: bool = Params().learned) -> Params:
    """The sentence mix (MIX, NUMBER_BONUS, RANK_PRIOR) quoting the most golden spans when
    nothing is declined; ties go to the first in grid order. With the learned scorer
    (`learned`) the mix is not used: the module's constants come back unchanged."""
    never = 0.0 - 1.0  # a threshold no strength is below: nothing declined
    if learned:
        return Params(threshold=never, decline_missing=False)
    return max((Params(m, b, r, 1.0, never, False, learned=False) for m, b, r in
                itertools.product(MIXES, NUMBER_BONUSES, RANK_PRIORS)),
               key=lambda p: (extractive_scores(cases, p)[QUOTED], -p.mix, -p.number_bonus,
                              -p.rank_prior))


def _decline_rule(cases: Sequence[Case], mix: Params, decline_missing: bool) -> Params:
    """(STRENGTH_MIX, THRESHOLD) with the smallest `shortfall` given `mix` (first in grid
    order on ties). The same arithmetic as `extractive_scores`, one array per strength mix."""
    answerable = np.array([c.answerable for c in cases])
    quoted = np.array([quotes_span(c.query, choose(c.features, replace(
        mix, threshold=-1.0, decline_missing=False))) for c in cases])
    forced = np.array([decline_missing and bool(c.features.missing) for c in cases])
    best, best_score = replace(mix, decline_missing=decline_missing), float("inf")
    for s in STRENGTH_MIXES:
        strength = np.array([c.features.strength(replace(mix, strength_mix=s)) for c in cases])
        for t in THRESHOLDS:
            declined = forced | (strength < t) | np.array([not c.features.blocks for c in cases])
            scores = {QUOTED: 100 * float(np.mean(np.where(declined, 0.0, quoted)[answerable]))
                      if answerable.any() else float("nan"),
                      DECLINED: 100 * float(np.mean(declined[~answerable]))
                      if (~answerable).any() else float("nan")}
            score = shortfall(scores)
            if score < best_score - 1e-9:
                best = replace(mix, strength_mix=s, threshold=t, decline_missing=decline_missing)
                best_score = score
    return best


def calibrate(cases: Sequence[Case], decline_missing: bool = True,
              mix_cases: Sequence[Case] | None = None,
              learned: bool = Params().learned) -> Params:
    """The constants chosen on `cases`: the sentence mix (MIX, NUMBER_BONUS, RANK_PRIOR) that
    quotes the most golden spans when nothing is declined — on `mix_cases` when given (the
    shipped dev split with the held-out set's dev half: which sentence answers is not a
    property of one corpus, so more corpora judge it better) — then the decline rule
    (STRENGTH_MIX, THRESHOLD) with the smallest `shortfall` on `cases`, declining too when
    `decline_missing` and a distinctive unit of the question is in no passage. Ties go to the
    first in grid order (smaller values: fewer declines). With `learned` the units are
    ranked by the learned scorer and no mix is chosen (`_mix`)."""
    return _decline_rule(cases, _mix(cases if mix_cases is None else mix_cases, learned),
                         decline_missing)


def folds(cases: Sequence[Case], k: int = 5) -> list[int]:
    """Each case's fold, 0 … k−1: answerable and unanswerable questions dealt out apart in
    question-id order, so each fold holds a share of both (deterministic, no seed)."""
    out = [0] * len(cases)
    for kind in (True, False):
        members = sorted((i for i, c in enumerate(cases) if c.answerable == kind),
                         key=lambda i: cases[i].query.id)
        for n, i in enumerate(members):
            out[i] = n % k
    return out


def cross_validated(cases: Sequence[Case], decline_missing: bool, k: int = 5,
                    mix_cases: Sequence[Case] | None = None,
                    learned: bool = Params().learned) -> dict[str, float]:
    """`extractive_scores` of out-of-fold decisions: each fold answered with the decline rule
    calibrated on the other k−1 (the sentence mix stays the one of all `cases`, or of
    `mix_cases` as `calibrate` takes it: it never sees whether a question is answerable).
    Whether a signal helps, without scoring on what chose it."""
    mix = _mix(cases if mix_cases is None else mix_cases, learned)
    fold = folds(cases, k)
    out: list[Case] = []
    chosen: list[Params] = []
    for f in range(k):
        rule = _decline_rule([c for c, g in zip(cases, fold) if g != f], mix, decline_missing)
        held = [c for c, g in zip(cases, fold) if g == f]
        out += held
        chosen += [rule] * len(held)
    quoted = [quotes_span(c.query, choose(c.features, p)) for c, p in zip(out, chosen)
              if c.answerable]
    declined = [float(choose(c.features, p).declined) for c, p in zip(out, chosen)
                if not c.answerable]
    return {QUOTED: 100 * float(np.mean(quoted)), DECLINED: 100 * float(np.mean(declined)),
            "answerable": len(quoted), "unanswerable": len(declined)}
