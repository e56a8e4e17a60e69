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

from collections.abc import Callable
from pathlib import Path

from ragkit.index_owner import owns_index
from ragkit.stores.base import (KINDS, SERVER_SCHEMES, Store, StoreSpec,  # noqa: F401
                                checked_uri, parse_store)
from ragkit.stores.memory import MemoryStore
from ragkit.stores.milvus import MilvusStore
from ragkit.stores.milvus_index import resumable


def index_target(store: str | None) -> Callable[[Path], bool]:
    """What `ragkit index --store STORE` may write over (`ragkit.atomic.check_target`): a
    ragkit index, and for a Milvus store also the folder an interrupted first build left
    (its Milvus Lite database holds the rows uploaded so far: the re-run resumes them)."""
    if (store or "memory").strip().partition(":")[0] != "milvus":
        return owns_index  # an index holding only what ragkit wrote (else names the stranger)
    return resumable


def get_store(spec: str | StoreSpec | None):
    """The store class for `spec` (`memory` or `milvus`), for `Pipeline.save` / `load`."""
    kind = parse_store(spec).kind
    if kind == "milvus":
        return MilvusStore
    return MemoryStore
