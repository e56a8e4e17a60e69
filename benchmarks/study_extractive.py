"""Can the offline extractive answerer quote better, or decline better, than its hand rule?
Two studies on dev questions only; the test halves are printed for the record, never chosen on.

    python benchmarks/study_extractive.py [--folds 5]

1. A learned sentence scorer. Every quotable unit of a question's top-5 hybrid passages
   (`ragkit.extractive.features`) gets the columns of `COLUMNS`: the e5-small query–unit
   cosine (of the unit under its document's title) as its rank within the request (what the
   hand rule uses) and as its gap to the best, the same two for a second view (`auto`:
   MiniLM, USE for Hangul — the other family, the offline reranker's second view), the IDF
   coverage of the unit and its tag, 1 / passage rank, the number cue, log length, position
   in the passage, the share of the question's word pairs in the unit, whether it is a
   heading joined to its sentence (these nine are the shipped scorer's,
   `ragkit.extractive_scorer.columns`), the unit's own cosine (no title) as rank and gap, and
   the share of the unit's terms the question lacks (an answer says something the question
   does not; a sentence that only restates the question does not answer it).
   A unit is relevant when it holds a golden span or lies inside one
   (`ragkit.train_extractive.labels`). Each column set is fitted as the shipped scorer is
   (`ragkit.train_reranker.fit`) on 4 folds of the dev questions (the shipped dev split and
   the held-out scikit-learn dev half) — and, as a non-linear check, gradient-boosted trees
   on the shipped nine (`TREES`) — and picks the 3 quotes of the 5th, as
   `ragkit.extractive.choose` does with nothing declined; the hand rule's grid
   (`ragkit.extractive_eval`) is re-chosen on the same 4 folds. Printed: the out-of-fold
   share of answerable questions whose quotes contain the golden span, then each set fitted
   on all of dev and scored on both test halves (report only), with the share whose golden
   span some unit of the passages holds (what any scorer could quote).
2. A decline rule for a question about a field the named thing does not report: the
   "pairing" of a question — for each distinctive unit (`ragkit.extractive_decline`) the best
   IDF share of the question's other terms in one passage holding that unit, the smallest
   over the units ("min") or the largest ("max"). Cross-validated on dev as
   `ragkit.extractive_eval.cross_validated` checks a signal: each fold's thresholds (best
   cosine, pairing) chosen on the other folds by `shortfall`, with the missing-unit rule on.

Needs the default embedder's model (e5-small) and MiniLM (`ragkit models install`) and the
held-out scikit-learn set (`build/heldout/sklearn`); about a minute and a half with the
embedding cache warm.
"""
from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ragkit import extractive_eval as ev  # noqa: E402
from ragkit.assemble import assemble, blocks  # noqa: E402
from ragkit.datasets import load_dataset  # noqa: E402
from ragkit.embed import get_embedder  # noqa: E402
from ragkit.extractive import (MAX_QUOTES, MIX, NUMBER_BONUS, RANK_PRIOR, Extract,  # noqa: E402
                               Params, choose, features)
from ragkit.extractive_decline import distinctive, missing  # noqa: E402
from ragkit.extractive_scorer import closeness, columns  # noqa: E402
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig  # noqa: E402
from ragkit.support import question_terms, request_idf, weighted_share  # noqa: E402
from ragkit.train_extractive import labels  # noqa: E402
from ragkit.train_reranker import fit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SETS = {"shipped": ROOT / "data", "sklearn": ROOT / "build" / "heldout" / "sklearn"}
COLUMNS = ("e5_rank", "e5_gap", "second_rank", "second_gap", "coverage", "rank_prior",
           "number", "length", "position", "phrase", "titled", "own_rank", "own_gap", "novel")
