"""Voyage AI rerankers `voyage:rerank-2.5` and `voyage:rerank-2.5-lite` through the official SDK.

What it is: `VoyageReranker(model)` sends the query and the candidates to `Client.rerank`
and returns them by Voyage's `relevance_score`, best first, cut to k. The text of a
candidate is `document_text(chunk)`: the chunk, a blank line, then "Context: " and its
context, as Anthropic's cookbook sends documents to its reranker (`f"{original_content}
\\n\\nContext: {contextualized_content}"`, anthropics/claude-cookbooks,
capabilities/contextual-embeddings/guide.ipynb); a chunk without a context is sent alone.

Key and endpoint: `VOYAGE_API_KEY` (or the SDK's `VOYAGE_API_KEY_PATH`) is checked before
the first request goes out (the SDK fails only then, unclearly), as the Voyage embedders check
it (`ragkit.voyage.client`), not when the reranker is built: a search whose rerank calls are
all in the call cache needs no key. Without one, the cache is looked up at the endpoint a key
would use (`VOYAGE_BASE_URL`, else api.voyageai.com: calls made with a MongoDB Atlas `al-` key
and no `VOYAGE_BASE_URL` are found only with the key). The key is never printed.
`VOYAGE_BASE_URL` (e.g. `http://127.0.0.1:8000/v1`, no trailing slash) points it at another
endpoint. Each request waits and retries within
`ragkit.online.budget()` (by default 3 attempts of up to 120 s each; the SDK retries a 429,
502-504 or timeout with exponential back-off); an error left after that is one
`RagkitError` line (`ragkit.voyage.failure`), never with the key.

Limits (docs.voyageai.com, reranker page, 2026-12), met with
`estimate_tokens` because the SDK's tokenizer downloads from a model hub:
- a query over 8,000 tokens is cut to its longest prefix that fits (warned, counted);
- a document over 32,000 tokens minus the query's is cut the same way (warned, counted);
- candidates are sent in consecutive groups of at most 1,000 documents and at most 600K
  tokens (query tokens × documents + document tokens) per call; relevance scores are
  pointwise (one query-document pair each), so the groups' results are merged by score.
  Queries that needed several calls are counted (`split_queries`).
`truncation=True` stays on so that a rare underestimate is cut by Voyage instead of failing.

Cost and cache: every call goes through the paid-call cache (`ragkit.cache`) keyed by the
endpoint, backend and the whole request body, so a rerun sends nothing. `total_tokens` is
summed per reranker (spent, and saved by cache hits) and priced with `PRICES` (dated).

Bad replies: a reply that is not JSON, misses fields, names an unknown or repeated document,
has a non-numeric score or fewer results than asked for makes that query keep its
first-stage order, with a `RagkitWarning`, counted in `fallbacks`; it is not cached, so a
rerun asks again.
"""
from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ragkit.cache import CallCache, request_key
from ragkit.documents import Chunk, RagkitError, RagkitWarning
from ragkit.errors import MissingKey
from ragkit.fusion import Ranking
from ragkit.money import dollars as money_text
from ragkit.online import scrub
from ragkit.pricing import Usage
from ragkit.rerank.base import Candidate
from ragkit.voyage import address, batches, client, estimate_tokens, failure  # noqa: F401

