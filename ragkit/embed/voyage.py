"""Voyage AI embedders through the official `voyageai` SDK: `voyage:MODEL` and voyage-context-3.

What it is:
- `VoyageEmbedder(model)`: `Client.embed` with the model always named (the SDK falls back to
  the legacy voyage-2 when it is not) and `input_type="document"` for chunks, `"query"` for
  questions; texts are sent in batches within the model's per-call limits.
- `VoyageContextEmbedder("voyage-context-3")`: `Client.contextualized_embed`, where each
  inner list is one document's chunks in order and every chunk is embedded with the rest of
  its document as context — Voyage's answer to the problem contextual retrieval solves by
  prepending an LLM-written context. `embed_documents` is that call; `embed` sends each text
  as a one-chunk document (questions with `input_type="query"`).

Both check for `VOYAGE_API_KEY` (or the SDK's `VOYAGE_API_KEY_PATH`) before the first request
(`prepare`; the SDK fails only then, unclearly), not when built: a Voyage index is searched
without a key while the embedding cache holds every query vector asked for.
`VOYAGE_BASE_URL` (e.g. `http://127.0.0.1:8000/v1`, no trailing slash) points them at another
endpoint; the SDK itself has no such variable. Each request waits and retries within
`ragkit.online.budget()` (by default 3 attempts of up to 120 s each; the SDK retries a 429,
502-504 or timeout with exponential back-off); anything left over becomes one `RagkitError`
line (`ragkit.voyage.failure`), which never holds the key.

Batch mode (`batch` options, `ragkit index --embedder voyage:MODEL --batch`): documents go
through Voyage's Batch API at 33 % off (`ragkit.voyage_batch`), one request per text (per
document part for voyage-context-3), each request's custom_id a digest of the model, output
size, input type and text, so a killed run resumes the same jobs; the caching wrapper then
hands over every uncached text at once (`texts_per_call`, `documents_per_call`) instead of
one job per 256 texts. Questions (`input_type="query"`) are always embedded at once.

What it is not: a tokenizer. The SDK's `count_tokens` downloads the tokenizer from a model
hub, which is not reachable offline, so batches are sized with `estimate_tokens` (see its
docstring): a deliberately high estimate, so a batch stays under the real limit.

Limits (docs.voyageai.com, embeddings and pricing pages, 2026-12): 1,000 texts per
call; tokens per call 320K (voyage-3.5, voyage-2), 1M (voyage-3.5-lite), 120K (the large
models and any model not in `MODELS`); voyage-context-3: 1,000 documents, 16K chunks and
120K tokens per call, 32K tokens per document. A document estimated over 32K tokens is sent
as consecutive parts, each embedded with only its own part as context. Over-long single
texts are cut by the service (`truncation=True`).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragkit.documents import RagkitError
from ragkit.embed.voyage_vectors import problem_of, unit_rows
from ragkit.errors import Interrupted, PartialResults
from ragkit.voyage import batches, client, estimate_tokens, failure  # noqa: F401
from ragkit.voyage_batch import VoyageBatches

EVERYTHING = 1_000_000_000  # texts handed over per call in batch mode: all of them


@dataclass(frozen=True)
class Limits:
    """A model's output size and per-request limits."""

    dim: int = 1024
    context: int = 32_000  # tokens per text (per document for voyage-context-3)
    texts: int = 1_000  # texts (documents) per request
    tokens: int = 120_000  # estimated tokens per request
    chunks: int = 16_000  # chunks per request (voyage-context-3 only)


MODELS: dict[str, Limits] = {
    "voyage-3.5": Limits(tokens=320_000),
    "voyage-3.5-lite": Limits(tokens=1_000_000),
    "voyage-3-large": Limits(),
    "voyage-code-3": Limits(),
    "voyage-2": Limits(context=4_000, tokens=320_000),
    "voyage-context-3": Limits(),
}


def _call(what: str, sdk, method: str, **kwargs):
    """`sdk.<method>(**kwargs)`; an SDK error past its retries is one line (`failure`)."""
    from voyageai import error  # deferred: voyageai, ~0.35 s to import, only for Voyage models
    try:
        return getattr(sdk, method)(**kwargs)
    except error.VoyageError as exc:
        raise failure(what, exc, sdk, "re-run: vectors already embedded are kept in the "
                                      "embedding cache") from None


