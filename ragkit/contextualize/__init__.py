"""Contextualizers: write a short context for each chunk before it is indexed.

Anthropic's Contextual Retrieval article prepends 50–100 tokens that situate a chunk in
its document — company, period, section — to both the embedded text and the BM25 text. Here:

- `none`: no context (the baseline);
- `structural`: a deterministic context from the document's own structure (title,
  metadata, heading path, enclosing code symbols, opening line). Offline and free;
- `claude`: Claude writes each context with Anthropic's published prompt, the document
  prompt-cached (`ragkit.contextualize.claude`); offline, the stand-in answers.

A contextualizer maps (document, its chunks) to the same chunks with `context` filled in.
One may also offer `many(pairs, progress)` to see every document of a build at once (the
claude one does, for its progress bar and its per-run report).

Inside `ragkit.batch_journal.batching(...)` (`ragkit index --batch`), `claude` sends its
requests through Anthropic's Message Batches API at half price (`ragkit.contextualize.batch`).
It is a mode of the run, not of the index: the contexts, and the index, are the same.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ragkit.batch_journal import batch_options
from ragkit.contextualize.structural import structural_context, structural_contexts
from ragkit.documents import Chunk, Document, RagkitError

Contextualizer = Callable[[Document, Sequence[Chunk]], list[Chunk]]


def _none(doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    return [replace(chunk, context="") for chunk in chunks]


def _structural(doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    return [Chunk(c.id, c.doc_id, c.text, context, c.start, c.end, c.metadata)
            for c, context in zip(chunks, structural_contexts(doc, chunks))]


def _claude(model: str | None = None, prompt: str | None = None,
            before_send: Callable[[], None] | None = None) -> Contextualizer:
    # deferred: the Anthropic SDK, ~2 s
    from ragkit.contextualize.batch import BatchContextualizer, ClaudeContextualizer
    options = batch_options()
    if options is not None:
        return BatchContextualizer(model=model, prompt=prompt, options=options,
                                   before_send=before_send)
    return ClaudeContextualizer(model=model, prompt=prompt, before_send=before_send)


CONTEXTUALIZERS: dict[str, Contextualizer] = {"none": _none, "structural": _structural}
FACTORIES = {"claude": _claude}  # contextualizers that take options (model, prompt)


def get_contextualizer(name: str, model: str | None = None, prompt: str | None = None,
                       before_send: Callable[[], None] | None = None) -> Contextualizer:
    """The contextualizer registered under `name`; `model`, `prompt` and `before_send` are for
    `claude`: `before_send()` runs before each request it sends to the paid API (not one the
    call cache answers, nor the offline stand-in) and may stop it by raising — an index build
    checks there that its embedder has its key, before the first context is paid for."""
    if name in FACTORIES:
        return FACTORIES[name](model=model, prompt=prompt, before_send=before_send)
    try:
        return CONTEXTUALIZERS[name]
    except KeyError:
        known = [*CONTEXTUALIZERS, *FACTORIES]
        raise RagkitError(f"unknown contextualizer '{name}' "
                          f"(known: {', '.join(known)})") from None
