"""Claude prices, token usage records and the cost of contextual retrieval.

What it is: one dated price table (`PRICES`, USD per million tokens), a `Usage` record of
the four counters every Messages API reply reports, `cost(usage, model)`, and
`contextualization_cost(...)`, which turns document and chunk sizes (or measured usage)
into the seed's table: dollars per million document tokens, with and without caching.

Batch prices: Anthropic's Message Batches API bills every counter of a request (input,
cache writes, cache reads, output) at `BATCH_DISCOUNT` = 50 % of the list price
(`batch_cost`); prompt caching inside a batch is best-effort, so a batch projection gives the
range from "batch" (no cache hit) to "batch + cache" (every document cached as
interactively). Voyage's Batch API takes 33 % off its list prices (`VOYAGE_BATCH_DISCOUNT`).
Both read on `BATCH_PRICES_DATE` (platform.claude.com/docs/en/build-with-claude/batch-processing,
docs.voyageai.com/docs/batch-inference).

What it is not: a bill. Prices move; the table says the day it was read.

`ragkit.llm` re-exports everything here; import it from there.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragkit.documents import RagkitError

if TYPE_CHECKING:
    import pandas as pd

PRICES_DATE = "2026-12"  # read from platform.claude.com/docs/en/about-claude/pricing
BATCH_PRICES_DATE = "2026-12-02"  # the batch-processing pages named in the module docstring
BATCH_DISCOUNT = 0.5  # Message Batches: each token counter billed at half the list price
VOYAGE_BATCH_DISCOUNT = 0.33  # Voyage Batch API: 33 % off the list price, 12-hour window


@dataclass(frozen=True)
class Price:
    """One model's list prices (USD per million tokens) and its caching and context limits."""

    input: float
    write_5m: float
    write_1h: float
    read: float
    output: float
    min_cacheable: int  # a prompt prefix shorter than this is silently not cached
    context_window: int


PRICES: dict[str, Price] = {
    "claude-haiku-4-5": Price(1.00, 1.25, 2.00, 0.10, 5.00, 4096, 200_000),
    # Retired for calls (a comparison row: the seed's $1.02 was computed with it).
    "claude-3-haiku-20240307": Price(0.25, 0.30, 0.50, 0.03, 1.25, 2048, 200_000),
}


def price(model: str) -> Price:
    """The price row of `model`; an unknown name is a clear error, not a guess."""
    try:
        return PRICES[model]
    except KeyError:
        raise RagkitError(f"unknown model '{model}': no price row (known: "
                          f"{', '.join(PRICES)}; table dated {PRICES_DATE})") from None


@dataclass(frozen=True)
class Usage:
    """Token counts of one reply or a sum of replies (the API's `None` counts as 0), and how
    many of those replies reported no usage (`unreported`): no input or output count, so
    their tokens and cost are unknown — left out of every sum, and said, never shown as 0."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    unreported: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input + other.input, self.output + other.output,
                     self.cache_write + other.cache_write, self.cache_read + other.cache_read,
                     self.unreported + other.unreported)

    @classmethod
    def of(cls, usage: object) -> "Usage":
        """From an SDK `Usage` object or its dict form; None, or one without its input or
        output count (a proxy's reply, a stream's first event), is one `unreported` reply."""
        get = usage.get if isinstance(usage, dict) else (lambda k: getattr(usage, k, None))
        if usage is None or get("input_tokens") is None or get("output_tokens") is None:
            return cls(unreported=1)
        return cls(get("input_tokens") or 0, get("output_tokens") or 0,
                   get("cache_creation_input_tokens") or 0, get("cache_read_input_tokens") or 0)

    def unknown(self) -> str:
        """"; N replies reported no usage (…)" when any did, else "": for a cost's line."""
        return (f"; {self.unreported:,} repl{'y' if self.unreported == 1 else 'ies'} reported "
                f"no usage: their tokens and cost are unknown, not in these figures"
                if self.unreported else "")

    def as_dict(self) -> dict[str, int]:
        return {"input_tokens": self.input, "output_tokens": self.output,
                "cache_creation_input_tokens": self.cache_write,
                "cache_read_input_tokens": self.cache_read}

    @property
    def prompt_tokens(self) -> int:
        """All input tokens, however billed (uncached + written + read)."""
        return self.input + self.cache_write + self.cache_read


def cost(usage: Usage, model: str, ttl: str = "5m") -> float:
    """Dollars for `usage` at `model`'s list prices; cache writes at the `ttl` rate."""
    row = price(model)
    write = row.write_1h if ttl == "1h" else row.write_5m
    return (usage.input * row.input + usage.cache_write * write + usage.cache_read * row.read
            + usage.output * row.output) / 1e6


def batch_cost(usage: Usage, model: str, ttl: str = "5m") -> float:
    """Dollars for `usage` of requests sent through the Message Batches API: every counter
    at `BATCH_DISCOUNT` of the list price (cache writes and reads included)."""
    return cost(usage, model, ttl) * BATCH_DISCOUNT


def uncached_cost(usage: Usage, model: str) -> float:
    """What `usage` would have cost with no prompt caching (every prompt token at input)."""
    return cost(Usage(usage.prompt_tokens, usage.output), model)


@dataclass(frozen=True)
class CostTable:
    """Dollars per million document tokens, with and without prompt caching."""

    cached: float
    uncached: float

    @property
    def batch(self) -> float:
        """Through the Message Batches API with no prompt-cache hit (the batch ceiling)."""
        return self.uncached * BATCH_DISCOUNT

    @property
    def batch_cached(self) -> float:
        """Through the Message Batches API with every document cached as interactively (the
        batch floor: caching in a batch is best-effort)."""
        return self.cached * BATCH_DISCOUNT


