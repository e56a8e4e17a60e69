"""Delete documents from a built index and index new versions of them, without re-embedding
the rest.

What it is: `replace_documents(pipeline, documents, remove)` drops every chunk of the
documents in `remove` and of those in `documents`, chunks and embeds only `documents` (so a
changed file costs its own embeddings, not the corpus's), and refits BM25 over all chunks —
ragkit's BM25 weights depend on the whole corpus (N, average length, document frequencies),
so every chunk's weights change with any document. The result equals a fresh build of the
kept documents followed by the new ones. Save it as usual (`pipeline.save(folder, store)`);
on Milvus that writes a new collection and swaps it in (`ragkit.stores.milvus`).

`update_index(pipeline, documents)` (`ragkit index --update`) finds which documents were
added, changed or removed since the index was built and does that, in the documents' order.
A document whose file is there but could not be opened now (`--skip-bad` left it out, its
permissions, say: `ragkit.loaded_folder.Skipped.unreadable`) keeps its indexed version, with
a warning naming it, rather than being removed as if the file were gone.
On an index whose contexts Claude wrote, a document whose chunks changed in metadata alone
(its title, say) keeps its contexts and vectors: Claude never read the title, so asking again
would send the same requests (`relabelled`).

What it is not: an in-place edit of a Milvus collection (see `MilvusStore.delete_document`
for deleting rows only), nor for parent–child indexes (rebuild those).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from ragkit.dense import DenseIndex
from ragkit.documents import Chunk, Document, RagkitError, RagkitWarning
from ragkit.lexical import BM25
from ragkit.loaded_folder import in_folder_order, kept_in_index, kept_note
from ragkit.pipeline import Pipeline
from ragkit.prepare import contextualized_chunks


def replace_documents(pipeline, documents: Sequence[Document], remove: Iterable[str] = (),
                      progress: bool = False, order: Sequence[str] | None = None):
    """A new in-memory Pipeline: `pipeline` without `remove` and with `documents` re-indexed.

    `order` (document ids) puts the chunks in that document order, as a fresh build of the
    documents in that order would (ties rank by chunk position); default: kept, then new."""
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
    dense = _merge(pipeline.dense, keep, fresh.dense if fresh else None)
    if order is not None:
        rank = {doc_id: i for i, doc_id in enumerate(order)}
        perm = sorted(range(len(chunks)), key=lambda i: rank.get(chunks[i].doc_id, len(rank)))
        chunks, dense = [chunks[i] for i in perm], _permute(dense, perm)
    bm25 = BM25.fit([c.indexed_text for c in chunks], tokenizer=pipeline.config.tokenizer)
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


def _permute(dense: DenseIndex | None, perm: list[int]) -> DenseIndex | None:
    """`dense` with chunk perm[j] moved to position j, its windows kept in order."""
    if dense is None:
        return None
    new_pos = np.empty(len(perm), dtype=np.int64)
    new_pos[np.asarray(perm, dtype=np.int64)] = np.arange(len(perm))
    owners = new_pos[dense.owners]
    rows = np.lexsort((np.arange(len(owners)), owners))
    return DenseIndex(dense.vectors[rows], owners[rows])


def changed_documents(pipeline, documents: Sequence[Document],
                      chunks: Sequence[Chunk] | None = None) -> tuple[list[Document], list[str]]:
    """(documents added or whose chunks changed, ids of indexed documents no longer given).

    A document is unchanged when it chunks and contextualizes to exactly the chunks in the
    index. The claude contextualizer is not re-run for this (it costs API calls): with it,
    a document is unchanged when its chunks without their contexts are the same — text,
    offsets and metadata (the title, section, pages) — see `relabelled` for those that
    differ in metadata alone.
    """
    config = pipeline.config
    if config.contextualizer == "claude":
        config = replace(config, contextualizer="none")
    key = ((lambda c: replace(c, context="")) if config is not pipeline.config
           else (lambda c: c))
    now, before = _now_and_before(pipeline, documents, chunks, config, key)
    changed = [d for d in documents if now.get(d.id) != before.get(d.id)]
    given = {d.id for d in documents}
    return changed, [doc_id for doc_id in before if doc_id not in given]


def stale_documents(pipeline, documents: Sequence[Document],
                    chunks: Sequence[Chunk] | None = None) -> list[Document]:
    """Of `documents` the index holds, those it holds an older text of: they chunk now to
    other text or offsets (a file edited since the build). What `eval --index` refuses: a
    span is placed in the document's text and judged by the chunks' offsets
    (`ragkit.evaluate.judge`), so an edited document was scored by its old chunks against
    its new text. Unlike `changed_documents`, a change of metadata or context alone (a title,
    or a path that a JSONL export of the folder left out) is not stale: the spans still land
    in the chunks that hold them. Chunks without contexts: no Claude call, no embedding."""
    now, before = _now_and_before(pipeline, documents, chunks,
                                  replace(pipeline.config, contextualizer="none"),
                                  lambda c: (c.id, c.text, c.start, c.end))
    return [d for d in documents if d.id in before and now.get(d.id) != before[d.id]]


def relabelled(pipeline, changed: Sequence[Document]) -> dict[str, list[Chunk]]:
    """Of the `changed` documents of an index whose contexts Claude wrote, those whose chunks
    differ from the index's in metadata alone (e.g. a new title): doc id → the new chunks,
    each with the context the index holds for it.

    Why: Claude's request holds the document's text and the chunk, never its title or
    metadata (`ragkit.contextualize.claude.build_request`), so those contexts still hold;
    the chunk's indexed text (context + text) is unchanged, hence its BM25 row and vectors
    too. Such a document is updated without a request to Claude (whatever the call cache
    holds) and without embedding anything. Not for other contextualizers (the structural
    one writes the title into the context) nor parent-child indexes (rebuilt instead)."""
    if pipeline.config.contextualizer != "claude" or pipeline.config.parent_child:
        return {}
    config = replace(pipeline.config, contextualizer="none")
    probe, _ = contextualized_chunks(changed, config)
    now = _by_doc(probe, lambda c: c)
    before = _by_doc(pipeline.chunks, lambda c: c)
    out = {}
    for doc_id, fresh in now.items():
        old = before.get(doc_id, [])
        if [_place(c) for c in fresh] == [_place(c) for c in old]:
            out[doc_id] = [replace(c, context=o.context) for c, o in zip(fresh, old)]
    return out


def _place(chunk: Chunk) -> tuple:
    """What a chunk's context and indexed text depend on: its id, text and offsets."""
    return chunk.id, chunk.text, chunk.start, chunk.end


