"""Where an index's searchable rows live: the `Store` interface the pipeline searches through.

What it is: two implementations of one small interface — `memory` (today's numpy arrays and
sparse matrix in the index folder, read whole into memory; the default) and `milvus` (the
same rows in a Milvus collection: Milvus Lite embedded in a `.db` file inside the index
folder, or a Milvus server / Zilliz Cloud by URI). A spec names one:

    memory                       the index folder's arrays (default)
    milvus                       Milvus Lite, file `milvus.db` inside the index folder
                                 (or the server in $MILVUS_URI when that is set)
    milvus:http://HOST:19530     a Milvus server; the token is read from $MILVUS_TOKEN

Every store answers the same questions in chunk ids and scores, best first, ties to the
lower chunk position, so `Pipeline.search`, fusion, the rerank stage and the offline
reranker's per-candidate features give the same rankings on either.

What it is not: a way to change how BM25 or dense scores are computed; a store holds the
weights and vectors the pipeline built and searches them.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ragkit.documents import RagkitError
from ragkit.fusion import Ranking

KINDS = ("memory", "milvus")


@dataclass(frozen=True)
class StoreSpec:
    """A parsed `--store` value. `uri` None = Milvus Lite inside the index folder."""

    kind: str = "memory"
    uri: str | None = None
    dense_index: str = "FLAT"


def parse_store(spec: str | StoreSpec | None, dense_index: str = "FLAT") -> StoreSpec:
    """`memory` | `milvus` | `milvus:URI` → StoreSpec; $MILVUS_URI fills a bare `milvus`."""
    if isinstance(spec, StoreSpec):
        return spec
    text = (spec or "memory").strip()
    kind, _, uri = text.partition(":")
    if kind not in KINDS:
        raise RagkitError(f"unknown store {text!r} (known: memory, milvus, milvus:URI)")
    if kind == "memory":
        if uri:
            raise RagkitError(f"store 'memory' takes no URI, got {text!r}")
        return StoreSpec()
    from ragkit.stores.milvus_schema import DENSE_INDEXES
    if dense_index not in DENSE_INDEXES:
        raise RagkitError(f"unknown Milvus dense index {dense_index!r} "
                          f"(known: {', '.join(DENSE_INDEXES)})")
    return StoreSpec("milvus", uri or os.environ.get("MILVUS_URI") or None, dense_index)


class Store(Protocol):
    """What the pipeline asks of a store (see the module docstring)."""

    kind: str

    @property
    def has_dense(self) -> bool:
        """True when the store holds dense vectors."""

    def bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        """Per text, the top `depth` BM25 candidates (chunks sharing a query term)."""

    def bm25_tied(self, texts: Sequence[str], n: int) -> list[Ranking]:
        """Per text, the top `n` BM25 candidates and every further one whose score ties the
        n-th's in single precision (the tie rule's comparison, `fusion.with_ties`)."""

    def dense(self, vectors: np.ndarray, depth: int) -> list[Ranking]:
        """Per query vector, the top `depth` chunks by best-window (MaxP) cosine."""

    def bm25_scores(self, query: str, positions: np.ndarray) -> np.ndarray:
        """BM25 scores of the chunks at `positions` (for the offline reranker)."""

    def maxp_scores(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Best-window cosine of the chunks at `positions` (for the offline reranker)."""

    def record(self) -> dict:
        """What index.json records of the store (never a token)."""


def get_store(spec: str | StoreSpec | None):
    """The store class for `spec` (`memory` or `milvus`), for `Pipeline.save` / `load`."""
    kind = parse_store(spec).kind
    if kind == "milvus":
        from ragkit.stores.milvus import MilvusStore
        return MilvusStore
    from ragkit.stores.memory import MemoryStore
    return MemoryStore
