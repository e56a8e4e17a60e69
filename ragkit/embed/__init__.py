"""Dense text embedders: one interface, a registry by name, and an on-disk cache.

What it is: the `Embedder` protocol every dense embedder follows, and `get_embedder(name)`,
which builds one and (by default) wraps it in `CachedEmbedder` so each text is embedded once
per machine. The offline default (`ragkit.config.DEFAULT_EMBEDDER`) is "e5-small":
multilingual-e5-small (4-bit weights unpacked to fp32, on ONNX Runtime; `e5.py`), one model
for all languages, installed with `ragkit models install e5-small` (`make setup` does it); why it
is the default is measured in `ragkit.rerank.offline`. "auto", the default before it, is
all-MiniLM-L6-v2 on ONNX Runtime (`minilm.py`) for most text and USE multilingual v3
(`use_multilingual.py`) for Hangul text, because MiniLM is English-only (`routed.py`); it is
also the offline reranker's second view of an e5 index. Voyage's API models are `voyage:MODEL` and
`voyage-context:voyage-context-3` (`voyage.py`); a contextual embedder also has
`embed_documents` (see `ContextualEmbedder`) and is cached by `contextual.py`.

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

import numpy as np

from ragkit.config import DEFAULT_EMBEDDER
from ragkit.documents import RagkitError
from ragkit.embed.base import ContextualEmbedder, Embedder, fingerprint_of
from ragkit.embed.cache import CachedEmbedder, default_cache_path
from ragkit.embed.contextual import CachedContextualEmbedder
from ragkit.embed.e5 import E5Small
from ragkit.embed.minilm import MiniLM
from ragkit.embed.routed import ScriptRouted
from ragkit.embed.use_multilingual import USEMultilingual
from ragkit.batch_journal import batch_options
from ragkit.embed.voyage import VoyageContextEmbedder, VoyageEmbedder

__all__ = ["Embedder", "ContextualEmbedder", "CachedEmbedder", "EMBEDDERS", "EMBEDDER_PREFIXES",
           "get_embedder", "default_cache_path", "fingerprint_of"]


def _minilm() -> Embedder:
    return MiniLM()


def _e5_small() -> Embedder:
    """Checks the installed file now (a missing model is one line naming the install
    command); the file is parsed and the tokenizer built when a text needs them."""
    return E5Small()


def _use_multilingual() -> Embedder:
    """USE, loaded when a text must be embedded or measured (`_OnFirstUse`), so a search
    whose vectors are all cached (the offline reranker's second view) never loads it."""
    return _OnFirstUse(USEMultilingual)


class _OnFirstUse:
    """An embedder class's name, dim, max_tokens and fingerprint now; the model itself
    (USE: ~2.5 s to load) only when a text must be embedded or measured, so a cache that
    holds every vector asked for never loads it."""

    def __init__(self, cls: type) -> None:
        self._cls, self._model = cls, None
        self.name, self.dim, self.max_tokens = cls.name, cls.dim, cls.max_tokens
        self.fingerprint = cls.fingerprint
        self.truncates = getattr(cls, "truncates", True)

    def _loaded(self):
        if self._model is None:
            self._model = self._cls()
        return self._model

    def embed(self, texts: Sequence[str], **options) -> np.ndarray:
        return self._loaded().embed(texts, **options)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return self._loaded().token_lengths(texts)


def _auto(wrap: Callable[[Embedder], Embedder] = lambda e: e) -> Embedder:
    """MiniLM and USE behind the script router, each wrapped by `wrap` (e.g. its own cache,
    so `auto` and `minilm` share MiniLM's cached vectors)."""
    return ScriptRouted(wrap(MiniLM()), lambda: wrap(_OnFirstUse(USEMultilingual)),
                        dim=USEMultilingual.dim, name=USEMultilingual.name,
                        fingerprint=USEMultilingual.fingerprint)


def _voyage(model: str) -> Embedder:
    return VoyageEmbedder(model, batch=batch_options())  # Batch API inside `batching`


def _voyage_context(model: str) -> Embedder:
    return VoyageContextEmbedder(model, batch=batch_options())


# name -> factory. A model is loaded only when named (MiniLM's ONNX session, USE's vocabulary
# and the Voyage SDK on first use), so an unused backend costs nothing.
EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": _minilm,
    "auto": _auto,
    "use-multilingual": _use_multilingual,
    "e5-small": _e5_small,
}
# "PREFIX:MODEL" -> factory(MODEL), e.g. "voyage:voyage-3.5", "voyage-context:voyage-context-3".
EMBEDDER_PREFIXES: dict[str, Callable[[str], Embedder]] = {
    "voyage": _voyage,
    "voyage-context": _voyage_context,
}


def is_registered(name: str) -> bool:
    """True when `get_embedder(name)` builds it: a key of `EMBEDDERS`, or `PREFIX:MODEL` with
    a prefix of `EMBEDDER_PREFIXES` ("voyage:voyage-3.5"). An index whose embedder is
    registered can be searched without passing the embedder in code."""
    if name in EMBEDDERS:
        return True
    prefix, sep, model = name.partition(":")
    return bool(sep and model and prefix in EMBEDDER_PREFIXES)


def check_name(name: str) -> None:
    """RagkitError naming the known embedders unless `get_embedder(name)` builds one."""
    if not is_registered(name):
        known = ", ".join([*EMBEDDERS, *(f"{p}:MODEL" for p in EMBEDDER_PREFIXES)])
        raise RagkitError(f"unknown embedder {name!r}; known embedders: {known}")


def _build(name: str) -> Embedder:
    check_name(name)
    if name in EMBEDDERS:
        return EMBEDDERS[name]()
    prefix, _, model = name.partition(":")
    return EMBEDDER_PREFIXES[prefix](model)


def get_embedder(name: str = DEFAULT_EMBEDDER, *, cache: bool | str | Path = True) -> Embedder:
    """Build the embedder registered as `name`.

    Args:
        name: a key of `EMBEDDERS` ("e5-small", the offline default; "auto" routes Hangul
            text to "use-multilingual" and other text to "minilm", see `ragkit.embed.routed`) or
            `PREFIX:MODEL` with a prefix of `EMBEDDER_PREFIXES` ("voyage:voyage-3.5",
            "voyage-context:voyage-context-3"; these need VOYAGE_API_KEY).
        cache: True wraps it in a `CachedEmbedder` at `default_cache_path()`; a path uses
            that sqlite file instead; False returns the bare embedder.
    Returns:
        An object following the `Embedder` protocol.
    """
    if cache is False:
        return _build(name)
    path = default_cache_path() if cache is True else Path(cache)

    def wrap(inner: Embedder) -> Embedder:
        if hasattr(inner, "embed_documents"):
            return CachedContextualEmbedder(inner, path)
        return CachedEmbedder(inner, path)

    if name == "auto":  # cache each routed model on its own, not the router
        return _auto(wrap)
    return wrap(_build(name))
