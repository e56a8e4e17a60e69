"""What every reranker shares: the `Candidate` it is given and the `Reranker` protocol.

What it is: the leaf the rerankers (`offline.py`, `claude.py`, `voyage.py`) and the package
(`ragkit.rerank`, which re-exports both names) import, so no reranker imports the package
that names it. What it is not: a reranker (`ragkit.rerank.get_reranker` makes those).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragkit.documents import Chunk
from ragkit.fusion import Ranking


@dataclass(frozen=True)
class Candidate:
    """A first-stage hit: the chunk, its fused score and the signals that produced it.

    `signals` holds per-retriever scores and 1-based ranks, e.g. {"bm25": 12.3, "bm25_rank": 1,
    "dense": 0.61, "dense_rank": 4}; a retriever that did not return the chunk has no entry.
    """

    chunk: Chunk
    score: float
    signals: dict[str, float] = field(default_factory=dict)


def with_signals(first: Ranking, lists: Mapping[str, Ranking],
                 chunks: Mapping[str, Chunk]) -> list[Candidate]:
    """`first` (a first-stage ranking of chunk ids) as `Candidate`s: each with the score and
    1-based rank every list of `lists` (by retriever name) gave it."""
    signals: dict[str, dict[str, float]] = {}
    for name, ranking in lists.items():
        for rank, (ident, score) in enumerate(ranking, start=1):
            signals.setdefault(ident, {}).update({name: score, f"{name}_rank": rank})
    return [Candidate(chunks[ident], score, signals.get(ident, {})) for ident, score in first]


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        """The best k of `candidates` for `query` as (chunk id, score), best first."""
        ...
