"""Delete documents from a built index and index new versions of them, without re-embedding
the rest.

What it is: `replace_documents(pipeline, documents, remove)` drops every chunk of the
documents in `remove` and of those in `documents`, chunks and embeds only `documents` (so a
changed file costs its own embeddings, not the corpus's), and refits BM25 over all chunks —
ragkit's BM25 weights depend on the whole corpus (N, average length, document frequencies),
so every chunk's weights change with any document. The result equals a fresh build of the
kept documents followed by the new ones. Save it as usual (`pipeline.save(folder, store)`);
on Milvus that writes a new collection and swaps it in (`ragkit.stores.milvus`).

What it is not: an in-place edit of a Milvus collection (see `MilvusStore.delete_document`
for deleting rows only), nor for parent–child indexes (rebuild those).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ragkit.dense import DenseIndex
from ragkit.documents import Document, RagkitError
from ragkit.lexical import BM25


def replace_documents(pipeline, documents: Sequence[Document], remove: Iterable[str] = (),
                      progress: bool = False):
    """A new in-memory Pipeline: `pipeline` without `remove` and with `documents` re-indexed."""
    from ragkit.pipeline import Pipeline
    if pipeline.store.kind != "memory":
        raise RagkitError("replace documents in the index built in memory (Pipeline.build), "
                          "then save it to the store; a loaded Milvus index has no weights")
    if pipeline.config.parent_child:
        raise RagkitError("replacing documents in a parent-child index is not supported; "
                          "rebuild it")
    gone = set(remove) | {d.id for d in documents}
    keep = [i for i, c in enumerate(pipeline.chunks) if c.doc_id not in gone]
    fresh = Pipeline.build(documents, pipeline.config, progress=progress,
                           embedder=pipeline._embedder if pipeline.dense is not None else None) \
        if documents else None
    chunks = [pipeline.chunks[i] for i in keep] + (fresh.chunks if fresh else [])
    if not chunks:
        raise RagkitError("no chunks left: the index would be empty")
    bm25 = BM25.fit([c.indexed_text for c in chunks], tokenizer=pipeline.config.tokenizer)
    dense = _merge(pipeline.dense, keep, fresh.dense if fresh else None)
    return Pipeline(pipeline.config, chunks, bm25, dense, pipeline._embedder,
                    pipeline.embedder_record)


def _merge(old: DenseIndex | None, keep: list[int], new: DenseIndex | None) -> DenseIndex | None:
    """The kept chunks' windows (owners renumbered 0..) followed by the new chunks' windows."""
    if old is None:
        return None
    rows = np.flatnonzero(np.isin(old.owners, keep))
    renumber = np.full(old.n_chunks, -1, dtype=np.int64)
    renumber[keep] = np.arange(len(keep))
    vectors, owners = [old.vectors[rows]], [renumber[old.owners[rows]]]
    if new is not None:
        vectors.append(new.vectors)
        owners.append(new.owners + len(keep))
    return DenseIndex(np.concatenate(vectors), np.concatenate(owners))