PRICES_DATE = "2026-12"  # docs.voyageai.com/docs/pricing; the first 200M tokens are free
PRICES: dict[str, float] = {"rerank-2.5": 0.05, "rerank-2.5-lite": 0.02}  # USD per M tokens
MAX_DOCUMENTS = 1_000
MAX_QUERY_TOKENS = 8_000
MAX_PAIR_TOKENS = 32_000  # query + any one document
MAX_TOTAL_TOKENS = 600_000  # query tokens × documents + document tokens, per call
ENDPOINT = "/v1/rerank"
_MALFORMED = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` whose `estimate_tokens` is at most `budget`."""
    if estimate_tokens(text) <= budget:
        return text
    ascii_chars = other = 0
    for i, ch in enumerate(text):
        if ch < "\x80":
            ascii_chars += 1
        else:
            other += 1
        if 2 + math.ceil(ascii_chars / 3) + other > budget:
            return text[:i]
    return text


def document_text(chunk: Chunk) -> str:
    """What a reranker reads for a chunk: the cookbook's chunk, then "Context: " + context."""
    return f"{chunk.text}\n\nContext: {chunk.context}" if chunk.context else chunk.text


def groups(sizes: Sequence[int], query_tokens: int) -> Iterator[range]:
    """Consecutive index ranges within the per-call document and total-token limits (each
    document costs its own tokens plus the query's)."""
    return batches([query_tokens + size for size in sizes], MAX_DOCUMENTS, MAX_TOTAL_TOKENS)


def _results(reply: Any, n: int, top_k: int) -> tuple[list[tuple[int, float]], int]:
    """(index, score) pairs and total_tokens of an SDK reply; ValueError if unusable."""
    pairs = [(r.index, r.relevance_score) for r in reply.results]
    tokens = reply.total_tokens
    seen = {i for i, _ in pairs}
    if any(type(i) is not int or not 0 <= i < n for i, _ in pairs) or len(seen) < len(pairs):
        raise ValueError("unknown or repeated document index")
    if any(isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)
           for _, s in pairs):
        raise ValueError("a relevance_score that is not a finite number")
    if len(pairs) != top_k:
        raise ValueError(f"{len(pairs)} results for top_k={top_k}")
    if type(tokens) is not int or tokens < 0:
        raise ValueError("no usage.total_tokens")
    return [(i, float(s)) for i, s in pairs], tokens


class VoyageReranker:
    """`voyage:MODEL` (see module docstring)."""

    def __init__(self, model: str, cache: CallCache | None | bool = True) -> None:
        self.name = f"voyage:{model}"
        if model not in PRICES:
            raise RagkitError(f"unknown Voyage reranker '{model}': no limits or price row "
                              f"(known: {', '.join(PRICES)}; table dated {PRICES_DATE})")
        self.model = model
        self.cache = CallCache() if cache is True else (cache or None)
        self._client: Any = None  # made by the first request (`_sdk`), not here
        self._lock = threading.Lock()
        try:  # the cache key's endpoint; with a key, the client's (it may depend on the key)
            self.backend = address(self._sdk)
        except MissingKey:  # no key yet: cached calls need none (module docstring)
            self.backend = address(None)
        self.requests = self.cache_hits = self.tokens = self.saved_tokens = 0
        self.fallbacks = self.split_queries = self.cut_documents = self.cut_queries = 0

    @property
    def _sdk(self) -> Any:
        """The SDK client, made (and the key checked, `ragkit.voyage.client`) once, when a
        request must be sent; a `MissingKey` line while no key is set."""
        with self._lock:
            if self._client is None:
                self._client = client(f"the {self.name} reranker",
                                      "the offline reranker 'offline'")
            return self._client

    @property
    def dollars(self) -> float:
        """Dollars spent by this reranker's requests (cache hits cost nothing)."""
        return self.tokens * PRICES[self.model] / 1e6

    def summary(self) -> str:
        """One line: requests, cache hits, tokens, dollars and every defect counted."""
        saved = self.saved_tokens * PRICES[self.model] / 1e6
        return (f"{self.name}: {self.requests} requests, {self.cache_hits} from the call "
                f"cache; {self.tokens} tokens, {money_text(self.dollars)} ({money_text(saved)} saved; prices "
                f"of {PRICES_DATE}); {self.split_queries} queries split into several calls, "
                f"{self.cut_queries} queries and {self.cut_documents} documents cut to fit, "
                f"{self.fallbacks} replies unusable (first-stage order kept)")

    def rerank(self, query: str, candidates: Sequence[Candidate], k: int) -> Ranking:
        """The best k candidates by Voyage's relevance score (module docstring)."""
        if not candidates or k < 1:
            return []
        query_text = self._fit_query(query)
        q = estimate_tokens(query_text)
        docs = self._fit_documents(query, [document_text(c.chunk) for c in candidates], q)
        parts = list(groups([estimate_tokens(d) for d in docs], q))
        if len(parts) > 1:
            self._count("split_queries")
        scored: list[tuple[int, float]] = []
        for part in parts:
            pairs = self._send(query, query_text, [docs[i] for i in part], min(k, len(part)))
            if pairs is None:
                return [(c.chunk.id, c.score) for c in candidates[:k]]
            scored.extend((part.start + i, score) for i, score in pairs)
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return [(candidates[i].chunk.id, score) for i, score in scored[:k]]

    def _count(self, counter: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + by)

    def _warn(self, query: str, what: str) -> None:
        key = self._client.api_key if self._client is not None else None
        warnings.warn(scrub(f"{self.name}: query {query[:60]!r}: {what}", key),
                      RagkitWarning, stacklevel=4)

    def _fit_query(self, query: str) -> str:
        cut = cut_to_tokens(query, MAX_QUERY_TOKENS)
        if cut != query:
            self._count("cut_queries")
            self._warn(query, f"cut from {estimate_tokens(query)} to {MAX_QUERY_TOKENS} "
                              f"estimated tokens (Voyage's query limit)")
        return cut

    def _fit_documents(self, query: str, docs: list[str], q: int) -> list[str]:
        fitted = [cut_to_tokens(d, MAX_PAIR_TOKENS - q) for d in docs]
        cut = sum(f != d for f, d in zip(fitted, docs))
        if cut:
            self._count("cut_documents", cut)
            self._warn(query, f"{cut} document(s) cut to {MAX_PAIR_TOKENS - q} estimated "
                              f"tokens (Voyage's {MAX_PAIR_TOKENS} query + document limit)")
        return fitted

    def _send(self, query: str, query_text: str, docs: list[str], top_k: int
              ) -> list[tuple[int, float]] | None:
        """One rerank call (or its cached reply): (index in `docs`, score); None if unusable."""
        body = {"model": self.model, "query": query_text, "documents": docs, "top_k": top_k,
                "truncation": True}
        key = request_key(ENDPOINT, self.backend, body)
        entry = self.cache.get(key) if self.cache else None
        if entry is not None:
            self._count("cache_hits")
            self._count("saved_tokens", entry.usage.input)
            return [(int(i), float(s)) for i, s in entry.reply["results"]]
        sdk = self._sdk  # the key is checked first: a call never sent is not counted
        self._count("requests")
        try:
            pairs, tokens = _results(self._call(sdk, body), len(docs), top_k)
        except RagkitError:  # a ValueError too, but a failed request, not a bad reply
            raise
        except _MALFORMED as exc:
            self._count("fallbacks")
            self._warn(query, f"malformed reply from Voyage ({exc}): first-stage order kept")
            return None
        self._count("tokens", tokens)
        if self.cache:
            self.cache.put(key, ENDPOINT, self.model, {"results": pairs, "total_tokens": tokens},
                           Usage(input=tokens), priced=True)
        return pairs

    def _call(self, sdk: Any, body: dict[str, Any]) -> Any:
        """`sdk.rerank(**body)`; SDK errors other than a garbled 200 become one RagkitError
        line without the key (`ragkit.voyage.failure`)."""
        from voyageai import error
        try:
            return sdk.rerank(**body)
        except error.VoyageError as exc:
            if exc.http_status == 200:  # a reply body that is not JSON
                raise ValueError(f"not JSON: {str(exc.http_body)[:60]!r}") from None
            raise failure(self.name, exc, sdk,
                          "re-run: reranked queries are kept in the call cache") from None
