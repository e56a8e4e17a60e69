"""The rows ragkit writes into a Milvus collection, and their batched, resumable insertion.

What it is: `rows` turns an index's chunks, BM25 weights and dense windows into collection
rows (one per chunk and per further window; `milvus_schema` defines the fields) and
`ingest` inserts them in bounded batches, skipping ids already present, with a progress
bar. What it is not: the schema (`milvus_schema`) or the search side (`milvus`).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from scipy import sparse as sp

from ragkit.documents import Chunk
from ragkit.progress import progress_bar
from ragkit.stores import milvus_schema as ms

BATCH = 2_048  # rows per insert request (measured: see the README's Milvus table)
BATCH_BYTES = 16 << 20  # and about this many bytes, well under gRPC's 64 MB message limit


def rows(chunks: Sequence[Chunk], weights: sp.csr_matrix, dense) -> Iterator[dict[str, Any]]:
    """Collection rows in order: per chunk, its first row (chunk fields, BM25 weights) and
    one row per further dense window. `weights` is documents × terms."""
    owners = dense.owners if dense is not None else np.arange(len(chunks))
    window = 0
    for row, position in enumerate(owners):
        position = int(position)
        window = window + 1 if row and owners[row - 1] == position else 0
        chunk = chunks[position]
        item: dict[str, Any] = {"pk": f"{chunk.id}#{window}", "chunk_id": chunk.id,
                                "doc_id": chunk.doc_id, "position": position,
                                "window": window, "start": 0, "end": 0, "text": "",
                                "context": "", "lexical": "", "metadata": {},
                                "sparse": {ms.PLACEHOLDER: ms.PLACEHOLDER_WEIGHT}}
        if window == 0:
            lo, hi = weights.indptr[position], weights.indptr[position + 1]
            # a weight of exactly 0 (a term in half the chunks) is still a match: Milvus
            # drops zeros, so it is stored as ZERO and read back as 0 (`_ranking`); a
            # negative one (a corpus of a few chunks that all share their words: Okapi's
            # floored IDF is below 0) is refused by Milvus, so it is stored as 0 too
            terms = dict(zip(weights.indices[lo:hi].tolist(),
                             (w if w > 0 else ms.ZERO for w in weights.data[lo:hi].tolist())))
            item.update(start=chunk.start, end=chunk.end, text=chunk.text,
                        context=chunk.context, lexical=chunk.indexed_text,
                        metadata=chunk.metadata,
                        sparse=terms or item["sparse"])
        if dense is not None:
            item["vector"] = dense.vectors[row].tolist()
        yield item


def ingest(client, collection: str, items: Iterator[dict[str, Any]], total: int,
           batch: int = BATCH, progress: bool = True, resume: bool = True) -> int:
    """Insert `items` in batches of at most `batch` rows and about BATCH_BYTES, skipping
    ids already present (`resume`; a collection just created has none to look up).

    Returns how many rows were inserted (0 when a finished build is run again)."""
    inserted = 0
    pending: list[dict[str, Any]] = []
    size = 0
    with progress_bar(total=total, desc=f"milvus {collection}", unit="row",
                      disable=not progress, leave=False) as bar:  # closed on Ctrl-C too
        for item in items:
            pending.append(item)
            size += _row_bytes(item)
            if len(pending) >= batch or size >= BATCH_BYTES:
                inserted += _insert_new(client, collection, pending, resume)
                bar.update(len(pending))
                pending, size = [], 0
        if pending:
            inserted += _insert_new(client, collection, pending, resume)
            bar.update(len(pending))
    return inserted


def _row_bytes(item: dict[str, Any]) -> int:
    """A row's rough request size: its strings, 12 bytes a sparse term, 4 a float."""
    return (len(item["text"]) + len(item["context"]) + len(item["lexical"]) + 64
            + 12 * len(item["sparse"]) + 4 * len(item.get("vector", ())))


def _insert_new(client, collection: str, batch: list[dict[str, Any]], resume: bool) -> int:
    new = batch
    if resume:
        present = {r["pk"] for r in client.query(collection, ids=[r["pk"] for r in batch],
                                                 output_fields=["pk"])}
        new = [r for r in batch if r["pk"] not in present]
    if new:
        client.insert(collection, new)
    return len(new)