SCORERS = {"hand rule's four (e5_rank, coverage, rank_prior, number)": (0, 4, 5, 6),
           "the four + second view's rank": (0, 2, 4, 5, 6),
           "the four + second view's rank and gap": (0, 1, 2, 3, 4, 5, 6),
           "all eleven": tuple(range(11)),
           "all but the second view (e5-small alone)": (0, 1, 4, 5, 6, 7, 8, 9, 10),
           "e5-small alone + the sentence's own cosine rank and gap (no title)":
               (0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12),
           "e5-small alone + the share of the unit's terms the question lacks":
               (0, 1, 4, 5, 6, 7, 8, 9, 10, 13)}
TREES = {"gradient-boosted trees on the nine (pointwise)": (0, 1, 4, 5, 6, 7, 8, 9, 10)}
PAIRINGS = tuple(t / 20 for t in range(21))


def cases(second) -> list[dict]:
    """Every question of both sets with its features, passages, unit matrix and labels."""
    out = []
    for name, root in SETS.items():
        data = load_dataset(root)
        pipe = Pipeline.build(data.documents, IndexConfig(), progress=False)
        by_id = {c.id: c for c in pipe.chunks}
        for q, hits in zip(data.queries, pipe.search([q.text for q in data.queries], 5,
                                                     SearchConfig())):
            passages = list(assemble(hits, by_id))
            found = features(q.text, passages, pipe.embedder)
            out.append({"set": name, "q": q, "f": found, "passages": passages,
                        "x": _matrix(found, second), "y": labels(ev.Case(q, found))})
    return out


def _matrix(found, second) -> np.ndarray:
    """`COLUMNS`: the shipped scorer's nine (`ragkit.extractive_scorer.columns`) with the
    second view's rank and gap put in after e5-small's."""
    units = found.blocks
    if not units:
        return np.zeros((0, len(COLUMNS)))
    query = second.embed([found.question], input_type="query")[0]
    view = second.embed([b.text for b in units], input_type="document") @ query
    shipped = columns(found)
    own = np.array([b.cosine for b in units])
    asked = question_terms(found.question)
    novel = [len(mine - asked) / max(1, len(mine))
             for mine in (question_terms(b.text) for b in units)]
    return np.column_stack([shipped[:, :2], closeness(view), view - view.max(), shipped[:, 2:],
                            closeness(own), own - own.max(), novel])


def quoted(case: dict, scores: np.ndarray) -> float:
    """The share of golden spans in the `MAX_QUOTES` best units by `scores` (deduplicated
    as `ragkit.extractive.choose` does)."""
    units = case["f"].blocks
    order = sorted(range(len(units)), key=lambda i: (-scores[i], units[i].rank, units[i].block,
                                                      units[i].stop))
    quotes: list = []
    for i in order:
        b = units[i]
        if not any(ev.normalised(b.text) == ev.normalised(q.text)
                   or (q.result == b.result and q.block < b.stop and b.block < q.stop)
                   for q in quotes):
            quotes.append(b)
        if len(quotes) == MAX_QUOTES:
            break
    return ev.quotes_span(case["q"], Extract(tuple(quotes), 1.0, False)) if units else 0.0


def _hand(case: dict, mix: float, bonus: float, prior: float) -> np.ndarray:
    x = case["x"]
    return mix * x[:, 0] + (1 - mix) * x[:, 4] + bonus * x[:, 6] + prior * x[:, 5]


def _fit(train: list[dict], cols) -> callable:
    """Fitted as the shipped scorer is (`ragkit.train_reranker.fit`) on columns `cols`."""
    groups = [(c["x"][:, cols], c["y"]) for c in train if 0 < c["y"].sum() < len(c["y"])]
    model = fit(groups, features=[COLUMNS[i] for i in cols])
    return lambda case: model.score(case["x"][:, cols])


