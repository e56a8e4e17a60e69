"""The embedding cache for contextual embedders, whose chunk vectors depend on the document.

What it is: `CachedContextualEmbedder`, a `CachedEmbedder` that also has `embed_documents`.
A chunk's vector is keyed by (embedder, "document-in-context", sha256 of the document's whole
chunk list, chunk position), so a vector is reused only when the same chunk sits in the
same document; a document with any chunk missing is sent again whole, since its chunks are
embedded together. Documents are sent in groups of `batch_size` and committed after each
group, so an interrupted build resumes where it stopped. Flat `embed` calls (questions)
use the ordinary per-text cache.

What it is not: a cache of parts of documents — an edited document is embedded again.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from ragkit.embed.cache import CachedEmbedder, cache_key, prepare
from ragkit.errors import Interrupted, PartialResults
from ragkit.progress import progress_bar

IN_CONTEXT = "document-in-context"
DOCUMENTS_PER_COMMIT = 32


class CachedContextualEmbedder(CachedEmbedder):
    """`CachedEmbedder` plus cached `embed_documents` (see module docstring)."""

    def embed_documents(self, documents: Sequence[Sequence[str]], *,
                        progress: bool = False) -> list[np.ndarray]:
        """One (len(chunks), dim) array per document; only uncached documents are sent."""
        keys = [self._keys(list(doc)) for doc in documents]
        with self._guard():
            return self._embed_documents(documents, keys, progress)

    def _embed_documents(self, documents: Sequence[Sequence[str]], keys: list[list[str]],
                         progress: bool) -> list[np.ndarray]:
        db = self._connect()
        found = self._lookup(db, {k for doc in keys for k in doc})
        todo = [d for d, doc in enumerate(keys) if not all(k in found for k in doc)]
        if todo:
            prepare(self.inner)
        size = getattr(self.inner, "documents_per_call", DOCUMENTS_PER_COMMIT)  # batch APIs: all
        with progress_bar(total=len(todo), desc=f"embed {self.name}", unit="doc",
                          disable=not (progress and todo)) as bar:  # closed on Ctrl-C too
            for start in range(0, len(todo), size):
                group = todo[start:start + size]
                try:
                    vectors = self.inner.embed_documents([list(documents[d]) for d in group])
                except (PartialResults, Interrupted) as exc:  # whole documents are kept
                    self._keep_then_raise(db, [(k, v) for i, vs in exc.kept.items()
                                               for k, v in zip(keys[group[i]], vs, strict=True)],
                                          found, exc, f"the {len(exc.kept)} documents that came")
                self._keep(db, [(k, v) for d, vs in zip(group, vectors, strict=True)
                                for k, v in zip(keys[d], vs, strict=True)], found)
                bar.update(len(group))
        return [np.stack([found[k] for k in doc]) if doc else np.zeros((0, self.dim), np.float32)
                for doc in keys]

    def _keys(self, chunks: list[str]) -> list[str]:
        digest = hashlib.sha256(json.dumps(chunks).encode()).hexdigest()
        return [cache_key(self.name, self.fingerprint, self.max_tokens, IN_CONTEXT,
                          f"{digest}#{i}") for i in range(len(chunks))]
