"""The interface every dense embedder follows, below the registry and the caches.

What it is: the `Embedder` protocol, `ContextualEmbedder` (an embedder whose chunk vectors
depend on the whole document), and `fingerprint_of`. `ragkit.embed` (the registry),
`ragkit.embed.cache` and `ragkit.embed.contextual` all build on these, so they live in this
leaf, which imports no other part of ragkit. Import them from `ragkit.embed` as before.

What it is not: an embedder; the models are `minilm.py`, `use_multilingual.py`, `voyage.py`.

An embedder may also have `prepare()`: what its first request needs (Voyage: the key and
its client), made ready before a cache shows a progress bar for the texts it must send, so a
missing key is one line rather than a line after a bar; a cache holding every vector asked
for never calls it. An index build also calls it before a paid contextualizer's first request
to Claude (`Pipeline.build`): new contexts mean new texts to embed, and a missing key found
after them left the contexts paid for and no index. A cached embedder's `prepare_for(texts)`
calls it unless the cache holds `texts`: a build asks with its first chunk's windows before
measuring the rest (`ragkit.dense`), a minute for 100,000 chunks under a bar.

Limits: `fingerprint` identifies the exact weights; an embedder without that attribute
(written before it existed) is identified by its `name` alone — see `fingerprint_of` — so
changing its weights under the same name is not detected.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id used in cache keys, e.g. "minilm-l6-v2"
    dim: int
    max_tokens: int  # longer inputs are truncated
    fingerprint: str  # identifies the exact weights, e.g. the sha256 of the weights file

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32 array of L2-normalised rows, in input order."""
        ...

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text, special tokens included, before truncation."""
        ...


def fingerprint_of(embedder: Embedder) -> str:
    """`embedder.fingerprint`, or its `name` for an embedder that has no fingerprint."""
    return getattr(embedder, "fingerprint", None) or embedder.name


@runtime_checkable
class ContextualEmbedder(Embedder, Protocol):
    """An embedder whose chunk vectors depend on the chunk's whole document (voyage-context-3).

    `embed_documents` takes each document's chunks in order and returns one vector per chunk,
    so callers must send whole documents, not windows; queries still go through `embed` with
    `input_type="query"`.
    """

    def embed_documents(self, documents: Sequence[Sequence[str]], *,
                        progress: bool = False) -> list[np.ndarray]:
        """One (len(chunks), dim) float32 array of L2-normalised rows per document."""
        ...
