"""Claude-written chunk contexts, as in Anthropic's Contextual Retrieval article.

What it is: `ClaudeContextualizer(model, prompt)` asks Claude, once per chunk, for a short
context that situates the chunk in its whole document. The request is the cookbook's: one
user turn with two text blocks, the document block (with `cache_control`, so the document
is written to the prompt cache once and read by every later chunk of it) and then the chunk
instruction; `temperature` 0, `max_tokens` 1024. Source: anthropics/claude-cookbooks,
capabilities/contextual-embeddings/guide.ipynb (module-level prompts, commit 5c1c153; here in
`ragkit.contextualize.prompts`).

Per document: count its tokens (`messages.count_tokens`; the stand-in's count is its
documented estimate), send the first chunk's request and wait for the reply (a cache entry
is usable only once the first reply has begun, so parallel first calls would all pay for a
cache write), then send the rest through a pool of `workers` threads. Every reply goes
through the paid-call cache, so a rerun sends nothing and an interrupted run resumes.

Reported (one line each, kept in `notes` and passed to `log`; by default `ragkit.progress.note`:
on stderr in a terminal, in a notebook the running cell's plain output, not a pink stderr strip):
- documents below the model's minimum cacheable length: the API runs them uncached and says
  nothing, so the cost is the uncached one;
- documents longer than the context window (less `max_tokens` and room for one chunk and
  the instruction): split into parts of consecutive whole chunks that fit, each chunk
  contextualized against the part holding it — never truncated silently; a chunk that on
  its own does not fit is left without a context.

The user's prompt (`prompt`, e.g. with a domain glossary) replaces the chunk instruction; it
must contain `{chunk_content}`. The document block stays the cookbook's so caching still
works. The prompt text is part of every request, hence of every cache key.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from anthropic.types import Message
from tqdm import tqdm

from ragkit.cache import CacheUnusable
from ragkit.contextualize.prompts import (CHUNK_CONTEXT_PROMPT, DEFAULT_MODEL,
                                         DOCUMENT_CONTEXT_PROMPT, PLACEHOLDER)
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.errors import MissingKey
from ragkit.llm import LLM, CorpusCost, price, project_corpus_cost
from ragkit.money import dollars as money_text
from ragkit.progress import note, progress_bar
from ragkit.text_stats import estimate_tokens

if TYPE_CHECKING:
    import pandas as pd

ROOM = 200  # tokens kept free for the instruction and message framing
_KEPT = "contexts obtained so far are kept in the call cache, rerun to continue"


def build_request(model: str, document: str, chunk: str, prompt: str = CHUNK_CONTEXT_PROMPT,
                  max_tokens: int = 1024) -> dict:
    """The Messages API body for one chunk: cached document block, then the chunk block."""
    return {"model": model, "max_tokens": max_tokens, "temperature": 0.0, "messages": [
        {"role": "user", "content": [document_block(document),
                                     {"type": "text", "text": prompt.replace(PLACEHOLDER, chunk)}]}]}


def document_block(document: str) -> dict:
    """The cookbook's document block, marked for the prompt cache."""
    return {"type": "text", "text": DOCUMENT_CONTEXT_PROMPT.replace("{doc_content}", document),
            "cache_control": {"type": "ephemeral"}}


def _text_of(message: Message) -> str:
    return "".join(b.text for b in message.content if getattr(b, "type", "") == "text").strip()


def _need_text(message: Message) -> str | None:
    return None if _text_of(message) else "the reply has no text block"


