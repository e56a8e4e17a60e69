"""Where ragkit remembers the batches it has submitted, so a killed run resumes them.

What it is: `Journal(api, backend)` keeps one small JSON file per open batch in
`$RAGKIT_HOME/batches/<api>/` — the batch id, the custom ids of its requests, when it was
created, its last known status and request counts, and anything the API needs to fetch its
results later (`extra`, e.g. Voyage's file ids). A record is written (atomically,
`ragkit.atomic.write_text`) the moment the API has accepted the batch, before anything
waits on it; a run that starts reads the records of the same `backend` (the API's base URL:
a stand-in's batch never answers for the real API) and polls the open batches whose requests
it still needs instead of submitting them again. A record is removed once its results are in
a cache (or the API no longer knows the batch), so the folder holds only unfinished work.

Stale records are pruned whenever the journal of an API is read (`open_batches`), whatever
backend wrote them: a record whose batch had ended when last polled and whose requests are
all in the cache the journal is given (`collected`: a run killed between caching the
results and removing the record, or a batch no later run needed), and a record older than
the API's retention (`RETENTION`: Anthropic keeps results 29 days after creation; a batch
ends within 24 hours, so none is still in progress by then, and its results are gone).
A record not known to have ended is never pruned for being collected; Voyage's records are
never pruned by age (no retention is published for its output files).

`batching(**options)` / `batch_options()`: the batch mode of a run (`ragkit index --batch`):
inside the context, the `claude` contextualizer (`ragkit.contextualize`) and the Voyage
embedders (`ragkit.embed`) send their work as batches, with these options (poll, timeout,
retry, log: `ragkit.message_batches.BatchOptions`). A mode of the run, not of the index:
contexts and vectors are the same either way.

`Journal.submitting()` is a lock (`filelock`, the file `<api>.lock` beside the folder) held from
reading the journal to writing the records of the batches a run submits, so two runs of one
command started at once submit one batch between them: the second reads the first's record
(or finds its results cached) and polls it. Waiting for results holds no lock; two runs
polling the same batch is harmless.

What it is not: a cache of results (those go to the paid-call cache or the embedding
cache). A Message Batches submit is journaled before it is sent too, so a batch accepted by
the API in the instant before its record was written (the process killed in between, or the
answer lost) is looked for on the next run (`ragkit.batch_submit`); a Voyage batch is not,
and its requests would be submitted again.
"""
from __future__ import annotations

import calendar
import errno
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragkit.atomic import write_text
from ragkit.documents import RagkitError
from ragkit.jsonl import parse_json
from ragkit.models import ragkit_home

RETENTION = {"anthropic": 29 * 86400}  # seconds an API keeps a batch's results after creation
OPEN = ("in_progress", "validating", "canceling", "ended", "finalizing")  # not yet collected
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
_MODE: list[dict[str, Any]] = []  # the options of the enclosing `batching` contexts


@contextmanager
def batching(**options: Any) -> Iterator[None]:
    """Within this block, paid work that can go through a batch API does (module docstring)."""
    _MODE.append(options)
    try:
        yield
    finally:
        _MODE.pop()


def batch_options() -> dict[str, Any] | None:
    """The options of the innermost `batching` context, or None outside one."""
    return dict(_MODE[-1]) if _MODE else None


@dataclass
class BatchRecord:
    """One submitted batch: what the API calls it and which of our requests it holds."""

    api: str  # "anthropic" or "voyage"
    backend: str  # the base URL the batch was sent to
    id: str
    custom_ids: list[str]
    created_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                  time.gmtime()))
    status: str = "in_progress"
    counts: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def split(items: Sequence[Any], max_items: int, max_bytes: int) -> list[list[Any]]:
    """Consecutive groups of batch requests (JSON-able) within an API's per-batch count and
    size limits, sizes counted as UTF-8 JSON plus a line break each."""
    groups: list[list[Any]] = []
    size = 0
    for item in items:
        n = len(json.dumps(item, ensure_ascii=False).encode("utf-8")) + 2
        if not groups or len(groups[-1]) >= max_items or size + n > max_bytes:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += n
    return groups


