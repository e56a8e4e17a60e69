"""Chunk → contextualize: the chunks an index of some documents holds, before any indexing.

What it is: `contextualized_chunks` — each document chunked (unless its chunks are given),
split into children for a parent–child index, and contextualized by the configured
contextualizer — shared by `Pipeline.build` and by `ragkit.update`, which compares these
chunks with an index's to find the documents that changed. What it is not: BM25 or vectors
(`ragkit.pipeline` fits and embeds them).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence


from ragkit.chunking import ChunkerConfig, chunk_children, chunk_document
from ragkit.config import IndexConfig
from ragkit.contextualize import get_contextualizer
from ragkit.document_checks import check_documents
from ragkit.documents import Chunk, Document
from ragkit.progress import progress_bar


def _with_children(pairs: list[tuple[Document, list[Chunk]]], config: IndexConfig
                   ) -> tuple[list[tuple[Document, list[Chunk]]], dict[str, Chunk]]:
    """Parent–child: each document's chunks → their children, and the parents by id."""
    if not config.parent_child:
        return pairs, {}
    small = ChunkerConfig(config.child_size, config.child_size // 8)
    parents = {c.id: c for _, chunks in pairs for c in chunks}
    return [(doc, chunk_children(doc, chunks, small)) for doc, chunks in pairs], parents


def contextualized_chunks(documents: Sequence[Document], config: IndexConfig,
                          chunks: Sequence[Chunk] | None = None, progress: bool = False,
                          before_send: Callable[[], None] | None = None
                          ) -> tuple[list[Chunk], dict[str, Chunk] | None]:
    """The chunks an index of `documents` holds (chunked unless `chunks` are given, children
    with parent–child, contextualized) and, with parent–child, child id → parent chunk.
    `before_send()` runs before each request a paid contextualizer sends (see
    `get_contextualizer`).

    No BM25 and no vectors: what `ragkit.update` compares against an index to find the
    documents that changed."""
    documents = list(documents)
    check_documents(documents)
    chunker = ChunkerConfig(config.chunk_size, config.overlap)
    contextualize = get_contextualizer(config.contextualizer, config.context_model,
                                       config.context_prompt, before_send)
    given: dict[str, list[Chunk]] = {}
    for chunk in chunks or ():
        given.setdefault(chunk.doc_id, []).append(chunk)
    pairs = [(doc, (given.get(doc.id) if chunks is not None
                    else chunk_document(doc, chunker)) or []) for doc in documents]
    pairs, parents = _with_children(pairs, config)
    if hasattr(contextualize, "many"):
        done = contextualize.many(pairs, progress=progress)
    else:
        # shown only when it lasts: a fast one showed 0/23 and vanished
        done = [contextualize(doc, doc_chunks) for doc, doc_chunks in
                progress_bar(pairs, desc="contextualize", disable=not progress, leave=False,
                             delay=0.5)]
    out: list[Chunk] = [chunk for doc_chunks in done for chunk in doc_chunks]
    del pairs, done  # the chunks before contextualizing, not kept beside their copies
    return out, ({c.id: parents[c.metadata["parent"]] for c in out} if parents else None)
