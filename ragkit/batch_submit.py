"""A Message Batches submit sent once, and the batch it made found again when its answer
never came.

What it is:
- `pending(backend, custom_ids, batches)`: the journal record (`ragkit.batch_journal`)
  written before a submit is sent, status `PENDING`, noting the newest batch the API lists
  then (`after`: the batch the submit makes is listed before it); `ragkit.message_batches`
  replaces it with the batch's own record once the API answers, and removes it when the API
  refused the batch;
- `uncertain(exc)`: whether a submit that failed may still have made a batch — no answer in
  time, the connection cut, a 5xx, a reply that could not be read — rather than a refusal
  (4xx) that made none;
- `found(batches, record, taken, journal)`: the batch such a submit made, looked up in the
  API's list of batches (`client.messages.batches.list`, newest first): listed before the
  record's `after` (made since the submit began), created since the record (less `SKEW` for
  the clocks, the one test where `after` is unknown), holding as many requests as the
  record, neither in `taken` nor journaled by any record; the oldest if several. None when
  there is none: its requests are sent. An older batch of the same size — one collected a
  minute before, another command's open one — was taken, and the batch made never collected;
- `settle(exc, marker, ...)`: right after a submit failed, the batch it made all the same
  (`found` after `RECHECK` seconds), so the run goes on; else one line — saying, when the API
  may have made one, that a re-run looks for it (the record stays);
- `recover(open_, ...)`: on the next run, the journal's open records with each `PENDING` one
  replaced by the record of the batch `found`, or dropped.

Why: the SDK sends a request again after a timeout or a 5xx, and a batch submit the API had
accepted but not yet answered was paid for three times (three batches, none journaled), and
once more by the re-run. A submit is now sent once (`max_retries=0`), and a re-run finds
what it made instead of paying again; a run killed between the API accepting a batch and its
record being written is found the same way.

What it is not: proof that a batch found holds these requests — the API shows a batch's
requests only in its results. A batch of the same size that another user of the same key
made between the list and the submit could be taken; its results then match none of the
custom ids, are left out (`MessageBatches._collect`), and the requests are retried as any
missing result is.
"""
from __future__ import annotations

import calendar
import itertools
import time
import uuid
from collections.abc import Callable, Collection
from typing import Any

import anthropic

from ragkit.batch_journal import BatchRecord, Journal
from ragkit.documents import RagkitError
from ragkit.llm import explain

PENDING = "submitting"  # a record whose submit got no answer (yet)
RECHECK = 2.0  # seconds before a submit that got no answer is looked for in the same run
SKEW = 600  # seconds a batch's created_at may precede the record's: the clocks differ
LISTED = 200  # the API's most recent batches looked through


def pending(backend: str, custom_ids: list[str], batches: Any) -> BatchRecord:
    """The record written before a submit of `custom_ids` is sent to `backend`, with the id
    of the newest batch `batches` lists (`after`: "" for none; absent when the list failed)."""
    record = BatchRecord("anthropic", backend, f"submitting_{uuid.uuid4().hex[:16]}",
                         list(custom_ids), status=PENDING)
    try:
        newest = batches.list(limit=1).data
    except (anthropic.APIError, ValueError):  # the submit says what is wrong, if anything
        return record
    record.extra["after"] = newest[0].id if newest else ""
    return record


def uncertain(exc: Exception) -> bool:
    """True when the failed submit may have made a batch (module docstring)."""
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code >= 500
    return isinstance(exc, (anthropic.APIConnectionError, ValueError))  # timeouts included


def found(batches: Any, record: BatchRecord, taken: Collection[str],
          journal: Journal) -> str | None:
    """The id of the batch the submit of `record` made, or None (module docstring);
    `batches` is `client.messages.batches`, `taken` the ids this run holds, `journal` the
    records of every run."""
    since = calendar.timegm(time.strptime(record.created_at, "%Y-%m-%dT%H:%M:%SZ")) - SKEW
    matches = []
    for batch in itertools.islice(batches.list(limit=100), LISTED):
        if batch.id == record.extra.get("after"):
            break  # it and every batch listed after it were there before the submit
        created = batch.created_at.timestamp()
        size = sum(v for v in batch.request_counts.to_dict().values() if v)
        if created >= since and size == len(record.custom_ids) and batch.id not in taken \
                and not journal.path(batch.id).exists():
            matches.append((created, batch.id))
    return min(matches)[1] if matches else None


def recover(open_: list[BatchRecord], batches: Any, journal: Journal,
            client: anthropic.Anthropic, log: Callable[[str], None]) -> list[BatchRecord]:
    """`open_` with each `PENDING` record replaced by the record of the batch its submit made
    (`found` in `batches`, journaled), or dropped when it made none (its requests are then
    sent); `client` names the endpoint in a failure's line, `log` says what was decided."""
    out, taken = [], {r.id for r in open_}
    for record in open_:
        if record.status != PENDING:
            out.append(record)
            continue
        held = [r.id for r in open_ if r.status != PENDING and
                set(record.custom_ids) <= set(r.custom_ids)]
        if held:  # found and journaled by a run killed before it dropped this record
            journal.remove(record)
            log(f"the submit of {record.created_at} that got no answer made batch {held[0]}, "
                f"already journaled")
            continue
        try:
            made = found(batches, record, taken, journal)
        except (anthropic.APIError, ValueError) as exc:
            raise RagkitError(f"looking for the batch an unanswered submit may have made "
                              f"({journal.path(record.id)}): {explain(exc, 'batch', client)}; "
                              f"where the API cannot list batches, delete that file to send "
                              f"its requests (a batch it made is then paid for again)"
                              ) from None
        if made is None:
            journal.remove(record)
            log(f"the submit of {record.created_at} that got no answer made no batch; its "
                f"requests are sent now")
            continue
        adopted = BatchRecord("anthropic", record.backend, made, record.custom_ids)
        journal.write(adopted)  # first: killed in between, the batch is still journaled
        journal.remove(record)
        taken.add(made)
        log(f"batch {made}: made by the submit of {record.created_at} that got no answer; "
            f"collected, not sent again")
        out.append(adopted)
    return out


def settle(exc: Exception, marker: BatchRecord, batches: Any, journal: Journal,
           client: anthropic.Anthropic, model: str, taken: Collection[str]) -> str:
    """The id of the batch the failed submit of `marker`'s requests made all the same, looked
    for after `RECHECK` seconds; else a RagkitError from `exc` — `marker` removed when the API
    refused (no batch made), kept when it may have made one (module docstring)."""
    why = explain(exc, model, client)
    if not uncertain(exc):
        journal.remove(marker)
        raise RagkitError(why) from None
    time.sleep(RECHECK)
    try:
        made = found(batches, marker, taken, journal)
    except (anthropic.APIError, ValueError):
        made = None
    if made is None:
        raise RagkitError(f"{why}; the API may have made the batch all the same: the same "
                          f"command run again looks for it before sending any of its "
                          f"requests again") from None
    return made