def journal_folder(api: str) -> Path:
    """`$RAGKIT_HOME/batches/<api>`: the records of `api`'s open batches."""
    return ragkit_home() / "batches" / api


class Journal:
    """The open batches of one API at one backend (see the module docstring)."""

    def __init__(self, api: str, backend: str, folder: Path | None = None,
                 collected: Callable[[list[str]], bool] | None = None) -> None:
        """`collected(custom_ids)`: True when every one of them has its result in the cache
        (for pruning, see the module docstring); None: no record is pruned as collected."""
        self.api, self.backend = api, backend
        self.folder = folder or journal_folder(api)
        self.collected = collected
        self.pruned: list[str] = []  # ids of the records the last `open_batches` removed

    def path(self, batch_id: str) -> Path:
        return self.folder / f"{_SAFE.sub('_', batch_id)}.json"

    def write(self, record: BatchRecord) -> None:
        """Store `record` now, atomically (a crash leaves the old record or the new one)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text(self.path(record.id), json.dumps(asdict(record), indent=1) + "\n")

    @contextmanager
    def submitting(self) -> Iterator[None]:
        """Hold the journal's submit lock: read it, submit, write the records, release. A
        journal folder that cannot be written (a read-only RAGKIT_HOME) is one line, before
        anything is submitted: a batch the API accepted could not be journaled, and a killed
        run would pay for it again (it was a traceback from the lock file)."""
        from filelock import FileLock  # deferred: only a batch run takes it
        lock = FileLock(str(self.folder.parent / f"{self.folder.name}.lock"))
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not os.access(self.folder, os.W_OK | os.X_OK):  # its lock's folder may be
                raise OSError(errno.EACCES, "cannot write in it")
            lock.acquire()
        except OSError as exc:
            raise RagkitError(f"{self.folder}: the batch journal cannot be written here "
                              f"({exc.strerror or exc}), so no batch is submitted: set "
                              f"RAGKIT_HOME to a folder that can be written, or run without "
                              f"--batch") from None
        try:
            yield
        finally:
            lock.release()

    def remove(self, record: BatchRecord) -> None:
        """Forget a batch whose results are collected (or that the API no longer knows)."""
        self.path(record.id).unlink(missing_ok=True)

    def stale(self, record: BatchRecord, now: float | None = None) -> bool:
        """True when `record` can go (module docstring): past the API's retention, or ended
        with every result in the cache."""
        retention = RETENTION.get(record.api)
        try:
            created = calendar.timegm(time.strptime(record.created_at, "%Y-%m-%dT%H:%M:%SZ"))
        except (TypeError, ValueError):
            created = None  # unreadable: never pruned by age
        if retention and created is not None and (now or time.time()) - created > retention:
            return True
        return (record.status == "ended" and self.collected is not None
                and self.collected(list(record.custom_ids)))

    def open_batches(self) -> list[BatchRecord]:
        """Every record of this API and backend, oldest first, once the stale records of the
        API are removed (`pruned`); a damaged file is one line naming it (delete it to forget
        that batch)."""
        self.pruned = []
        if not self.folder.is_dir():
            return []
        records = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                data = parse_json(path.read_text(encoding="utf-8"), path)
                record = BatchRecord(**data)
                if not isinstance(record.custom_ids, list) or not record.id:
                    raise TypeError("no id or custom_ids")
            except FileNotFoundError:  # collected and removed by a concurrent run just now
                continue
            except (OSError, ValueError, TypeError) as exc:
                raise RagkitError(f"{path}: not a readable batch record ({exc}); delete the "
                                  f"file to forget that batch (its requests are then sent "
                                  f"again)") from None
            if record.api != self.api:
                continue
            if self.stale(record):
                path.unlink(missing_ok=True)
                self.pruned.append(record.id)
            elif record.backend == self.backend:
                records.append(record)
        return sorted(records, key=lambda r: (r.created_at, r.id))
