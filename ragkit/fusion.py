"""Fusing ranked lists from several retrievers into one, and the one order ragkit ranks by.

- `rrf`: reciprocal rank fusion, score(d) = Σ_r 1 / (k + rank_r(d)), k = 60 by default
  (Cormack, Clarke & Büttcher, SIGIR 2009; the usual default; `ragkit.tune` sweeps k).
- `weighted_scores`: a weighted sum of each list's normalised scores (see `normalize`), the
  seeds' dense 0.6 / sparse 0.4 starting point.
- `weighted_rank`: Anthropic's contextual-embeddings cookbook variant,
  score(d) = Σ_r w_r / rank_r(d) (0.8 dense / 0.2 BM25 there; `fuse` uses the weights it is
  given — `SearchConfig`'s 0.6 / 0.4 unless set — and `ragkit.tune` compares the cookbook's).

A ranking is a list of (id, score) pairs, best first; ranks start at 1. A document missing
from a list contributes nothing from it.

Tie rule (every final ranking ragkit produces — fusion output, `Pipeline.search` in every
mode, `runs.read_trec`): score descending, then id descending. Scores are compared rounded
to single precision and ids as a TREC run spells them (`runs.trec_score`, `runs.escape_id`:
the id itself unless it holds whitespace or `%`), because that is exactly the order
trec_eval (and so ir_measures / pytrec_eval) imposes on a run file — `comp_sim_docno`: sim
desc, then docno desc, with sim a C float. Scores a millionth apart are noise anyway. The
cookbook's sort key `(score, doc_id, original_index), reverse=True` also breaks ties by id
descending (it compares the chunk index as a number, so its chunk 10 precedes chunk 9 of one
document where ids `..._chunk_9` > `..._chunk_10` as text). So a written run scores in
trec_eval exactly as ragkit scored it, for any ids and scores.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ragkit.ranking import Ranking  # also `from ragkit.fusion import Ranking`, as before
from ragkit.config import FUSIONS, check_positive  # beside the search options choosing them
from ragkit.errors import RagkitError
from ragkit.runs import escape_id, trec_score

NORMALIZATIONS = ("minmax", "zscore")


def ranked(items: Mapping[str, float] | Iterable[tuple[str, float]],
           top: int | None = None) -> Ranking:
    """(id, score) pairs in the tie-rule order (score rounded to single precision, then id
    as a run spells it, both descending), cut to the best `top` when given."""
    pairs = [(ident, float(score))
             for ident, score in (items.items() if isinstance(items, Mapping) else items)]
    # `runs.trec_score` of every score in one numpy call (one call per score cost 1 µs each)
    rounded = np.asarray([score for _, score in pairs], dtype=np.float32)
    order = np.argsort(-rounded, kind="stable").tolist()  # by rounded score, descending
    # then each run of equal rounded scores by id: only tied ids are escaped and compared
    # (a retriever's list is mostly untied, and 150 escapes cost more than the sort)
    in_order = rounded[order]
    equal = np.flatnonzero(in_order[1:] == in_order[:-1]).tolist()
    start = None
    for i, at in enumerate(equal):
        start = at if start is None else start
        if i + 1 == len(equal) or equal[i + 1] != at + 1:  # the run start..at+1 ends here
            order[start:at + 2] = sorted(order[start:at + 2], reverse=True,
                                         key=lambda j: escape_id(pairs[j][0]))
            start = None
    out = [pairs[i] for i in order]
    return out[:top] if top else out


def with_ties(fetch: Callable[[Sequence[str], int], list[Ranking]], texts: Sequence[str],
              n: int) -> list[Ranking]:
    """Each text's top `n` from `fetch(texts, depth)` plus every further item tied with its
    n-th score (tie rule).

    So the tie rule, not the retriever's internal order, decides which tied items make a
    cut: a list that came back full and still tied at its end is fetched again, deeper.
    (In-memory BM25 returns its ties itself, `BM25.search(..., ties=True)`: one search.)
    """
    depth = n + 1  # one more than needed shows whether the n-th score is tied beyond the cut
    results = list(fetch(texts, depth))
    while True:
        open_ = [i for i, r in enumerate(results)
                 if len(r) >= depth and trec_score(r[-1][1]) == trec_score(r[n - 1][1])]
        if not open_:
            break
        depth *= 2
        for i, deeper in zip(open_, fetch([texts[i] for i in open_], depth)):
            results[i] = deeper
    return [cut(r, n) for r in results]


def cut(ranking: Ranking, n: int) -> Ranking:
    """A ranking (in the tie-rule order) cut to its top `n` and every item tied with the
    n-th."""
    if len(ranking) <= n:
        return ranking
    last = trec_score(ranking[n - 1][1])
    return [item for item in ranking if trec_score(item[1]) >= last]


def continued(head: Ranking, deeper: Ranking, top: int) -> Ranking:
    """`head`, then the items of `deeper` it lacks, in `deeper`'s order, to `top` in all.

    What a ranking asked past its head adds *below* the head instead of re-deciding it. The
    tail's scores are shifted by one constant so its best sits one single-precision step
    below the head's last, and given at single precision: where the shift would merge two
    scores there (or split a tie), a score is stepped down instead (or the tie kept). So
    scores fall down the whole ranking and the tail keeps `deeper`'s order exactly, as a
    TREC run of it needs; the tail's scores are not comparable with the head's.
    """
    if len(head) >= top:
        return head[:top]
    seen = {ident for ident, _ in head}
    tail = [(ident, score) for ident, score in deeper if ident not in seen][:top - len(head)]
    if not head or not tail:
        return (head or tail)[:top]
    top32 = float(np.finfo(np.float32).max)  # an infinite score made the shift NaN
    scores = np.nan_to_num(np.asarray([score for _, score in tail], dtype=np.float64),
                           nan=-top32, posinf=top32, neginf=-top32)
    # a tie in `deeper` (equal at single precision) is one group, which keeps one score
    group = np.concatenate(([0], np.cumsum(np.diff(scores.astype(np.float32)) != 0)))
    first = np.flatnonzero(np.concatenate(([True], np.diff(group) > 0)))
    wanted = _order_key(np.clip(scores[first] + (float(head[-1][1]) - scores.max()), -top32,
                                top32))
    # each group at most one single-precision step below the one before (the head's last
    # first): key_g = min over i ≤ g of (wanted_i − (g − i)), a running minimum
    steps = np.arange(1, len(first) + 1)
    start, lowest = _order_key(np.array([head[-1][1], -np.inf]))
    keys = np.minimum.accumulate(np.concatenate(([start], wanted + steps)))[1:] - steps
    values = _from_order_key(np.maximum(keys, lowest))
    return head + [(ident, value) for (ident, _), value in zip(tail, values[group].tolist())]


def _order_key(values: np.ndarray) -> np.ndarray:
    """Single-precision values as integers in the same order, one apart per representable
    step (so "one step below" is "minus one")."""
    bits = np.asarray(values, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _from_order_key(keys: np.ndarray) -> np.ndarray:
    bits = np.where(keys < 0, (-keys) | 0x80000000, keys).astype(np.uint32)
    return bits.view(np.float32).astype(np.float64)


def rrf(rankings: Sequence[Ranking], k: int = 60, top: int | None = None) -> Ranking:
    """Reciprocal rank fusion of several rankings; k a whole number ≥ 1 (0 or below was fused
    without a word; `SearchConfig.rrf_k` also caps it, `check_rrf_k`)."""
    check_positive(k, "k")
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (ident, _) in enumerate(ranking, start=1):
            fused[ident] = fused.get(ident, 0.0) + 1.0 / (k + rank)
    return ranked(fused, top)


def weighted_rank(rankings: Sequence[Ranking], weights: Sequence[float],
                  top: int | None = None) -> Ranking:
    """Anthropic's cookbook fusion: Σ weight / rank over the rankings."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (ident, _) in enumerate(ranking, start=1):
            fused[ident] = fused.get(ident, 0.0) + weight / rank
    return ranked(fused, top)


