"""The shape every retriever, fuser and run file in ragkit shares: a ranking, and the top-k
selection every retriever ranks with.

A `Ranking` is a list of (id, score) pairs, best first; ranks start at 1. `top_k` and
`top_k_rows` pick the k best entries of a score vector or of each row of a score matrix,
score descending then index ascending (ragkit's tie rule). This leaf holds only these, so
that foundations (`ragkit.runs` reads and writes rankings as TREC runs) and steps (BM25,
dense search, `ragkit.fusion`, the stores, the rerankers) can all use them without importing
each other. The order a fused ranking is sorted in is `ragkit.fusion.ranked`.
"""
from __future__ import annotations

import numpy as np

Ranking = list[tuple[str, float]]


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise `top_k` of a 2-D score matrix, vectorized over rows."""
    k = min(k, scores.shape[1])
    if k <= 0:
        empty = np.empty((len(scores), 0))
        return empty.astype(np.int64), empty.astype(scores.dtype)
    part = (np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1]
            else np.broadcast_to(np.arange(scores.shape[1]), scores.shape))
    part = np.sort(part, axis=1)  # by position, so the stable sort below breaks ties by it
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    best = np.take_along_axis(part, order, axis=1)
    kth = scores[np.arange(len(scores)), best[:, -1]]
    for row in np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k):
        best[row] = top_k(scores[row], k)[0]  # a tie straddles the cut: settle it by position
    return best, np.take_along_axis(scores, best, axis=1)


def top_k(scores: np.ndarray, k: int, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best entries: score descending, then index ascending;
    with `ties`, followed by every further entry whose score rounds to the k-th's in single
    precision (the tie rule's comparison, `ragkit.runs.trec_score`), in the same order.

    np.argpartition finds the k-th best score; every entry above it is kept, and entries
    equal to it fill the remaining places lowest index first, so ties never depend on the
    partition algorithm.
    """
    k = min(k, scores.size)
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=scores.dtype)
    kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
    above = np.flatnonzero(scores > kth)
    level = np.flatnonzero(scores == kth)
    chosen = np.concatenate([above, level[: k - above.size]])
    if ties and k < scores.size:
        below = np.flatnonzero((scores < kth) & (scores.astype(np.float32) == np.float32(kth)))
        chosen = np.concatenate([chosen, level[k - above.size:], below])
    order = np.lexsort((chosen, -scores[chosen]))
    best = chosen[order]
    return best, scores[best]