def contextualization_cost(doc_tokens: int, chunk_tokens: int, instruction_tokens: int,
                           context_tokens: int, model: str, formula: str = "billed",
                           ttl: str = "5m") -> CostTable:
    """Project the cost of contextualizing documents of `doc_tokens` before any call.

    N = ceil(doc_tokens / chunk_tokens) calls per document, each sending the document, one
    chunk and the instruction and receiving `context_tokens`. Per document (D, C, I, O):
    - "billed" (what the API bills): D·write + (N−1)·D·read + N·(C+I)·input + N·O·output;
    - "anthropic" (the seed's arithmetic, which also bills a read on the writing call):
      D·write + N·D·read + N·(C+I)·input + N·O·output;
    - uncached (both): N·(D+C+I)·input + N·O·output.
    Multiplied by 1e6 / D. Source: Anthropic, "Introducing Contextual Retrieval" (2024).
    """
    if formula not in ("billed", "anthropic"):
        raise RagkitError(f"unknown cost formula '{formula}' (known: billed, anthropic)")
    if min(doc_tokens, chunk_tokens) <= 0:
        raise RagkitError("document and chunk token counts must be positive")
    row, d = price(model), doc_tokens
    n = math.ceil(d / chunk_tokens)
    write = row.write_1h if ttl == "1h" else row.write_5m
    reads = n if formula == "anthropic" else n - 1
    per_call = (chunk_tokens + instruction_tokens) * row.input + context_tokens * row.output
    cached = d * write + reads * d * row.read + n * per_call
    uncached = n * (d * row.input + per_call)
    scale = 1e6 / d / 1e6  # per million document tokens, prices per million tokens
    return CostTable(cached * scale, uncached * scale)


def measured_contextualization_cost(usage: Usage, doc_tokens: int, model: str) -> CostTable:
    """The same table from measured usage of a run over `doc_tokens` document tokens."""
    if doc_tokens <= 0:
        raise RagkitError("document token count must be positive")
    scale = 1e6 / doc_tokens
    return CostTable(cost(usage, model) * scale, uncached_cost(usage, model) * scale)


@dataclass(frozen=True)
class CorpusCost:
    """A projected contextualization bill for a whole corpus (USD), before any call."""

    cached: float
    uncached: float
    documents: int
    below_cache_minimum: int  # documents that run uncached: shorter than `min_cacheable`
    document_tokens: int

    @property
    def batch(self) -> float:
        """The same requests through the Message Batches API, no cache hit (`CostTable`)."""
        return self.uncached * BATCH_DISCOUNT

    @property
    def batch_cached(self) -> float:
        """Through the Message Batches API, every cacheable document cached."""
        return self.cached * BATCH_DISCOUNT


def project_corpus_cost(documents: Sequence[tuple[int, Sequence[int]]], model: str,
                        instruction_tokens: int = 50, context_tokens: int = 100,
                        ttl: str = "5m") -> CorpusCost:
    """Project contextualizing a corpus: `documents` = (document tokens, chunk tokens each).

    Each document is billed as `contextualization_cost`'s "billed" formula, chunk by chunk,
    except that a document shorter than the model's minimum cacheable length is billed
    uncached — the API silently skips caching it (4096 tokens for Haiku 4.5).
    """
    row = price(model)
    write = row.write_1h if ttl == "1h" else row.write_5m
    cached = uncached = 0.0
    short = total = 0
    for doc_tokens, chunk_tokens in documents:
        total += doc_tokens
        n = len(chunk_tokens)
        per_calls = sum((c + instruction_tokens) * row.input + context_tokens * row.output
                        for c in chunk_tokens)
        plain = n * doc_tokens * row.input + per_calls
        uncached += plain
        if doc_tokens < row.min_cacheable:
            short += 1
            cached += plain
        else:
            cached += doc_tokens * write + (n - 1) * doc_tokens * row.read + per_calls
    return CorpusCost(cached / 1e6, uncached / 1e6, len(documents), short, total)


def seed_cost_table() -> "pd.DataFrame":
    """The cost example of Anthropic's Contextual Retrieval article — 8k-token documents,
    800-token chunks, a 50-token instruction, 100-token contexts — in dollars per million
    document tokens, per model and formula: interactive with and without prompt caching, and
    through the Message Batches API ("batch": no cache hit; "batch + cache": every document
    cached, the best case since caching in a batch is best-effort)."""
    import pandas as pd
    rows = {"Claude 3 Haiku, the article's arithmetic":
            contextualization_cost(8000, 800, 50, 100, "claude-3-haiku-20240307", "anthropic"),
            "Claude 3 Haiku, as billed": contextualization_cost(8000, 800, 50, 100,
                                                                "claude-3-haiku-20240307"),
            "Haiku 4.5, as billed": contextualization_cost(8000, 800, 50, 100,
                                                           "claude-haiku-4-5"),
            "Haiku 4.5, 1-hour cache": contextualization_cost(8000, 800, 50, 100,
                                                              "claude-haiku-4-5", ttl="1h")}
    return pd.DataFrame({name: {"cached $/M doc tokens": t.cached,
                                "uncached $/M doc tokens": t.uncached,
                                "batch $/M doc tokens": t.batch,
                                "batch + cache $/M doc tokens": t.batch_cached}
                         for name, t in rows.items()}).T