def normalize(scores: np.ndarray, method: str = "minmax") -> np.ndarray:
    """Scale one retrieved list's scores so that being in the list always counts.

    `minmax`: min-max with the floor one average gap below the list's minimum,
    (s − floor) / (max − floor), floor = min − (max − min) / (n − 1). The best item gets 1,
    the last 1/n, and an item absent from the list counts as the floor, 0 — so every hit
    counts strictly more than no hit (plain min-max gives the last hit 0, the same as
    absent, which threw away a lone BM25 hit on a rare identifier). A one-item or constant
    list gives every hit 1. The floor estimates the next, unretrieved score had the list's
    spacing continued. Measured with the default hybrid search: the same as plain min-max
    and as flooring at the true next score (fetching one more) on the shipped dev split,
    while theoretical min-max (Bruch, Gai & Ingber, TOIS 2023: floor 0 for BM25, −1 for
    cosine) lost 2.7 Pass@5 there; this rule needs nothing from the retriever.
    `zscore`: mean 0 and unit variance (a constant list maps to all zeros); in fusion each
    list is shifted so its lowest item sits one standard deviation above absent.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if method == "minmax":
        low, high = scores.min(), scores.max()
        if high == low:
            return np.ones_like(scores)
        floor = low - (high - low) / (scores.size - 1)
        return (scores - floor) / (high - floor)
    if method == "zscore":
        std = scores.std()
        return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores)
    raise RagkitError(f"unknown normalization '{method}' (known: "
                      f"{', '.join(NORMALIZATIONS)})")


def weighted_scores(rankings: Sequence[Ranking], weights: Sequence[float],
                    method: str = "minmax", top: int | None = None) -> Ranking:
    """Weighted sum of each ranking's normalised scores; absent from a list adds 0."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        normed = normalize(np.array([score for _, score in ranking]), method)
        if method == "zscore":
            normed = normed - normed.min() + 1.0
        for (ident, _), value in zip(ranking, normed):
            fused[ident] = fused.get(ident, 0.0) + weight * float(value)
    return ranked(fused, top)


