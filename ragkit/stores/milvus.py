"""The Milvus store: an index's chunks, BM25 weights and dense windows in a Milvus collection.

What it is: the same searches as the memory store, answered by Milvus — Milvus Lite (a
`milvus.db` file inside the index folder, no server) or a Milvus server / Zilliz Cloud by URI,
with the same code. Stored per chunk: id, doc id, text, context, metadata, start/end, and
(a) ragkit's own BM25 weights as a sparse vector searched by inner product with the query's
term counts — rank-bm25 adds a repeated query term once per repeat, so this is exactly
ragkit's BM25, to float32 precision — plus (b) the context + text analysed by Milvus's
built-in BM25 function (`builtin_bm25`, reported, not used by `search`); per window, its dense
vector (FLAT = exact by default; HNSW or IVF_FLAT as an option), searched with
`group_by_field="chunk_id"` so a chunk scores by its best window (MaxP), as `DenseIndex` does.
Results are re-sorted by (score, chunk position), the tie rule of the memory store.

The index folder keeps index.json (store, collection, counts), the BM25 vocabulary and idf
(`bm25-KEY/`, to turn a query into term ids) and parents.jsonl of a parent–child index.

Writing (`save`) goes into a new collection named after the build's content, in batches of
at most `batch` rows with a progress bar; rows already there are skipped by id, so an
interrupted build resumes where it stopped. Only when every row is in does index.json name
the new collection, the alias `BASE` move to it, and the previous collection get dropped —
a failed build leaves the previous index answering as before.

What it is not: incremental BM25. ragkit's weights depend on corpus statistics (N, avgdl, df),
so changing a document changes every chunk's weights: `replace_documents` re-fits and rewrites.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse as sp

from ragkit.dense import DenseIndex
from ragkit.documents import Chunk
from ragkit.fusion import with_ties
from ragkit.lexical import BM25
from ragkit.ranking import Ranking
from ragkit.stale_temp import remove_stale
from ragkit.stores import milvus_schema as ms
from ragkit.stores.base import StoreSpec

LITE_FILE = "milvus.db"
_VOCABULARY_TEMP = re.compile(r"\.(bm25-\w+)\.(new|old)-")  # `ragkit.stale_temp` names
_FIELDS = ["chunk_id", "doc_id", "position", "start", "end", "text", "context", "metadata"]
_NO_TERMS = ms.PLACEHOLDER - 1  # the sparse query of a text with no known term
QUERY_BATCH = 64  # queries per search request


class MilvusStore:
    """Searches one ragkit collection (see the module docstring)."""

    kind = "milvus"

    def __init__(self, client, uri: str, collection: str, chunks: Sequence[Chunk], bm25,
                 dim: int | None, dense_index: str = "FLAT", record_uri: str | None = None,
                 rows: int | None = None):
        self.client, self.uri, self.collection = client, uri, collection
        self.chunks, self.bm25_model, self.dim = chunks, bm25, dim
        self.dense_index, self.record_uri = dense_index, record_uri
        # one row per chunk: no grouping needed (Lite's group_by costs ~5x per query)
        self.grouped = rows is None or rows != len(chunks)

    # ------------------------------------------------------------------ searches
    @property
    def has_dense(self) -> bool:
        return bool(self.dim)

    def query_vector(self, text: str) -> dict[int, float]:
        """The query's term counts by vocabulary id (rank-bm25 counts repeats)."""
        return {int(t): float(n) for t, n in Counter(self.bm25_model._query_ids(text)).items()}

    def _search(self, data: list, field: str, depth: int, params: dict, **extra) -> list:
        """Up to QUERY_BATCH queries per request: Milvus Lite 3.2.2 walks every row in
        Python once per request (dedup and delete masks), so a batch shares that walk —
        at 20k rows 23 against 51 ms a BM25 query, 1.7 against 34 ms a dense one."""
        out: list = []
        for lo in range(0, len(data), QUERY_BATCH):
            out.extend(self.client.search(self.collection, data=data[lo:lo + QUERY_BATCH],
                                          anns_field=field, limit=min(depth, ms.MAX_TOPK),
                                          search_params=params, output_fields=["position"],
                                          **extra))
        return out

    def _ranking(self, hits, sign: float = 1.0) -> Ranking:
        """(chunk id, score) best first, ties to the lower chunk position (memory's rule)."""
        rows = sorted((-_snap(sign * float(np.float32(h["distance"]))),
                       int(h["entity"]["position"])) for h in hits)
        return [(self.chunks[pos].id, -score) for score, pos in rows]

    def bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        queries = [self.query_vector(t) for t in texts]
        asked = [q for q in queries if q]
        found = iter(self._search(asked, "sparse", depth, {"metric_type": "IP"})
                     if asked else [])
        return [self._ranking(next(found)) if q else [] for q in queries]

    def bm25_tied(self, texts: Sequence[str], n: int) -> list[Ranking]:
        return with_ties(self.bm25, texts, n)

    def dense(self, vectors: np.ndarray, depth: int) -> list[Ranking]:
        data = np.asarray(vectors, dtype=np.float32).tolist()
        extra = {"group_by_field": "chunk_id"} if self.grouped else {}
        hits = self._search(data, "vector", depth, ms.search_params(self.dense_index, depth),
                            **extra)
        return [self._ranking(h) for h in hits]

    def builtin_bm25(self, texts: Sequence[str], depth: int) -> list[Ranking]:
        """Milvus's own BM25 (its analyzer, its statistics) over context + text; scores
        turned so higher = better. Not ragkit's BM25: its agreement is measured, not equal."""
        hits = self._search(list(texts), "builtin", depth, {"metric_type": "BM25"})
        return [self._ranking(h, ms.builtin_sign([x["distance"] for x in h])) for h in hits]

    def milvus_rrf(self, texts: Sequence[str], vectors: np.ndarray, depth: int, k: int,
                   rrf_k: int = 60) -> list[Ranking]:
        """Hybrid search fused by Milvus's RRFRanker (top `depth` per retriever, top k out).

        Milvus fuses rows, so a chunk's dense rank is its best window's rank among windows:
        equal to ragkit's RRF over chunks for one vector per chunk (windows ≥ chunk size).
        """
        from pymilvus import AnnSearchRequest, RRFRanker  # deferred: pymilvus, ~0.7 s to import
        results = []
        for text, vector in zip(texts, np.asarray(vectors, dtype=np.float32)):
            sparse_q = self.query_vector(text) or {_NO_TERMS: 1.0}
            requests = [AnnSearchRequest([vector.tolist()], "vector",
                                         ms.search_params(self.dense_index, depth), depth),
                        AnnSearchRequest([sparse_q], "sparse", {"metric_type": "IP"}, depth)]
            hits = self.client.hybrid_search(self.collection, requests, RRFRanker(rrf_k),
                                             limit=k, output_fields=["position"],
                                             group_by_field="chunk_id")
            results.append(self._ranking(hits[0]))
        return results

    def bm25_scores(self, query: str, positions: np.ndarray) -> np.ndarray:
        """Each chunk's BM25 score from its stored sparse row (the reranker's feature)."""
        counts = self.query_vector(query)
        if not counts or not len(positions):
            return np.zeros(len(positions))
        rows = self.client.query(self.collection, ids=[self._pk(p, 0) for p in positions],
                                 output_fields=["position", "sparse"])
        by_pos = {int(r["position"]): r["sparse"] for r in rows}
        return np.array([_snap(sum(n * float(by_pos[int(p)].get(t, 0.0))
                                   for t, n in counts.items())) for p in positions])

    def maxp_scores(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Each chunk's best-window cosine from its stored window vectors."""
        if not len(positions):
            return np.zeros(0)
        rows = self.client.query(self.collection, output_fields=["position", "vector"],
                                 filter=f"position in {[int(p) for p in positions]}")
        best: dict[int, float] = {}
        query = np.asarray(vector, dtype=np.float32)
        for row in rows:
            score = float(np.asarray(row["vector"], dtype=np.float32) @ query)
            pos = int(row["position"])
            best[pos] = max(best.get(pos, -np.inf), score)
        return np.array([best[int(p)] for p in positions], dtype=np.float64)

    def window_vectors(self):
        """Every row's vector as a `DenseIndex` (None in a BM25-only index): what an update
        needs to keep the unchanged chunks' vectors without re-embedding them."""
        if not self.dim:
            return None
        rows: list[tuple[int, int, list]] = []
        for lo in range(0, len(self.chunks), 1000):
            rows += [(int(r["position"]), int(r["window"]), r["vector"]) for r in
                     self.client.query(self.collection, output_fields=["position", "window",
                                                                       "vector"],
                                       filter=f"position >= {lo} and position < {lo + 1000}")]
        rows.sort(key=lambda r: (r[0], r[1]))
        return DenseIndex(np.asarray([r[2] for r in rows], dtype=np.float32),
                          np.asarray([r[0] for r in rows], dtype=np.int64))

    def _pk(self, position: int, window: int) -> str:
        return f"{self.chunks[position].id}#{window}"

    def record(self) -> dict[str, Any]:
        return {"kind": "milvus", "uri": self.record_uri, "collection": self.collection,
                "dense_index": self.dense_index}

    def count(self) -> int:
        """Rows in the collection (windows, or chunks in a BM25-only index)."""
        return ms.count_rows(self.client, self.collection)

    def delete_document(self, doc_id: str) -> int:
        """Delete every row of document `doc_id`; returns how many rows went."""
        before = self.count()
        self.client.delete(self.collection, filter=f"doc_id == {json.dumps(doc_id)}")
        return before - self.count()


def _snap(score: float) -> float:
    """A score made only of ZERO placeholders (|s| < 1e-20) is the 0 it stands for."""
    return 0.0 if abs(score) < 1e-20 else score


# ---------------------------------------------------------------------------- where

def locate(folder: Path, spec_uri: str | None) -> tuple[str, str | None]:
    """(URI to connect to, URI to record): Lite → folder/milvus.db, recorded as None."""
    if spec_uri is None:
        return str(folder / LITE_FILE), None
    return spec_uri, spec_uri


def base_name(folder: Path, lite: bool) -> str:
    """The alias an index answers under, and its collections' prefix: `ragkit` in the index's
    own Lite file; on a server or a shared Lite file `ragkit_FOLDER_PATHHASH` — the folder's
    name and a hash of its absolute path, so two index folders of one name (a/idx, b/idx)
    never share a collection: rebuilding one dropped the other's rows."""
    if lite:
        return "ragkit"
    where = folder.resolve()
    mark = hashlib.sha256(os.fsencode(where)).hexdigest()[:8]
    name = re.sub(r"\W", "_", where.name, flags=re.ASCII)[:100] or "index"
    return f"ragkit_{name}_{mark}"


# ---------------------------------------------------------------------------- folder

def bm25_model(bm25):
    """A copy of `bm25` without postings: the vocabulary, idf and lengths a query needs."""
    model = BM25(k1=bm25.k1, b=bm25.b, epsilon=bm25.epsilon, tokenizer=bm25.tokenizer_name)
    model.vocabulary, model.idf, model.doc_len, model.avgdl = (
        bm25.vocabulary, bm25.idf, bm25.doc_len, bm25.avgdl)
    model.weights = sp.csr_matrix(bm25.weights.shape)
    return model


def drop_old(client, folder: Path, old: dict[str, Any] | None, keep: str,
             own_lite: bool = False) -> None:
    """After a swap: drop the previous collection and its vocabulary folder (and the
    temporary vocabulary folders of builds killed while writing them). In the index's
    own Milvus Lite file (`own_lite`) every other ragkit collection goes too: the partial
    builds of interrupted runs that were never resumed. Not on a server, where other
    folders' indexes may share the name prefix."""
    if old and old.get("collection") not in (None, keep) and client.has_collection(
            old["collection"]):
        client.drop_collection(old["collection"])
    if own_lite:
        for name in client.list_collections():
            if name != keep and name.startswith(base_name(folder, True) + "_"):
                client.drop_collection(name)
    for path in folder.glob("bm25-*"):
        if path.name != f"bm25-{keep.rsplit('_', 1)[-1]}":
            shutil.rmtree(path, ignore_errors=True)
    for name in {m.group(1) for m in map(_VOCABULARY_TEMP.match, os.listdir(folder)) if m}:
        remove_stale(folder / name)  # what a build killed while writing it left


def token() -> str | None:
    """The server token, from $MILVUS_TOKEN (never written anywhere)."""
    return os.environ.get("MILVUS_TOKEN") or None


def spec_of(record: dict[str, Any]) -> StoreSpec:
    return StoreSpec("milvus", record.get("uri"), record.get("dense_index", "FLAT"))