def _now_and_before(pipeline, documents: Sequence[Document], chunks: Sequence[Chunk] | None,
                    config, key) -> tuple[dict[str, list], dict[str, list]]:
    """Doc id → `key` of each chunk: of `documents` chunked now under `config` (no
    embedding), and of the index's chunks — what `changed_documents` and `stale_documents`
    compare, each by its own key."""
    probe, _ = contextualized_chunks(documents, config, chunks)
    return _by_doc(probe, key), _by_doc(pipeline.chunks, key)


def _by_doc(chunks: Sequence[Chunk], key) -> dict[str, list]:
    out: dict[str, list] = {}
    for chunk in chunks:
        out.setdefault(chunk.doc_id, []).append(key(chunk))
    return out


def update_index(pipeline, documents: Sequence[Document], chunks: Sequence[Chunk] | None = None,
                 progress: bool = False):
    """(`pipeline` brought up to `documents`, changed, removed): re-indexes only the added and
    changed documents, drops the removed ones, chunks in `documents` order; (None, [], [])
    when nothing changed. A Milvus-backed index is read back (chunks and window vectors).
    An indexed document whose file `documents` (a `Loaded`) could not open now is kept as it
    is, with a `RagkitWarning` naming it (`ragkit.loaded_folder.kept_in_index`)."""
    if chunks is not None:  # given chunks (a data set's own): index exactly those
        raise RagkitError("updating an index of a data set with its own chunks is not "
                          "supported; rebuild it")
    changed, removed = changed_documents(pipeline, documents)
    kept = kept_in_index(removed, documents)  # there, but unreadable now: not removed
    if kept:
        warnings.warn(kept_note(kept), RagkitWarning, stacklevel=2)
        held = set(kept)
        removed = [doc_id for doc_id in removed if doc_id not in held]
    if not changed and not removed:
        return None, [], []
    if pipeline.store.kind != "memory":
        pipeline = Pipeline(pipeline.config, pipeline.chunks, pipeline.bm25,
                            pipeline.store.window_vectors(), pipeline._embedder,
                            pipeline.embedder_record)
    relabel = relabelled(pipeline, changed)
    if relabel:  # same indexed text: the same BM25 and vectors, new metadata
        fresh = {c.id: c for doc_chunks in relabel.values() for c in doc_chunks}
        pipeline = Pipeline(pipeline.config, [fresh.get(c.id, c) for c in pipeline.chunks],
                            pipeline.bm25, pipeline.dense, pipeline._embedder,
                            pipeline.embedder_record)
    rest = [d for d in changed if d.id not in relabel]  # BM25 is refitted all the same
    order = in_folder_order([d.id for d in documents], kept)  # where a build puts them
    new = replace_documents(pipeline, rest, removed, progress, order)
    return new, changed, removed