def fuse(rankings: Mapping[str, Ranking], method: str = "rrf",
         weights: Mapping[str, float] | None = None, top: int | None = None,
         rrf_k: int = 60) -> Ranking:
    """Fuse named rankings (e.g. {"dense": ..., "bm25": ...}) by method name.

    `weights` apply to the weighted fusions, `rrf_k` to RRF only.
    """
    names = list(rankings)
    lists = [rankings[name] for name in names]
    w = [float((weights or {}).get(name, 1.0)) for name in names]
    if method == "rrf":
        return rrf(lists, k=rrf_k, top=top)
    if method == "weighted":
        return weighted_scores(lists, w, top=top)
    if method == "weighted_rank":
        return weighted_rank(lists, w, top=top)
    raise RagkitError(f"unknown fusion '{method}' (known: {', '.join(FUSIONS)})")


def fuse_deep(rankings: Mapping[str, Ranking], depth: int, top: int, method: str = "rrf",
              weights: Mapping[str, float] | None = None, rrf_k: int = 60) -> Ranking:
    """The top `top` of the fusion of each ranking's top `depth` (ties at the cut included),
    continued in blocks below it (`fused_deep`)."""
    return fused_deep(lambda lists, n: fuse(lists, method, weights, n, rrf_k), rankings,
                      depth, top)


def fused_deep(fusion: Callable[[Mapping[str, Ranking], int | None], Ranking],
               rankings: Mapping[str, Ranking], depth: int, top: int) -> Ranking:
    """The top `top` of `fusion(lists, n)` (its top n; None: all) of each ranking's top
    `depth`; past that head, block after block below it (`continued`): the items new in the
    fusion of each ranking's top 2·`depth`, then 4·`depth`, … Each ranking must reach
    `ragkit.config.fetch_depth(top, depth)` (or hold all it has).

    So a ranking asked deeper only adds blocks at its end, and every k ranks alike: fusing
    deeper lists moves min-max floors and adds RRF terms, so one fusion of k-deep lists had
    reordered with k — the top 5 at k = 1,000 (`ragkit tune --k 300` chose another α), and
    past the head, ranks around 120 between k = 120 and 149.
    """
    lists = {name: cut(ranking, depth) for name, ranking in rankings.items()}
    out = fusion(lists, top)
    while len(out) < top and any(len(lists[n]) < len(r) for n, r in rankings.items()):
        depth *= 2
        lists = {name: cut(ranking, depth) for name, ranking in rankings.items()}
        out = continued(out, fusion(lists, None), top)
    return out