class ClaudeContextualizer:
    """A contextualizer (document, chunks) → chunks with Claude's contexts; see module doc."""

    def __init__(self, model: str | None = None, prompt: str | None = None,
                 llm: LLM | None = None, workers: int = 4, max_tokens: int = 1024,
                 context_window: int | None = None,
                 log: Callable[[str], None] | None = note,
                 before_send: Callable[[], None] | None = None) -> None:
        self.model = model or DEFAULT_MODEL
        row = price(self.model)  # an unknown model fails here, before any call
        self.prompt = prompt or CHUNK_CONTEXT_PROMPT
        if PLACEHOLDER not in self.prompt:
            raise RagkitError(f"context prompt: '{PLACEHOLDER}' missing")
        self.llm = llm if llm is not None else LLM()
        if before_send is not None and not self.llm.offline:  # the stand-in costs nothing
            self.llm.before_send = before_send  # run before each paid request (`LLM`)
        self.workers, self.max_tokens, self.log = workers, max_tokens, log
        self.min_cacheable = row.min_cacheable
        self.context_window = context_window or row.context_window
        self.doc_tokens: dict[str, int] = {}
        self.notes: list[str] = []
        self.cut: list[str] = []  # chunk ids whose context stopped at max_tokens
        self._lock = threading.Lock()

    def __call__(self, doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        return self.many([(doc, chunks)], progress=False)[0]

    def many(self, pairs: Sequence[tuple[Document, Sequence[Chunk]]],
             progress: bool = True) -> list[list[Chunk]]:
        """Contexts for every (document, chunks) pair, one document after the other."""
        bar = progress_bar(total=sum(len(c) for _, c in pairs),
                           desc=f"contextualize {self.model}", unit="chunk",
                           disable=not progress, leave=False)
        short: list[str] = []
        try:
            with ThreadPoolExecutor(self.workers) as pool:
                return [self._document(doc, list(chunks), pool, bar, short)
                        for doc, chunks in pairs]
        finally:
            bar.close()
            self._cut_note()
            if short:
                self._note(f"{len(short)} document(s) below {self.model}'s minimum cacheable "
                           f"length ({self.min_cacheable} tokens) ran uncached: "
                           + ", ".join(short[:5]) + (", …" if len(short) > 5 else ""))

    def _cut_note(self) -> None:
        """One line naming the contexts that stopped at `max_tokens` (kept: the same request
        stops there again; a larger `max_tokens` is a new request)."""
        if self.cut:
            self._note(f"{len(self.cut)} context(s) stopped at max_tokens ({self.max_tokens}) "
                       f"and are cut off: " + ", ".join(self.cut[:5])
                       + (", …" if len(self.cut) > 5 else ""))
            self.cut = []

    def _note(self, line: str) -> None:
        self.notes.append(line)
        if self.log is not None:
            self.log(line)

    def _document(self, doc: Document, chunks: list[Chunk], pool: ThreadPoolExecutor,
                  bar: tqdm, short: list[str]) -> list[Chunk]:
        if not chunks:
            return []
        tokens = self._count_document(doc, short, f"; {_KEPT}")
        contexts = [""] * len(chunks)
        for text, members in self._parts(doc, chunks, tokens):
            first, rest = members[0], members[1:]
            contexts[first] = self._context(doc, text, chunks[first], bar)
            futures: list[Future] = [pool.submit(self._context, doc, text, chunks[i], bar)
                                     for i in rest]
            try:
                for i, future in zip(rest, futures):
                    contexts[i] = future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return [replace(chunk, context=context) for chunk, context in zip(chunks, contexts)]

    def _count_document(self, doc: Document, short: list[str], after: str = "") -> int:
        """The document's prompt tokens (`count_tokens`), recorded in `doc_tokens`; a document
        under the model's cache minimum is added to `short`. `after` ends an error line."""
        try:
            tokens = self.llm.count_tokens(model=self.model, messages=[
                {"role": "user", "content": [document_block(doc.text)]}])
        except (CacheUnusable, MissingKey):  # their own lines say what to do
            raise
        except RagkitError as exc:
            raise RagkitError(f"{doc.id}: counting tokens: {exc}{after}") from None
        self.doc_tokens[doc.id] = tokens
        if tokens < self.min_cacheable:
            short.append(f"{doc.id} ({tokens} tokens)")
        return tokens

    def _parts(self, doc: Document, chunks: list[Chunk], tokens: int
               ) -> list[tuple[str, list[int]]]:
        """The document text(s) to send, each with the indices of the chunks it holds."""
        per_char = tokens / max(len(doc.text), 1)
        longest = max(len(c.text) for c in chunks) * per_char
        budget = self.context_window - self.max_tokens - longest - ROOM
        if tokens <= budget:
            return [(doc.text, list(range(len(chunks))))]
        parts: list[tuple[str, list[int]]] = []
        for i, chunk in enumerate(chunks):
            if len(chunk.text) * per_char > budget:
                self._note(f"{doc.id}: chunk {chunk.id} alone exceeds {self.model}'s context "
                           f"window ({self.context_window} tokens): left without a context")
                continue
            if parts and len(self._span(doc, chunks, parts[-1][1] + [i])) * per_char <= budget:
                parts[-1][1].append(i)
            else:
                parts.append(("", [i]))
        parts = [(self._span(doc, chunks, members), members) for _, members in parts]
        self._note(f"{doc.id}: {tokens} tokens exceed {self.model}'s context window "
                   f"({self.context_window} tokens with room for the reply and one chunk): "
                   f"contextualized in {len(parts)} parts of whole consecutive chunks")
        return parts

    @staticmethod
    def _span(doc: Document, chunks: list[Chunk], members: list[int]) -> str:
        """The document text from the first member's start to the last one's end."""
        first, last = chunks[members[0]], chunks[members[-1]]
        if 0 <= first.start < last.end <= len(doc.text):
            return doc.text[first.start:last.end]
        return "\n".join(chunks[i].text for i in members)  # chunks given without offsets

    def _context(self, doc: Document, text: str, chunk: Chunk, bar: tqdm) -> str:
        request = build_request(self.model, text, chunk.text, self.prompt, self.max_tokens)
        try:
            reply = self.llm.create(check=_need_text, **request)
        except (CacheUnusable, MissingKey):  # the cache damaged or read-only, nothing sent
            raise  # without a key: their own lines say what to do
        except RagkitError as exc:
            raise RagkitError(f"{doc.id}: chunk {chunk.id}: {exc}; {_KEPT}") from None
        with self._lock:
            if reply.stop_reason == "max_tokens":
                self.cut.append(chunk.id)
            dollars = self.llm.usage.dollars(self.model)
            bar.set_postfix_str("stand-in, no cost" if dollars is None else money_text(dollars))
            bar.update(1)
        return _text_of(reply)


def project_cost(documents: Sequence[Document], chunks: Sequence[Chunk],
                 model: str = DEFAULT_MODEL, prompt: str = CHUNK_CONTEXT_PROMPT,
                 context_tokens: int = 100,
                 count: Callable[[str], int] | None = None) -> CorpusCost:
    """The projected bill for contextualizing `chunks` of `documents`, before any call.

    Token counts come from `count` (default: `ragkit.text_stats.estimate_tokens`, the
    offline stand-in's documented estimate, one token per 4 UTF-8 bytes — real tokenizers
    count more for code and Korean, so treat it as a lower bound); the instruction is the
    prompt without its chunk; each context is assumed `context_tokens` long (the seed's
    100). Documents under the model's minimum cacheable length are billed uncached, as the
    API does (`project_corpus_cost`).
    """
    count = count or estimate_tokens
    by_doc: dict[str, list[int]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(count(chunk.text))
    instruction = count(prompt.replace(PLACEHOLDER, ""))
    sizes = [(count(DOCUMENT_CONTEXT_PROMPT.format(doc_content=doc.text)), by_doc[doc.id])
             for doc in documents if by_doc.get(doc.id)]
    return project_corpus_cost(sizes, model, instruction, context_tokens)


def projection_table(documents: Sequence[Document], chunks: Sequence[Chunk],
                     models: Sequence[str] = ("claude-haiku-4-5", "claude-3-haiku-20240307"),
                     **options) -> "pd.DataFrame":
    """`project_cost` for each model, one row each: dollars cached and uncached, the same
    through the Message Batches API ("batch $": no cache hit, "batch + cache $": every
    cacheable document cached; caching in a batch is best-effort), documents, how many fall
    below the model's cache minimum, and the corpus's document tokens."""
    import pandas as pd
    rows = {}
    for model in models:
        cost = project_cost(documents, chunks, model, **options)
        rows[model] = {**vars(cost), "batch": cost.batch, "batch + cache": cost.batch_cached}
    table = pd.DataFrame(rows).T.rename(columns={  # a reader's words, not field names
        "cached": "cached $", "uncached": "uncached $", "batch": "batch $",
        "batch + cache": "batch + cache $", "below_cache_minimum": "under cache minimum",
        "document_tokens": "document tokens"})
    ints = ["documents", "under cache minimum", "document tokens"]
    table = table[["cached $", "uncached $", "batch $", "batch + cache $", *ints]]
    return table.astype({column: int for column in ints})