def _fit_trees(train: list[dict], cols) -> callable:
    """scikit-learn's HistGradientBoostingClassifier on columns `cols`, each unit a row
    labelled as the linear scorers' units are: a non-linear scorer on the same signals."""
    rows = [c for c in train if len(c["x"])]
    model = HistGradientBoostingClassifier(learning_rate=0.05, max_leaf_nodes=15,
                                           min_samples_leaf=40, random_state=0)
    model.fit(np.vstack([c["x"][:, cols] for c in rows]), np.concatenate([c["y"] for c in rows]))
    return lambda case: (model.predict_proba(case["x"][:, cols])[:, 1] if len(case["x"])
                         else np.zeros(0))


def _fitted(train: list[dict], name: str) -> callable:
    return _fit_trees(train, TREES[name]) if name in TREES else _fit(train, SCORERS[name])


def scorer_study(dev: list[dict], k: int) -> None:
    answerable = [c for c in dev if c["q"].golden]
    fold = ev.folds([ev.Case(c["q"], c["f"]) for c in answerable], k)
    results = {}
    for name in ["hand rule, grid re-chosen per fold", *SCORERS, *TREES]:
        got = []
        for f in range(k):
            train = [c for c, g in zip(answerable, fold) if g != f]
            if name in SCORERS or name in TREES:
                score = _fitted(train, name)
            else:
                grid = itertools.product(ev.MIXES, ev.NUMBER_BONUSES, ev.RANK_PRIORS)
                best = max(grid, key=lambda p: (np.mean([quoted(c, _hand(c, *p)) for c in train]),
                                                -p[0], -p[1], -p[2]))
                score = lambda case, p=best: _hand(case, *p)  # noqa: E731
            got += [(c["set"], quoted(c, score(c))) for c, g in zip(answerable, fold) if g == f]
        results[name] = got
    print(f"1. sentence scorers, {k}-fold over {len(answerable)} answerable dev questions, "
          "never declining: quotes the golden span % (all / shipped / scikit-learn)")
    for name, got in results.items():
        parts = [[v for _, v in got], [v for s, v in got if s == "shipped"],
                 [v for s, v in got if s == "sklearn"]]
        print(f"  {name}: " + " / ".join(f"{100 * np.mean(p):.1f}" for p in parts))


def pairing(case: dict, worst: bool = True) -> float:
    """For each distinctive unit of the question, the best IDF share of the question's other
    terms in a passage holding that unit; the smallest over the units (`worst`) or the
    largest. 1.0 when the question names nothing or asks nothing else."""
    question, passages = case["q"].text, case["passages"]
    named = distinctive(question)
    other = question_terms(question) - question_terms(" ".join(named))
    if not named or not other:
        return 1.0
    idf = request_idf([question_terms(b) for p in passages for b in blocks(p.text)], other)
    held = [set(named) - set(missing(question, [p])) for p in passages]
    words = [question_terms(p.tag).union(*(question_terms(b) for b in blocks(p.text)))
             for p in passages]
    per = [max(weighted_share(idf, lambda t, w=words[i]: t in w)
               for i in range(len(passages)) if unit in held[i])
           for unit in named if any(unit in h for h in held)]
    return (min(per) if worst else max(per)) if per else 1.0


def _decisions(rows: list[dict], cosine: float, paired: float, key: str) -> dict[str, float]:
    quoted_, declined = [], []
    for c in rows:
        best = max((b.cosine for b in c["f"].blocks if not b.titled), default=0.0)
        out = bool(c["f"].missing) or not c["f"].blocks or best < cosine or c[key] < paired
        if c["q"].golden:
            quoted_.append(0.0 if out else c["never"])
        else:
            declined.append(float(out))
    return {ev.QUOTED: 100 * float(np.mean(quoted_)),
            ev.DECLINED: 100 * float(np.mean(declined)) if declined else float("nan")}


def _rule(rows: list[dict], key: str | None) -> tuple[float, float]:
    grid = itertools.product(PAIRINGS if key else (0.0,), ev.THRESHOLDS)
    best = min(grid, key=lambda pt: ev.shortfall(_decisions(rows, pt[1], pt[0], key or "one")))
    return best[1], best[0]


