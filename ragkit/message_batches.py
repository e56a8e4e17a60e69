"""Claude requests at batch prices: Anthropic's Message Batches API, resumable, cached.

What it is: `MessageBatches(llm, options).run(requests)` answers a list of Messages API
request bodies through `client.messages.batches` (the official SDK), billed at half the
interactive price (`ragkit.pricing.BATCH_DISCOUNT`):
1. each request's `custom_id` is its paid-call cache key (`ragkit.cache.request_key`, 64
   hex digits: within the API's `^[a-zA-Z0-9_-]{1,64}$`); a request already in the cache is
   answered from it and never sent;
2. the open batches in the journal (`ragkit.batch_journal`) that hold requests still needed
   are polled, never submitted again (a batch the API no longer knows — results are kept
   29 days; the offline stand-in forgets its batches when its process ends — has its
   requests submitted once more); what is left goes into new batches, split at the
   API's limits (`MAX_REQUESTS` requests, `MAX_BYTES` of JSON), each submit sent once and
   journaled before it is sent and as soon as the API accepts it — a submit that got no
   answer is looked for in the API's list on the next run (`ragkit.batch_submit`);
3. polling (`retrieve`) starts at 1 s and doubles up to `options.poll` seconds, printing
   the API's request counts when they change; Ctrl-C or `options.timeout` leaves the
   journal, so the same command run again collects the same batches;
4. an ended batch's results (`results`, any order, matched by custom_id) go into the
   paid-call cache — all of them, so a later interactive run of the same request reuses
   them — and its journal record is removed;
5. requests that came back errored, expired or canceled (or not at all) are retried as
   `options.retry` says: "interactive" (the default: a few requests at full price now,
   rather than another wait of up to 24 hours), "batch" (one more batch; what fails there
   too fails the run), or "none" (the run fails, naming the counts). The answered requests
   stay in the cache either way, so a re-run sends only the rest.

Cost: `report.usage` sums the usage each result reports, `report.dollars()` prices it at
batch prices: measured, never estimated (the offline stand-in's replies are not priced).
The run's settings, account and limits (`BatchOptions`, `BatchReport`, `BatchPending`,
`split`) live in `ragkit.batch_run`, re-exported here.

What it is not: a scheduler across commands (one run waits for its own batches), nor a way
to cancel batches (`client.messages.batches.cancel` does that).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from ragkit.batch_journal import BatchRecord, Journal
from ragkit.batch_submit import pending, recover, settle
from ragkit.batch_run import (FAILED, MAX_BYTES, MAX_REQUESTS, RETRY, BatchOptions,  # noqa: F401
                              BatchPending, BatchReport, split)
from ragkit.cache import CacheUnusable, request_key
from ragkit.documents import RagkitError
from ragkit.errors import MissingKey
from ragkit.llm import LLM, explain
from ragkit.llm_backends import OFFLINE_ID_PREFIX
from ragkit.pricing import Usage
from ragkit.text_stats import counted


class MessageBatches:
    """Answer Messages API requests through batches (see the module docstring)."""

    def __init__(self, llm: LLM, options: BatchOptions | None = None,
                 journal: Journal | None = None) -> None:
        self.llm, self.options = llm, options or BatchOptions()
        self.journal = journal or Journal(
            "anthropic", llm.backend,
            collected=lambda keys: bool(llm.cache) and llm.cache.holds(keys))
        self.report = BatchReport()
        self.batches = llm.client.messages.batches
        self.submit_client = llm.client.with_options(max_retries=0)  # `batch_submit`
        self.outcome: dict[str, str] = {}  # custom_id → result type of what did not succeed

    def plan(self, requests: Sequence[dict[str, Any]], journal: bool = True
             ) -> tuple[dict[str, Message], dict[str, dict], list[BatchRecord]]:
        """(answers from the cache, requests still needed by key, open batches holding some).

        The journal is read before the cache: reading it prunes a record whose results are
        all cached, and another run may finish caching a batch's results in between — read
        the other way round, those requests would look unanswered and their batch gone, and
        would be submitted again."""
        journaled = self.journal.open_batches() if journal else []  # False: unread, none
        answers: dict[str, Message] = {}
        needed: dict[str, dict] = {}
        for params in requests:
            key = request_key("/v1/messages", self.llm.backend, params)
            if key in answers or key in needed:
                continue
            entry = self.llm.cache.get(key) if self.llm.cache else None
            if entry is None:
                needed[key] = params
                continue
            self.llm.usage.record(params["model"], entry.usage, cached=True,
                                  priced=entry.priced)
            answers[key] = Message.construct(**entry.reply)
        self.report.from_cache += len(answers)
        open_ = [r for r in journaled if needed.keys() & set(r.custom_ids)]
        if journal and self.journal.pruned:
            self.options.log(f"journal: removed {len(self.journal.pruned)} stale batch "
                             f"record(s) from {self.journal.folder} (ended with every result "
                             f"in the call cache, or past the API's 29-day retention)")
        return answers, needed, open_

    def run(self, requests: Sequence[dict[str, Any]],
            check: Callable[[Message], str | None] | None = None,
            before: Callable[[set[str]], None] | None = None) -> list[Message]:
        """The reply to each request, in order (see the module docstring for how).

        `check(reply)` returns a complaint about an unusable reply (not cached, retried);
        `before(keys)` is called with the keys about to go into new batches, before any is
        submitted (for a cost projection). A call cache read-only here answers all, unjournaled
        (no result could be kept, nor the journal's lock taken; a request it lacks: its line)."""
        if self.llm.cache and self.llm.cache.read_only:
            answers = self.plan(requests, journal=False)[0]
            return [answers[request_key("/v1/messages", self.llm.backend, p)] for p in requests]
        with self.journal.submitting():  # two runs at once submit one batch between them
            answers, needed, open_ = self.plan(requests)
            open_ = recover(open_, self.batches, self.journal, self.submit_client,
                            self.options.log)  # a submit that got no answer: its batch
            queued = {k for r in open_ for k in r.custom_ids}
            fresh = {k: p for k, p in needed.items() if k not in queued}
            if fresh:  # new batches are paid for: `LLM.before_send` may stop them
                self.llm.before_send()
            if before is not None:
                before(set(fresh))
            if open_:
                self.report.resumed += [r.id for r in open_]
                self.options.log(f"resuming {len(open_)} batch(es) from the journal in "
                                 f"{self.journal.folder}: {', '.join(r.id for r in open_)}")
            made = self._submit(fresh)
        self._answer(needed, open_ + made, answers, check,
                     rounds=2 if self.options.retry == "batch" else 1)
        return [answers[request_key("/v1/messages", self.llm.backend, p)] for p in requests]

    def _answer(self, needed: dict[str, dict], open_: list[BatchRecord],
                answers: dict[str, Message], check, rounds: int) -> None:
        queued = set().union(*(r.custom_ids for r in open_)) if open_ else set()
        fresh = {k: p for k, p in needed.items() if k not in queued}
        failed: dict[str, str] = {}
        resent: set[str] = set()
        while True:
            open_ = open_ + self._submit(fresh)
            failed = self._wait(open_, needed, answers, check)
            open_ = []
            lost = [k for k, why in failed.items() if why == "lost" and k not in resent]
            if lost:  # the API no longer knows a journaled batch: send again, not a retry
                resent.update(lost)
                fresh = {k: needed[k] for k in lost}
                continue
            rounds -= 1
            if not failed or self.options.retry != "batch" or rounds == 0:
                break
            fresh = {k: needed[k] for k in failed}
        if not failed:
            return
        what = self.report.tally(failed)
        if self.options.retry != "interactive":
            raise RagkitError(f"{len(failed)} batch request(s) got no usable reply ({what}); "
                              f"the {len(answers)} answered are in the call cache: re-run to "
                              f"send the rest again, or use --batch-retry interactive")
        self.options.log(f"{len(failed)} batch request(s) got no usable reply ({what}): "
                         f"sending them interactively (full price)")
        for n, key in enumerate(failed, start=1):
            try:
                answers[key] = self.llm.create(check=check, **needed[key])
            except (CacheUnusable, MissingKey):  # its own line says what to do
                raise
            except RagkitError as exc:  # say where it stopped and that nothing paid is lost
                raise RagkitError(f"sending batch request {n} of {len(failed)} interactively: "
                                  f"{exc}; the {len(answers)} answered are in the call cache: "
                                  f"re-run to send the rest") from None
            self.report.retried += 1

    def _submit(self, fresh: dict[str, dict]) -> list[BatchRecord]:
        """New batches for `fresh` (key → params), each journaled once the API accepts it."""
        made = []
        items = [{"custom_id": key, "params": params} for key, params in fresh.items()]
        for group in split(items):
            marker = pending(self.llm.backend, [i["custom_id"] for i in group], self.batches)
            self.journal.write(marker)  # a batch made but not answered is found from it
            try:
                batch_id = self.submit_client.messages.batches.create(requests=group).id
            except (anthropic.APIError, ValueError) as exc:
                batch_id = settle(exc, marker, self.batches, self.journal, self.submit_client,
                                  group[0]["params"]["model"],
                                  {*self.report.created, *self.report.resumed})
                self.options.log(f"batch {batch_id}: made by an unanswered submit; collected")
            record = BatchRecord("anthropic", self.llm.backend, batch_id, marker.custom_ids)
            self.journal.write(record)  # before anything waits on it
            self.journal.remove(marker)
            self.report.created.append(batch_id)
            self.report.submitted += len(group)
            self.options.log(f"batch {batch_id}: {counted(len(group), 'request')} submitted "
                             f"(journal: {self.journal.path(batch_id)})")
            made.append(record)
        return made

    def _wait(self, open_: list[BatchRecord], needed: dict[str, dict],
              answers: dict[str, Message], check) -> dict[str, str]:
        """Poll until every batch in `open_` ended and is collected; the needed keys that got
        no usable reply, with why."""
        pending = {k for r in open_ for k in r.custom_ids if k in needed and k not in answers}
        start, delay = time.monotonic(), 1.0
        waiting = list(open_)
        try:
            while waiting:
                for record in list(waiting):
                    if self._poll(record, needed, answers, check):
                        waiting.remove(record)
                if not waiting:
                    break
                elapsed = time.monotonic() - start
                if self.options.timeout is not None and elapsed >= self.options.timeout:
                    raise BatchPending(f"{len(waiting)} batch(es) still in progress after "
                                       f"{elapsed:.0f} s ({', '.join(r.id for r in waiting)}); "
                                       f"{self._resume_hint()}")
                time.sleep(min(delay, self.options.poll))
                delay *= 2
        except KeyboardInterrupt:
            self.options.log(f"interrupted: batch(es) {', '.join(r.id for r in waiting)} keep "
                             f"running; {self._resume_hint()}")
            raise
        return {k: self.outcome.get(k, "missing") for k in pending if k not in answers}

    def _resume_hint(self) -> str:
        return (f"the journal in {self.journal.folder} keeps them: re-run the same command "
                "to collect their results without sending any request again")

    def _poll(self, record: BatchRecord, needed: dict[str, dict], answers: dict[str, Message],
              check) -> bool:
        """Check one batch; collect it if ended. True when it needs no more polling."""
        try:
            batch = self.batches.retrieve(record.id)
        except anthropic.NotFoundError:
            self.options.log(f"batch {record.id}: unknown to {self.llm.source} (its results "
                             f"are kept 29 days); its requests are sent again")
            self.outcome.update((k, "lost") for k in record.custom_ids if k not in answers)
            self.journal.remove(record)
            return True
        except (anthropic.APIError, ValueError) as exc:
            raise RagkitError(f"batch {record.id}: {explain(exc, 'batch', self.llm.client)}; "
                              f"{self._resume_hint()}") from None
        counts = batch.request_counts.to_dict()
        if counts != record.counts or batch.processing_status != record.status:
            record.counts, record.status = counts, batch.processing_status
            self.journal.write(record)
            done = sum(v for k, v in counts.items() if k != "processing")
            self.options.log(f"batch {record.id}: {batch.processing_status}, {done}/"
                             f"{len(record.custom_ids)} done ("
                             + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")")
        if batch.processing_status != "ended":
            return False
        self._collect(record, needed, answers, check)
        self.journal.remove(record)
        return True

    def _collect(self, record: BatchRecord, needed: dict[str, dict],
                 answers: dict[str, Message], check) -> None:
        """Every result of an ended batch into the paid-call cache; needed ones into answers."""
        outcome, sent, seen, left_out = self.outcome, set(record.custom_ids), set(), 0
        try:
            for line in self.batches.results(record.id):
                key, result = line.custom_id, line.result
                if key not in sent or key in seen or (key not in needed and self.llm.cache
                                                      and self.llm.cache.holds([key])):
                    left_out += key not in sent or key in seen  # not sent in it, given twice,
                    continue  # or kept by the run a download broke off in: counted there
                seen.add(key)
                if key in needed and (kept := self.llm.cached(key, needed[key])) is not None:
                    answers[key] = kept  # collected by another run first: counted there
                    continue
                if result.type != "succeeded":
                    outcome[key] = result.type
                    continue
                message = result.message
                model = needed[key]["model"] if key in needed else message.model
                usage = Usage.of(message.usage)
                priced = not str(message.id or "").startswith(OFFLINE_ID_PREFIX)
                self.report.usage += usage
                self.report.priced &= priced
                self.llm.usage.record(model, usage, cached=False, priced=priced,
                                      batch=True)
                if check is not None and check(message):
                    outcome[key] = "unusable"
                    continue
                self.report.succeeded += 1
                if self.llm.cache:
                    self.llm.cache.put(key, "/v1/messages", model, message.to_dict(),
                                       usage, priced, batch=True)
                if key in needed:
                    answers[key] = message
        except (anthropic.APIError, ValueError, httpx2.HTTPError) as exc:
            # the results stream past the SDK's request: a connection cut mid-download is
            # httpx's own error, not the SDK's; what was read so far is already cached
            why = (f"the download broke off ({exc})" if isinstance(exc, httpx2.HTTPError)
                   else explain(exc, 'batch', self.llm.client))
            raise RagkitError(f"batch {record.id}: reading its results: {why}; "
                              f"{self._resume_hint()}") from None
        if left_out:
            self.options.log(f"batch {record.id}: {left_out} result(s) for requests it was not "
                             f"sent or given twice, left out")
