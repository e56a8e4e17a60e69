"""What every store shares: the parsed `--store` value and the interface the pipeline uses.

What it is: `StoreSpec` and `parse_store` (with `checked_uri`, the rule for a Milvus URI), and
the `Store` protocol. The store package (`ragkit.stores`) and its Milvus modules all need
these, so they live in this leaf, which imports no store implementation; import them from
`ragkit.stores` as before. The spec grammar and the search contract are described in
`ragkit.stores`.

What it is not: a store; `memory.py` and `milvus.py` are.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

import numpy as np

from ragkit.documents import RagkitError
from ragkit.ranking import Ranking
from ragkit.stores.milvus_schema import DENSE_INDEXES

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
    if dense_index not in DENSE_INDEXES:
        raise RagkitError(f"unknown Milvus dense index {dense_index!r} "
                          f"(known: {', '.join(DENSE_INDEXES)})")
    if uri:
        return StoreSpec("milvus", checked_uri(uri, f"store {text!r}"), dense_index)
    env = os.environ.get("MILVUS_URI", "").strip()
    return StoreSpec("milvus", checked_uri(env, f"MILVUS_URI={env!r}") if env else None,
                     dense_index)


SERVER_SCHEMES = ("http", "https", "tcp")


def checked_uri(uri: str, source: str) -> str:
    """`uri` when it is a Milvus server URL; a Milvus Lite database path (ends in `.db`)
    made absolute, so index.json finds it from any working folder; anything else refused,
    naming `source` (the variable or the `--store` value it came from)."""
    parsed = urlparse(uri)
    if (parsed.scheme.lower() in SERVER_SCHEMES and parsed.netloc) or uri.startswith("unix:"):
        return uri
    if uri.endswith(".db") and not parsed.netloc:
        return os.path.abspath(os.path.expanduser(uri))
    raise RagkitError(f"{source}: neither a Milvus server URL (http://HOST:19530, https://, "
                      f"tcp://, unix:) nor a Milvus Lite database path ending in .db")


class Store(Protocol):
    """What the pipeline asks of a store (see `ragkit.stores`)."""

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
