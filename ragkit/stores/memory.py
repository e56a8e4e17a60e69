"""The in-memory store: the pipeline's own `BM25` matrix and `DenseIndex` arrays (default).

What it is: a thin view of the pipeline's `bm25` and `dense` attributes, read when asked
(so a pipeline whose vectors are set after construction, as `Pipeline.build` does, is seen
as it is now). Behaviour is exactly the pipeline's before stores existed.

What it is not: a copy; the arrays stay on the pipeline and are saved by `index_folder`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragkit.fusion import Ranking


class MemoryStore:
    """Searches `pipeline.bm25` and `pipeline.dense` in this process."""

    kind = "memory"

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self._ids: tuple[list, list[str]] = ([], [])

    def _chunk_ids(self) -> list[str]:
        """The chunk ids in position order, kept while `pipeline.chunks` is the same list
        (a list of strings is read faster than an attribute of a million chunks)."""
        chunks = self.pipeline.chunks
        if self._ids[0] is not chunks or len(self._ids[1]) != len(chunks):
            self._ids = (chunks, [c.id for c in chunks])
        return self._ids[1]

    @property
    def has_dense(self) -> bool:
        return self.pipeline.dense is not None

    def bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        return self._bm25(texts, depth, ties=False)

    def bm25_tied(self, texts: Sequence[str], n: int) -> list[Ranking]:
        return self._bm25(texts, n, ties=True)

    def _bm25(self, texts: Sequence[str], depth: int, ties: bool) -> list[Ranking]:
        ids = self._chunk_ids()
        return [[(ids[i], s) for i, s in zip(idx.tolist(), scores.tolist())]
                for idx, scores in self.pipeline.bm25.search_many(texts, depth, ties=ties)]

    def dense(self, vectors: np.ndarray, depth: int) -> list[Ranking]:
        ids = self._chunk_ids()
        return [[(ids[i], float(s)) for i, s in zip(idx.tolist(), scores.tolist())]
                for idx, scores in self.pipeline.dense.search(vectors, depth)]

    def bm25_scores(self, query: str, positions: np.ndarray) -> np.ndarray:
        from ragkit.rerank.features import bm25_scores
        return bm25_scores(self.pipeline.bm25, query, positions)

    def maxp_scores(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        from ragkit.rerank.features import maxp_scores
        return maxp_scores(self.pipeline.dense, vector, positions)

    def record(self) -> dict:
        return {"kind": "memory"}
