"""Where an index's searchable rows live: the `Store` interface the pipeline searches through.

What it is: two implementations of one small interface — `memory` (today's numpy arrays and
sparse matrix in the index folder, read whole into memory; the default) and `milvus` (the
same rows in a Milvus collection: Milvus Lite embedded in a `.db` file inside the index
folder, or a Milvus server / Zilliz Cloud by URI). A spec names one:

    memory                       the index folder's arrays (default)
    milvus                       Milvus Lite, file `milvus.db` inside the index folder
                                 (or $MILVUS_URI when that is set)
    milvus:http://HOST:19530     a Milvus server; the token is read from $MILVUS_TOKEN
    milvus:PATH.db               a Milvus Lite database at PATH.db (made absolute)

A URI (after `milvus:` or in $MILVUS_URI) is either a server URL (http, https, tcp, unix:)
or a Milvus Lite database path ending in `.db` (pymilvus's own rule); anything else is
refused in one line naming where it came from.

Every store answers the same questions in chunk ids and scores, best first, ties to the
lower chunk position, so `Pipeline.search`, fusion, the rerank stage and the offline
reranker's per-candidate features give the same rankings on either.

What it is not: a way to change how BM25 or dense scores are computed; a store holds the
weights and vectors the pipeline built and searches them.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

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


def index_target(store: str | None) -> Callable[[Path], bool]:
    """What `ragkit index --store STORE` may write over (`ragkit.atomic.check_target`): a
    ragkit index, and for a Milvus store also the folder an interrupted first build left
    (its Milvus Lite database holds the rows uploaded so far: the re-run resumes them)."""
    from ragkit.index_folder import owns_index
    if (store or "memory").strip().partition(":")[0] != "milvus":
        return owns_index  # an index holding only what ragkit wrote (else names the stranger)
    from ragkit.stores.milvus_index import resumable
    return resumable


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
