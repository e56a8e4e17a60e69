"""Rerankers: reorder a first-stage candidate list (hybrid top-N) and keep the top k.

Seed 002's largest single step is reranking the top 150 down to 20 (failure 2.9 % → 1.9 %);
seed 000 calls reranking the highest-ROI addition to a RAG pipeline. A reranker sees each
candidate chunk with the first-stage signals that found it, so cheap offline rerankers can
learn from them and API rerankers can ignore them.

What it is: the `Reranker` protocol, the `Candidate` record and `get_reranker(name)`, which
resolves a name to an instance (imports are lazy: a name costs nothing until used):
- `none`: no reranking (the first-stage order, cut to k);
- `offline`: the offline default (see `ragkit.rerank.offline`);
- `voyage:MODEL` (e.g. `voyage:rerank-2.5`): Voyage's reranker through its SDK;
- `claude`: listwise reranking by Claude, RankGPT-style sliding windows, through
  `ragkit.llm` (the offline stand-in answers it without a key).

What it is not: a retriever. It never sees chunks the first stage did not return.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragkit.documents import Chunk, RagkitError
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


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        """The best k of `candidates` for `query` as (chunk id, score), best first."""
        ...


class NoRerank:
    """The first-stage order, cut to k."""

    name = "none"

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        return [(c.chunk.id, c.score) for c in candidates[:k]]


def _offline() -> Reranker:
    from ragkit.rerank.offline import OfflineReranker
    return OfflineReranker()


def _claude() -> Reranker:
    from ragkit.rerank.claude import ClaudeReranker
    return ClaudeReranker()


def _voyage(model: str) -> Reranker:
    from ragkit.rerank.voyage import VoyageReranker
    return VoyageReranker(model)


RERANKERS: dict[str, Callable[[], Reranker]] = {"none": NoRerank, "offline": _offline,
                                                 "claude": _claude}
PREFIXED: dict[str, Callable[[str], Reranker]] = {"voyage": _voyage}


def get_reranker(name: str) -> Reranker:
    """The reranker named `name` (see the module docstring for the names)."""
    if name in RERANKERS:
        return RERANKERS[name]()
    prefix, sep, rest = name.partition(":")
    if sep and prefix in PREFIXED and rest:
        return PREFIXED[prefix](rest)
    known = ", ".join([*RERANKERS, *(f"{p}:MODEL" for p in PREFIXED)])
    raise RagkitError(f"unknown reranker {name!r}; known rerankers: {known}")