def decline_study(name: str, rows: list[dict], k: int, report: dict[str, list]) -> None:
    fold = ev.folds([ev.Case(c["q"], c["f"]) for c in rows], k)
    print(f"2. decline rules on {name}, {k}-fold (quoted % / declined %, out of fold):")
    for key in (None, "pair_min", "pair_max"):
        held = [_decisions([c for c, g in zip(rows, fold) if g == f], *_rule(
            [c for c, g in zip(rows, fold) if g != f], key), key or "one") for f in range(k)]
        n = [sum(1 for c, g in zip(rows, fold) if g == f and c["q"].golden) for f in range(k)]
        m = [sum(1 for c, g in zip(rows, fold) if g == f and not c["q"].golden) for f in range(k)]
        q = sum(h[ev.QUOTED] * w for h, w in zip(held, n)) / sum(n)
        d = sum(h[ev.DECLINED] * w for h, w in zip(held, m) if w) / sum(m)
        cosine, paired = _rule(rows, key)
        print(f"  {key or 'today (cosine + missing unit)'}: {q:.1f} / {d:.1f}; on all of it: "
              f"cosine {cosine}, pairing {paired}; cost of the pairing alone on its "
              f"answerables: {_cost(rows, paired, key):.1f} points; reported with it: "
              + ", ".join(f"{s} {_decisions(r, cosine, paired, key or 'one')[ev.QUOTED]:.1f} / "
                          f"{_decisions(r, cosine, paired, key or 'one')[ev.DECLINED]:.1f}"
                          for s, r in report.items()))


def _cost(rows: list[dict], paired: float, key: str | None) -> float:
    if not key:
        return 0.0
    alone, without = _decisions(rows, -1.0, paired, key), _decisions(rows, -1.0, 0.0, key)
    return without[ev.QUOTED] - alone[ev.QUOTED]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    k = parser.parse_args().folds
    everything = cases(get_embedder("auto"))
    never = Params(threshold=-1.0, decline_missing=False)
    for c in everything:
        c["one"] = 1.0
        c["pair_min"], c["pair_max"] = pairing(c), pairing(c, worst=False)
        c["never"] = ev.quotes_span(c["q"], choose(c["f"], never)) if c["q"].golden else 0.0
    part = {(s, h): [c for c in everything if c["set"] == s and c["q"].split == h]
            for s in SETS for h in ("dev", "test")}
    dev = part[("shipped", "dev")] + part[("sklearn", "dev")]
    scorer_study(dev, k)
    fitted = {name: _fitted([c for c in dev if c["q"].golden], name)
              for name in [*SCORERS, *TREES]}
    for s in SETS:  # for the record, never declining: the hand rule, the second view, fitted
        rows = [c for c in part[(s, "test")] if c["q"].golden]
        hand = np.mean([quoted(c, _hand(c, MIX, NUMBER_BONUS, RANK_PRIOR)) for c in rows])
        view = np.mean([quoted(c, MIX * c["x"][:, 2] + (1 - MIX) * c["x"][:, 4]
                               + NUMBER_BONUS * c["x"][:, 6] + RANK_PRIOR * c["x"][:, 5])
                        for c in rows])
        anywhere = np.mean([ev.quotes_span(c["q"], Extract(c["f"].blocks, 1.0, False))
                            for c in rows])
        print(f"  (report only, {s} test: the golden span in any unit {100 * anywhere:.1f}; "
              f"hand rule {100 * hand:.1f}, its e5 rank replaced by "
              f"the second view's {100 * view:.1f}; fitted on all of dev: "
              + ", ".join(f"{name} {100 * np.mean([quoted(c, f(c)) for c in rows]):.1f}"
                          for name, f in fitted.items()) + ")")
    report = {"shipped test": part[("shipped", "test")], "sklearn test": part[("sklearn", "test")]}
    decline_study("the shipped dev split", part[("shipped", "dev")], k, report)
    decline_study("dev (shipped + scikit-learn)", dev, k, report)


if __name__ == "__main__":
    main()