class VoyageEmbedder:
    """`voyage:MODEL` (see module docstring)."""

    prefix = "voyage"

    def __init__(self, model: str, output_dimension: int | None = None,
                 batch: dict[str, Any] | None = None) -> None:
        self.model, self.output_dimension = model, output_dimension
        self.batch = batch  # Batch API options (module docstring), or None: embed at once
        if batch is not None:
            self.texts_per_call = self.documents_per_call = EVERYTHING
        self.limits = MODELS.get(model, Limits())
        self.dim, self.max_tokens = output_dimension or self.limits.dim, self.limits.context
        self.name = self._what = f"{self.prefix}:{model}"
        self.fingerprint = f"{self.name}@{self.dim}"  # the model id and output size
        self._client: Any = None  # made by the first request (`_sdk`), not here

    @property
    def _sdk(self) -> Any:
        """The SDK client, made (and the key checked) when a text must be sent."""
        self.prepare()
        return self._client

    def prepare(self) -> None:
        """Check the key and make the client, once: before the first text is sent."""
        if self._client is None:
            # the alternative fits both uses: a build can choose another embedder, but an
            # index built with this one is searched with its vectors or by words alone
            self._client = client(f"the {self.name} embedder", f"an offline embedder "
                                  f"('auto', 'e5-small') to build; an index built with "
                                  f"{self.name} is searched with the key, or by --mode bm25 "
                                  f"without it")

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """`estimate_tokens` per text (an estimate: the real tokenizer needs a download)."""
        return [estimate_tokens(t) for t in texts]

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32 unit rows, in input order, in as few requests as fit."""
        if input_type not in ("document", "query"):
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        texts = list(texts)
        if self.batch is not None and input_type == "document":
            return self._by_batch(texts)
        sizes = [min(n, self.max_tokens) for n in self.token_lengths(texts)]
        out = [np.zeros((0, self.dim), dtype=np.float32)]
        for part in batches(sizes, self.limits.texts, self.limits.tokens):
            reply = _call(self._what, self._sdk, "embed", texts=[texts[i] for i in part],
                          model=self.model, input_type=input_type, truncation=True,
                          output_dimension=self.output_dimension)
            out.append(unit_rows(reply.embeddings, self.dim, self._what, len(part)))
        return np.concatenate(out)

    def _custom_id(self, kind: str, item: Any) -> str:
        """The Batch API custom_id of one request: 64 hex digits of what decides its result."""
        text = json.dumps([self.name, self.dim, kind, item], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _params(self) -> dict[str, Any]:
        extra = {"output_dimension": self.output_dimension} if self.output_dimension else {}
        return {"model": self.model, "input_type": "document", **extra}

    def _report(self, runner: VoyageBatches) -> None:
        if runner.created or runner.resumed:
            unknown = (f" (+ {runner.unreported} results that gave no count)"
                       if runner.unreported else "")
            runner.log(f"{self.name}: {len(runner.created)} Voyage batch(es) created, "
                       f"{len(runner.resumed)} resumed; {runner.tokens} tokens{unknown} at "
                       f"Voyage's batch price (33 % below list)")

    def _by_batch(self, texts: list[str]) -> np.ndarray:
        """Document vectors through Voyage's Batch API (`ragkit.voyage_batch`)."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        runner = VoyageBatches(self._what, self._sdk, self.batch)
        keys = [self._custom_id("document", t) for t in texts]

        def now(bodies: list[dict]) -> list[dict]:
            saved, self.batch = self.batch, None
            try:
                rows = self.embed([b["input"][0] for b in bodies])
            finally:
                self.batch = saved
            return [{"data": [{"embedding": row.tolist(), "index": 0}]} for row in rows]

        def vector(body: dict) -> np.ndarray:
            data = body.get("data")
            if not (isinstance(data, list) and data and isinstance(data[0], dict)):
                raise RagkitError(f"{self._what}: no vector in the result")
            return unit_rows([data[0].get("embedding")], self.dim, self._what, 1)[0]

        try:
            got = runner.run("/v1/embeddings", {**self._params(), "truncation": True},
                             list(dict(zip(keys, ({"input": [t]} for t in texts))).items()),
                             now, problem_of(vector))
        except (PartialResults, Interrupted) as exc:  # the vectors that came, for the cache
            self._report(runner)
            raise type(exc)(str(exc), {i: vector(exc.kept[k]) for i, k in enumerate(keys)
                                       if k in exc.kept}) from None
        self._report(runner)
        return np.stack([vector(got[k]) for k in keys])


