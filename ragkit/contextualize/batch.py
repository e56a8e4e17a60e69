"""Claude-written chunk contexts at batch prices: `ragkit index --contextualizer claude --batch`.

What it is: `BatchContextualizer` builds exactly the requests `ClaudeContextualizer` sends
one by one (same document block with `cache_control`, same instruction, same split of a
document over the context window), but sends those the paid-call cache cannot answer
through Anthropic's Message Batches API (`ragkit.message_batches`): half the price, results
within 24 hours (most within the hour), prompt caching best-effort. Because a request's
batch `custom_id` is its cache key and its result lands in the cache, a batch run and an
interactive run of the same corpus answer each other's requests.

Before submitting it prints a projection at batch prices, labelled as one (from token
estimates, `project_cost`: the "batch + cache" floor if every document's cache is hit as
interactively, the "batch" ceiling if none is); after, the cost measured from the usage
each result reports, at batch prices. Offline (no ANTHROPIC_API_KEY) the stand-in answers
the batch at once, at no cost.

What it is not: faster. A batch may take hours; `--batch-timeout` stops waiting and the
journal lets the same command pick the batches up later.
"""
from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ragkit.cache import CallCache, request_key
from ragkit.contextualize.claude import (ClaudeContextualizer, _need_text, _text_of,
                                         build_request, project_cost)
from ragkit.documents import Chunk, Document
from ragkit.llm import LLM, UsageLog
from ragkit.message_batches import BatchOptions, MessageBatches
from ragkit.money import dollars as money_text
from ragkit.pricing import BATCH_DISCOUNT, BATCH_PRICES_DATE
from ragkit.text_stats import counted

__all__ = ["BatchContextualizer", "BatchOptions", "ClaudeContextualizer", "batch_round_trip"]


class BatchContextualizer(ClaudeContextualizer):
    """`ClaudeContextualizer` whose uncached requests go through Message Batches."""

    def __init__(self, *args, options: BatchOptions | dict | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.options = BatchOptions(**options) if isinstance(options, dict) else \
            options or BatchOptions()
        self.report = None

    def many(self, pairs: Sequence[tuple[Document, Sequence[Chunk]]],
             progress: bool = True) -> list[list[Chunk]]:
        """Contexts for every (document, chunks) pair, through as few batches as fit."""
        plan: list[tuple[int, int, dict]] = []  # (pair, chunk, request)
        short: list[str] = []
        for d, (doc, chunks) in enumerate(pairs):
            chunks = list(chunks)
            if not chunks:
                continue
            tokens = self._count_document(doc, short)
            for text, members in self._parts(doc, chunks, tokens):
                plan += [(d, i, build_request(self.model, text, chunks[i].text, self.prompt,
                                              self.max_tokens)) for i in members]
        if short:
            self._note(f"{len(short)} document(s) below {self.model}'s minimum cacheable "
                       f"length ({self.min_cacheable} tokens) run uncached: "
                       + ", ".join(short[:5]) + (", …" if len(short) > 5 else ""))
        runner = MessageBatches(self.llm, self.options)
        self.report = runner.report
        replies = runner.run([request for *_, request in plan], check=_need_text,
                             before=lambda fresh: self._project(pairs, plan, fresh))
        contexts = [[""] * len(chunks) for _, chunks in pairs]
        for (d, i, _), reply in zip(plan, replies):
            contexts[d][i] = _text_of(reply)
            if reply.stop_reason == "max_tokens":
                self.cut.append(list(pairs[d][1])[i].id)
        self._measured(runner)
        self._cut_note()
        return [[replace(chunk, context=context) for chunk, context in zip(chunks, texts)]
                for (_, chunks), texts in zip(pairs, contexts)]

    def _project(self, pairs, plan, fresh: set[str]) -> None:
        """One line: what the requests about to be submitted would cost at batch prices."""
        keep = [(d, i) for d, i, request in plan
                if request_key("/v1/messages", self.llm.backend, request) in fresh]
        if not keep:
            return
        docs = {d for d, _ in keep}
        chunks = [list(pairs[d][1])[i] for d, i in keep]
        cost = project_cost([pairs[d][0] for d in sorted(docs)], chunks, self.model,
                            self.prompt)
        who = " (the offline stand-in answers: no cost)" if self.llm.offline else ""
        self._note(f"projection at batch prices ({BATCH_DISCOUNT * 100:.0f} % of list, prices of "
                   f"{BATCH_PRICES_DATE}) for {counted(len(keep), 'request')} over "
                   f"{counted(len(docs), 'document')}: {money_text(cost.batch_cached)} "
                   f"(batch + cache: every document's cache hit) to {money_text(cost.batch)} "
                   f"(batch: no cache hit; caching in a batch is best-effort){who}")

    def _measured(self, runner: MessageBatches) -> None:
        """One line: what the batches cost, from the usage their results report."""
        report = runner.report
        if not (report.succeeded or report.created or report.resumed):
            return
        spent = report.dollars(self.model)
        u = report.usage
        money = "offline stand-in, no cost" if spent is None else \
            f"{money_text(spent)} measured at batch prices"
        failed = ", ".join(f"{n} {k}" for k, n in report.failed.items()) or "none failed"
        self._note(f"batches: {len(report.created)} created, {len(report.resumed)} resumed; "
                   f"{report.succeeded} results (tokens in {u.input}, out {u.output}, cache "
                   f"write {u.cache_write}, cache read {u.cache_read}): {money}; {failed}"
                   + (f", {report.retried} retried interactively" if report.retried else "")
                   + f"; {report.from_cache} from the call cache{u.unknown()}")


def batch_round_trip(document: Document, chunks: Sequence[Chunk]) -> str:
    """One line: the contexts of `chunks` through a Message Batch against one by one.

    Both go through a fresh, private call cache (so the batch is really sent, not answered by
    an earlier run) and the client `ragkit.llm.make_client` builds: offline, the stand-in,
    which answers a batch at once; with ANTHROPIC_API_KEY, the real API, where the batch may
    take hours — notebook 02 calls this only offline. The journal and its records are the
    ordinary ones in RAGKIT_HOME."""
    with tempfile.TemporaryDirectory() as scratch:
        cache = CallCache(Path(scratch) / "calls.sqlite")
        try:
            llm = LLM(cache=cache, usage=UsageLog())
            batch = BatchContextualizer(llm=llm, log=None, options={"log": lambda line: None})
            by_batch = batch(document, chunks)
            one_by_one = ClaudeContextualizer(llm=llm, log=None)(document, chunks)
        finally:
            cache.close()
    same = [c.context for c in by_batch] == [c.context for c in one_by_one]
    return (f"{len(by_batch)} chunks of {document.id}: {len(batch.report.created)} batch, "
            f"{batch.report.succeeded} results; the same contexts as one by one: {same}")
