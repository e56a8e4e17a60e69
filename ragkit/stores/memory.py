"""The in-memory store: the pipeline's own `BM25` matrix and `DenseIndex` arrays (default).

What it is: a thin view of the pipeline's `bm25` and `dense` attributes, read when asked
(so a pipeline whose vectors are set after construction, as `Pipeline.build` does, is seen
as it is now). Behaviour is exactly the pipeline's before stores existed.

Result ids come from the chunks by position: a loaded index's `ChunkTable` reads only the
hits' rows (`ids_at`); a list of chunks (a pipeline just built) is packed once into `ChunkIds`.

What it is not: a copy; the arrays stay on the pipeline and are saved by `index_folder`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragkit.chunk_table import ChunkTable
from ragkit.ranking import Ranking


class ChunkIds:
    """The chunk ids of a list of chunks, by position, packed into one UTF-8 buffer.

    Why: a million chunks' id strings lie scattered over the memory their chunks were read
    into, and picking 150 of them for a result missed the cache twice each (0.34 ms of a
    3 ms BM25 query at 1M chunks); slices of one 9 MB buffer cost a third of that. What
    it is not: a lookup by id (`Pipeline` keeps those maps).
    """

    def __init__(self, chunks: Sequence) -> None:
        encoded = [c.id.encode("utf-8", "surrogatepass") for c in chunks]  # any str
        self.buffer = b"".join(encoded)
        self.offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=self.offsets[1:])

    def __len__(self) -> int:
        return self.offsets.size - 1

    def take(self, positions: np.ndarray) -> list[str]:
        """The ids at `positions` (an integer array), in that order."""
        starts, ends = self.offsets[positions].tolist(), self.offsets[positions + 1].tolist()
        buffer = self.buffer
        return [buffer[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts, ends)]


class MemoryStore:
    """Searches `pipeline.bm25` and `pipeline.dense` in this process."""

    kind = "memory"

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self._ids: tuple[list, ChunkIds] = ([], ChunkIds([]))

    def _ids_at(self, positions: np.ndarray) -> list[str]:
        """The chunk ids at `positions`: read from a `ChunkTable`'s rows, else from the
        packed ids of the chunk list, kept while `pipeline.chunks` is the same list of the
        same length."""
        chunks = self.pipeline.chunks
        if isinstance(chunks, ChunkTable):
            return chunks.ids_at(positions)
        if self._ids[0] is not chunks or len(self._ids[1]) != len(chunks):
            self._ids = (chunks, ChunkIds(chunks))
        return self._ids[1].take(positions)

    @property
    def has_dense(self) -> bool:
        return self.pipeline.dense is not None

    def bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        return self._bm25(texts, depth, ties=False)

    def bm25_tied(self, texts: Sequence[str], n: int) -> list[Ranking]:
        return self._bm25(texts, n, ties=True)

    def _bm25(self, texts: Sequence[str], depth: int, ties: bool) -> list[Ranking]:
        return [list(zip(self._ids_at(idx), scores.tolist()))
                for idx, scores in self.pipeline.bm25.search_many(texts, depth, ties=ties)]

    def dense(self, vectors: np.ndarray, depth: int) -> list[Ranking]:
        return [list(zip(self._ids_at(idx), scores.tolist()))
                for idx, scores in self.pipeline.dense.search(vectors, depth)]

    def bm25_scores(self, query: str, positions: np.ndarray) -> np.ndarray:
        return self.pipeline.bm25.scores_at(query, positions)

    def maxp_scores(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return self.pipeline.dense.maxp_at(vector, positions)

    def record(self) -> dict:
        return {"kind": "memory"}
