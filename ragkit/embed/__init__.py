"""Dense text embedders: one interface, a registry by name, and an on-disk cache.

What it is: the `Embedder` protocol every dense embedder follows, and `get_embedder(name)`,
which builds one and (by default) wraps it in `CachedEmbedder` so each text is embedded once
per machine. The offline default is "minilm" (all-MiniLM-L6-v2 in numpy, see `minilm.py`).

What it is not: an index. Top-k search over the vectors, and MaxP scoring of long texts split
into windows, live in `ragkit.dense`.

Limits: an embedder truncates at `max_tokens` word-pieces; use `token_lengths()` to size
windows below it. `fingerprint` identifies the exact weights; an embedder without that
attribute (written before it existed) is identified by its `name` alone — see
`fingerprint_of` — so changing its weights under the same name is not detected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ragkit.documents import RagkitError
from ragkit.embed.cache import CachedEmbedder, default_cache_path

__all__ = ["Embedder", "CachedEmbedder", "EMBEDDERS", "get_embedder", "default_cache_path",
           "fingerprint_of"]


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


def _minilm() -> Embedder:
    from ragkit.embed.minilm import MiniLM
    return MiniLM()


# name -> factory; other embedders (e.g. Voyage) register here.
EMBEDDERS: dict[str, Callable[[], Embedder]] = {"minilm": _minilm}


def get_embedder(name: str = "minilm", *, cache: bool | str | Path = True) -> Embedder:
    """Build the embedder registered as `name`.

    Args:
        name: a key of `EMBEDDERS` ("minilm" is the offline default).
        cache: True wraps it in a `CachedEmbedder` at `default_cache_path()`; a path uses
            that sqlite file instead; False returns the bare embedder.
    Returns:
        An object following the `Embedder` protocol.
    """
    if name not in EMBEDDERS:
        known = ", ".join(sorted(EMBEDDERS))
        raise RagkitError(f"unknown embedder {name!r}; known embedders: {known}")
    inner = EMBEDDERS[name]()
    if cache is False:
        return inner
    return CachedEmbedder(inner, default_cache_path() if cache is True else Path(cache))
