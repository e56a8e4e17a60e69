"""Contextualizers: write a short context for each chunk before it is indexed.

Anthropic's Contextual Retrieval (seed 002) prepends 50–100 tokens that situate a chunk in
its document — company, period, section — to both the embedded text and the BM25 text. Here:

- `none`: no context (the baseline);
- `structural`: a deterministic context from the document's own structure (title,
  metadata, heading path, enclosing code symbols, opening line). Offline and free.

A contextualizer maps (document, its chunks) to the same chunks with `context` filled in.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ragkit.contextualize.structural import structural_context
from ragkit.documents import Chunk, Document, RagkitError

Contextualizer = Callable[[Document, Sequence[Chunk]], list[Chunk]]


def _none(doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    return [replace(chunk, context="") for chunk in chunks]


def _structural(doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    return [replace(chunk, context=structural_context(doc, chunk)) for chunk in chunks]


CONTEXTUALIZERS: dict[str, Contextualizer] = {"none": _none, "structural": _structural}


def get_contextualizer(name: str) -> Contextualizer:
    """The contextualizer registered under `name`."""
    try:
        return CONTEXTUALIZERS[name]
    except KeyError:
        raise RagkitError(f"unknown contextualizer '{name}' "
                          f"(known: {', '.join(CONTEXTUALIZERS)})") from None
