"""The long-context baseline: the whole corpus in one cached prompt, no retrieval (Anthropic's
Contextual Retrieval article).

Anthropic's "Introducing Contextual Retrieval" article: a knowledge base under
~200K tokens can go into the prompt whole, with prompt caching keeping cost and latency down.

What it is:
- `corpus_text(documents)`: every document as `<document source="id" title="…">` inside one
  `<documents>` block; `request(corpus, question)`: the Messages body — the corpus as the
  user turn's first text block, the **only** block with `cache_control` (ephemeral, 5 min),
  then the question as the last block (Anthropic's long-context tip: question after data);
- `LongContext(documents, llm)`: counts the prompt's tokens with `messages.count_tokens`
  (offline: the stand-in's estimate, one token per 4 UTF-8 bytes), refuses a corpus over the
  model's context window less `room` (the reply's `max_tokens` plus the question) with a
  message saying by how much, and answers questions (`ask`);
- `project_cost(...)`: cost per query for N queries with caching — the first query writes
  the corpus to the cache, the next N−1 read it (the TTL is refreshed by each hit, so the
  queries must come less than 5 minutes apart) — and without; a corpus shorter than the
  model's minimum cacheable prefix (4096 tokens on Haiku 4.5) is billed uncached, as the API
  silently does;
- `window_table(documents, parts)`: tokens per corpus part and whether each fits;
- `folder_parts(documents)` and `fitting_part(documents)`: the corpus's top-level folders as
  parts, and the part notebook 07 compares on — the corpus less its largest folders, left
  out one at a time until the rest fits (a large part that fits, found in a few counts; not
  the largest subset, which is a knapsack over every set of folders).

Offline, the stand-in answers the request extractively from the corpus's sentences
(`ragkit.standin.crag`), a documented program, not a model.

What it is not: a retriever; nothing here decides which documents matter.
"""
from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ragkit.answer import DECLINE, DEFAULT_MODEL, MAX_TOKENS, is_decline
from ragkit.documents import Document, RagkitError
from ragkit.pricing import Usage, price
from ragkit.text_stats import joined

CORPUS_OPEN = "<documents>"
ROOM = 2048  # tokens kept free: the reply's max_tokens (1024) and the question
SYSTEM = ("Answer the user's question using only the documents in the user turn. Quote or "
          "closely paraphrase the sentences that answer it and name their source. If the "
          f"documents do not answer the question, reply exactly: {DECLINE}")


def corpus_text(documents: Sequence[Document]) -> str:
    """The documents as one `<documents>` block, in the given order."""
    parts = [f'<document source="{html.escape(d.id)}" title="{html.escape(d.title or d.id)}">'
             f"\n{d.text}\n</document>" for d in documents]
    return "\n".join([CORPUS_OPEN, *parts, "</documents>"])


def request(corpus: str, question: str, model: str = DEFAULT_MODEL,
            max_tokens: int = MAX_TOKENS) -> dict:
    """The Messages body: corpus block (cached) first, the question last."""
    return {"model": model, "max_tokens": max_tokens, "system": SYSTEM,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": corpus, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": question}]}]}


@dataclass(frozen=True)
class LongAnswer:
    question: str
    text: str
    usage: Usage
    declined: bool
    seconds: float


class LongContext:
    """The corpus in one prompt for `model`; refuses one that does not fit (see module)."""

    def __init__(self, documents: Sequence[Document], llm=None, model: str = DEFAULT_MODEL,
                 max_tokens: int = MAX_TOKENS, room: int = ROOM) -> None:
        from ragkit.llm import LLM  # deferred: anthropic loads only when no llm is given
        self.llm = llm or LLM()
        self.model, self.max_tokens, self.room = model, max_tokens, room
        self.corpus = corpus_text(documents)
        self.documents = len(documents)
        body = request(self.corpus, "?", model, max_tokens)
        self.tokens = self.llm.count_tokens(model=model, system=body["system"],
                                            messages=body["messages"])

    @property
    def limit(self) -> int:
        return price(self.model).context_window - self.room

    @property
    def fits(self) -> bool:
        return self.tokens <= self.limit

    def check(self) -> None:
        """Raise RagkitError when the prompt does not fit the model's window less `room`."""
        if not self.fits:
            window = price(self.model).context_window
            raise RagkitError(
                f"the corpus ({self.documents} documents) is {self.tokens:,} prompt tokens; "
                f"{self.model}'s context window is {window:,} less {self.room:,} kept for the "
                f"reply and the question = {self.limit:,}: {self.tokens - self.limit:,} over. "
                f"Put a subset in the prompt, or retrieve")

    def ask(self, question: str) -> LongAnswer:
        """One answer with the whole corpus in the prompt (after `check`)."""
        self.check()
        start = time.perf_counter()
        message = self.llm.create(**request(self.corpus, question, self.model,
                                            self.max_tokens))
        text = "".join(b.text for b in message.content if b.type == "text")
        return LongAnswer(question, text, Usage.of(message.usage), is_decline(text),
                          time.perf_counter() - start)


