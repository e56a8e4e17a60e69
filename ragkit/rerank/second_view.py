"""The offline reranker's second dense view: another model's best-window cosine per candidate.

What it is: `SecondView(pipeline)` scores candidates by their best-window cosine (MaxP) with
the query under a second, independently trained model reading the same (context + window)
texts the index's own embedder embedded (`ragkit.dense.window_texts`). Two models agree on a
relevant passage more often than on a distractor, so the pair ranks better than either.
Which model (`view_model`): "auto" (MiniLM, USE for Hangul) for an index built with any
embedder but MiniLM, and "e5-small" for a MiniLM (`minilm`, `auto`) index — always the other
family. The reranker shipped (`ragkit.rerank.offline`) was fitted with e5-small as the first
stage and "auto" as the second view; an `auto` index gets the roles swapped.

Why lazily: a chunk's windows are embedded the first time it is a candidate, kept in memory
by chunk position and in the shared embedding cache (`ragkit.embed.CachedEmbedder`), so an
index pays only for the chunks its queries reach — not a second pass over a million chunks —
and a later run reads them back from the cache. A first query over fresh chunks takes longer
(up to 150 candidates × their windows); `benchmarks/bench_rerank.py` reports warm and cold
latency.

What it is not: the first stage. It never adds a candidate; an index without dense vectors
(embedder none) has no windows and gets no second view.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragkit.dense import window_texts
from ragkit.embed import get_embedder
from ragkit.progress import unwatched_kernel

MODEL = "auto"  # the second view of every index but a MiniLM one
MINILM_FAMILY = ("auto", "minilm")  # registry names whose second view is e5-small
PROGRESS_TEXTS = 500  # windows embedded at once from which a progress bar is shown


def view_model(index_embedder: str | None) -> str:
    """The second view's registered embedder for an index built with `index_embedder`."""
    return "e5-small" if index_embedder in MINILM_FAMILY else MODEL


class SecondView:
    """Second-model MaxP of chunks of one pipeline's index (see the module docstring)."""

    def __init__(self, pipeline, embedder=None) -> None:
        """`embedder` (default: the cached registered `view_model` of the index's embedder)
        embeds windows and queries; windows are cut as the index cut them, by its embedder's
        token counts (by the view's own for an embedder that embeds whole documents)."""
        self.pipeline = pipeline
        self._embedder = embedder
        self._windows: dict[int, np.ndarray] = {}

    @property
    def embedder(self):
        if self._embedder is None:
            self._embedder = get_embedder(view_model(self.pipeline.config.embedder))
        return self._embedder

    def _measure(self):
        own = self.pipeline.embedder
        return self.embedder if hasattr(own, "embed_documents") else own

    def _fill(self, positions: Sequence[int]) -> None:
        """Embed the windows of the chunks at `positions` not yet held, in one call."""
        todo = [p for p in dict.fromkeys(positions) if p not in self._windows]
        if not todo:
            return
        chunks = self.pipeline.chunks
        texts, owners = window_texts(self._measure(), [chunks[p] for p in todo],
                                     self.pipeline.config.window)
        # a bar when it takes a while: a first query over fresh chunks embeds up to 150
        # candidates' windows (1,350 texts, about 30 s on two cores), and ran silently; only
        # outside a kernel no one watches (a notebook run by papermill kept the bar and its
        # timings); on a redirected stderr too: a 100-query run sat 4.5 minutes with no line
        shown = ({"progress": True} if len(texts) >= PROGRESS_TEXTS and not unwatched_kernel()
                 else {})
        vectors = self.embedder.embed(texts, input_type="document", **shown)
        bounds = np.searchsorted(owners, np.arange(1, len(todo)))  # owners ascend
        self._windows.update(zip(todo, np.split(vectors, bounds)))

    def scores(self, query: str, positions: Sequence[int]) -> np.ndarray:
        """Each chunk's best-window cosine with `query` under the view, in `positions` order."""
        if not len(positions):
            return np.zeros(0)
        self._fill([int(p) for p in positions])
        vector = self.embedder.embed([query], input_type="query")[0]
        return np.array([float((self._windows[int(p)] @ vector).max()) for p in positions])