class VoyageContextEmbedder(VoyageEmbedder):
    """`voyage-context:voyage-context-3`: contextualized chunk embeddings (module docstring)."""

    prefix = "voyage-context"

    def __init__(self, model: str = "voyage-context-3",
                 output_dimension: int | None = None,
                 batch: dict[str, Any] | None = None) -> None:
        super().__init__(model, output_dimension, batch)

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """Each text as a document of one chunk; questions with `input_type="query"`."""
        if input_type not in ("document", "query"):
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        vectors = self._send([[t] for t in texts], input_type)
        return np.concatenate([np.zeros((0, self.dim), np.float32), *vectors])

    def embed_documents(self, documents: Sequence[Sequence[str]], *,
                        progress: bool = False) -> list[np.ndarray]:
        """One (len(chunks), dim) array per document; its chunks are embedded together."""
        parts, owner = [], []
        for d, chunks in enumerate(documents):
            for part in self._split(list(chunks)):
                parts.append(part)
                owner.append(d)
        try:
            vectors = self._parts_by_batch(parts) if self.batch is not None else \
                self._send(parts, "document")
        except (PartialResults, Interrupted) as exc:  # kept: whole documents that came
            mine = {d: [i for i, o in enumerate(owner) if o == d] for d in set(owner)}
            raise type(exc)(str(exc), {d: np.concatenate([exc.kept[i] for i in at])
                                       for d, at in mine.items()
                                       if all(i in exc.kept for i in at)}) from None
        out = [[] for _ in documents]
        for d, v in zip(owner, vectors, strict=True):
            out[d].append(v)
        return [np.concatenate(v) if v else np.zeros((0, self.dim), np.float32) for v in out]

    def _parts_by_batch(self, parts: list[list[str]]) -> list[np.ndarray]:
        """Each document part's chunk vectors through Voyage's Batch API, one request each."""
        if not parts:
            return []
        runner = VoyageBatches(self._what, self._sdk, self.batch)
        keys = [self._custom_id("document-in-context", part) for part in parts]

        def now(bodies: list[dict]) -> list[dict]:
            rows = self._send([b["inputs"][0] for b in bodies], "document")
            return [{"data": [{"data": [{"embedding": v.tolist()} for v in r]}]} for r in rows]

        size = dict(zip(keys, map(len, parts)))

        def vectors(key: str, body: dict) -> np.ndarray:
            try:
                rows = [e["embedding"] for e in body["data"][0]["data"]]
            except (KeyError, IndexError, TypeError):
                raise RagkitError(f"{self._what}: no vectors in the result") from None
            if len(rows) != size[key]:
                raise RagkitError(f"{self._what}: Voyage's batch returned {len(rows)} vectors "
                                  f"for a document of {size[key]} chunks")
            return unit_rows(rows, self.dim, self._what)

        try:
            got = runner.run("/v1/contextualizedembeddings", self._params(),
                             list(dict(zip(keys, ({"inputs": [p]} for p in parts))).items()),
                             now, problem_of(vectors, by_key=True))
        except (PartialResults, Interrupted) as exc:
            self._report(runner)
            raise type(exc)(str(exc), {i: vectors(k, exc.kept[k]) for i, k in
                                       enumerate(keys) if k in exc.kept}) from None
        self._report(runner)
        return [vectors(key, got[key]) for key in keys]

    def _split(self, chunks: list[str]) -> list[list[str]]:
        """A document's chunks as consecutive parts of at most `max_tokens` estimated tokens."""
        sizes = [min(n, self.max_tokens) for n in self.token_lengths(chunks)]
        return [chunks[r.start:r.stop] for r in batches(sizes, self.limits.chunks,
                                                         self.max_tokens)]

    def _send(self, inputs: list[list[str]], input_type: str) -> list[np.ndarray]:
        """Contextualized embeddings of `inputs` (lists of chunks), batched within limits."""
        sizes = [sum(min(n, self.max_tokens) for n in self.token_lengths(doc)) for doc in inputs]
        counts = np.cumsum([0] + [len(doc) for doc in inputs])
        out = []
        for part in self._requestbatches(sizes, counts):
            reply = _call(self._what, self._sdk, "contextualized_embed",
                          inputs=[inputs[i] for i in part], model=self.model,
                          input_type=input_type, output_dimension=self.output_dimension)
            if len(reply.results) != len(part):
                raise RagkitError(f"{self._what}: Voyage returned {len(reply.results)} results "
                                  f"for {len(part)} inputs")
            for i, result in zip(part, reply.results, strict=True):
                if len(result.embeddings) != len(inputs[i]):
                    raise RagkitError(f"{self._what}: Voyage returned {len(result.embeddings)} "
                                      f"vectors for a document of {len(inputs[i])} chunks")
                out.append(unit_rows(result.embeddings, self.dim, self._what))
        return out

    def _requestbatches(self, sizes: list[int], counts: np.ndarray) -> Iterator[range]:
        """Batches of documents within the token, document and chunk limits per request."""
        for part in batches(sizes, self.limits.texts, self.limits.tokens):
            start = part.start
            for i in part:  # split further where the chunk count would pass its limit
                if i > start and counts[i + 1] - counts[start] > self.limits.chunks:
                    yield range(start, i)
                    start = i
            yield range(start, part.stop)