@dataclass(frozen=True)
class CostProjection:
    """Dollars at list prices, projected (not a bill): per query over N queries."""

    queries: int
    first_query: float  # with caching: the cache write
    later_query: float  # with caching: a cache read
    cached_per_query: float
    uncached_per_query: float
    cached: bool  # False: the prefix is under the model's minimum cacheable length


def project_cost(prefix_tokens: int, question_tokens: int, output_tokens: int, queries: int,
                 model: str = DEFAULT_MODEL, ttl: str = "5m") -> CostProjection:
    """Cost per query of `queries` questions that share a cached prefix (the corpus)."""
    if queries < 1 or min(prefix_tokens, question_tokens, output_tokens) < 0:
        raise RagkitError("queries must be >= 1 and token counts >= 0")
    row = price(model)
    write = row.write_1h if ttl == "1h" else row.write_5m
    rest = (question_tokens * row.input + output_tokens * row.output) / 1e6
    plain = prefix_tokens * row.input / 1e6 + rest
    if prefix_tokens < row.min_cacheable:
        return CostProjection(queries, plain, plain, plain, plain, False)
    first = prefix_tokens * write / 1e6 + rest
    later = prefix_tokens * row.read / 1e6 + rest
    return CostProjection(queries, first, later, (first + (queries - 1) * later) / queries,
                          plain, True)


def window_table(documents: Sequence[Document], parts: Mapping[str, Sequence[str]],
                 llm=None, model: str = DEFAULT_MODEL, room: int = ROOM) -> pd.DataFrame:
    """Per named part (a list of document-id prefixes; [""] = everything): documents,
    prompt tokens, and whether that corpus fits `model`'s window less `room`."""
    from ragkit.llm import LLM  # deferred: anthropic loads only when no llm is given
    llm = llm or LLM()
    rows = {}
    for name, prefixes in parts.items():
        chosen = [d for d in documents if d.id.startswith(tuple(prefixes))]
        lc = LongContext(chosen, llm, model, room=room)
        rows[name] = {"documents": len(chosen), "prompt tokens": lc.tokens,
                      "limit": lc.limit, "fits": lc.fits}
    return pd.DataFrame(rows).T


def cost_table(prefix_tokens: int, question_tokens: int, output_tokens: int,
               queries: Sequence[int] = (1, 10, 100, 1000), model: str = DEFAULT_MODEL
               ) -> pd.DataFrame:
    """`project_cost` per number of queries: dollars per query with and without caching."""
    rows = {n: project_cost(prefix_tokens, question_tokens, output_tokens, n, model)
            for n in queries}
    return pd.DataFrame({"$/query cached": {n: p.cached_per_query for n, p in rows.items()},
                         "$/query uncached": {n: p.uncached_per_query for n, p in rows.items()},
                         "saving %": {n: 100 * (1 - p.cached_per_query / p.uncached_per_query)
                                      for n, p in rows.items()}}).rename_axis("queries")


def folder_parts(documents: Sequence[Document]) -> dict[str, list[str]]:
    """Each top-level folder as a part (`{"reports/": ["reports/"]}`), in the order of the
    documents' ids; a document outside any folder is a part of its own (its id)."""
    tops = sorted({d.id.split("/", 1)[0] + "/" if "/" in d.id else d.id for d in documents})
    return {top: [top] for top in tops}


def fitting_part(documents: Sequence[Document], llm=None, model: str = DEFAULT_MODEL,
                 room: int = ROOM) -> tuple[str, list[str]]:
    """(name, id prefixes) of the part to put in one prompt: the whole corpus when it fits
    `model`'s window less `room`, else the corpus less its largest top-level folders (by
    prompt tokens), left out one at a time until the rest fits ("everything but reports/").

    Raises RagkitError when no folder fits alone (a part of one folder is then the user's
    choice, not this function's)."""
    whole = LongContext(documents, llm, model, room=room)  # makes the client when none given
    if whole.fits:
        return "whole corpus", [""]
    llm, folders = whole.llm, folder_parts(documents)
    size = {top: LongContext([d for d in documents if d.id.startswith(top)], llm, model,
                             room=room).tokens for top in folders}
    kept, left_out = list(folders), []
    while kept:
        chosen = [d for d in documents if d.id.startswith(tuple(kept))]
        if left_out and LongContext(chosen, llm, model, room=room).fits:
            return f"everything but {joined(left_out)}", kept
        largest = max(kept, key=lambda top: (size[top], top))
        kept.remove(largest)
        left_out.append(largest)
    raise RagkitError(f"no top-level folder of the corpus fits {model}'s context window less "
                      f"{room:,} tokens (the smallest: {min(size.values()):,} prompt tokens)")
