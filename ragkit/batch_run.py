"""What a Message Batches run is told and what it tells: its settings, its account, its stop.

What it is: the vocabulary `ragkit.message_batches.MessageBatches` shares with its callers —
`BatchOptions` (how long to wait between polls, when to stop waiting, what to do with
requests that got no usable reply: the CLI's --batch-poll / --batch-timeout / --batch-retry),
`BatchReport` (requests answered by the cache, submitted, resumed, failed, retried, and the
usage the results reported, priced at batch prices), `BatchPending` (the run stopped
waiting; the journal keeps its batches) and `split` (groups within the API's per-batch
limits). Kept apart from the runner so a caller can set up and read a run without the
runner's SDK machinery, and so the runner reads as what it does.

What it is not: the runner (`ragkit.message_batches`), nor the journal of open batches
(`ragkit.batch_journal`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragkit.batch_journal import split as split_items
from ragkit.documents import RagkitError
from ragkit.pricing import Usage, batch_cost
from ragkit.progress import note

MAX_REQUESTS = 100_000  # per batch (Message Batches API limit)
MAX_BYTES = 256_000_000  # per batch: the API's 256 MB, counted as JSON bytes of the requests
RETRY = ("interactive", "batch", "none")
FAILED = ("errored", "expired", "canceled", "missing", "unusable", "lost")


@dataclass
class BatchOptions:
    """How a batch run waits and retries (the CLI's --batch-poll/--batch-timeout/--batch-retry)."""

    poll: float = 60.0  # longest wait between two status checks, seconds
    timeout: float | None = None  # stop waiting after this many seconds (journal kept)
    retry: str = "interactive"  # what to do with errored / expired requests: RETRY
    log: Callable[[str], None] = note  # stderr, or a notebook cell's plain output

    def __post_init__(self) -> None:
        if self.retry not in RETRY:
            raise RagkitError(f"unknown batch retry '{self.retry}' (known: {', '.join(RETRY)})")
        if self.poll <= 0 or (self.timeout is not None and self.timeout <= 0):
            raise RagkitError("batch poll interval and timeout must be positive seconds")


@dataclass
class BatchReport:
    """What a batch run did: requests answered by the cache, sent, resumed, failed, retried."""

    from_cache: int = 0
    submitted: int = 0
    created: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    succeeded: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    retried: int = 0
    usage: Usage = field(default_factory=Usage)
    priced: bool = True

    def tally(self, failed: dict[str, str]) -> str:
        """Add `failed` (key → why it got no usable reply) to `failed`'s counts; the counts of
        this call in words ("1 expired, 2 errored"), a result type this version does not
        know named as one, not dropped."""
        kinds = [kind if kind in FAILED else "of an unknown result type"
                 for kind in failed.values()]
        counts = {kind: kinds.count(kind) for kind in [*FAILED, "of an unknown result type"]
                  if kind in kinds}
        for kind, n in counts.items():
            self.failed[kind] = self.failed.get(kind, 0) + n
        return ", ".join(f"{n} {kind}" for kind, n in counts.items())

    def dollars(self, model: str) -> float | None:
        """The batch results' measured usage at batch prices; None for stand-in replies."""
        return batch_cost(self.usage, model) if self.priced else None


class BatchPending(RagkitError):
    """Batches still running when the run stopped waiting; the journal keeps them."""


def split(items: Sequence[dict], max_requests: int = MAX_REQUESTS,
          max_bytes: int = MAX_BYTES) -> list[list[dict]]:
    """Consecutive groups of batch requests within the API's count and size limits."""
    return split_items(items, max_requests, max_bytes)
