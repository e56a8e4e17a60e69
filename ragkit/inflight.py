"""One paid call in flight per request across processes: the second waits, then reads the
cache.

What it is: `InFlight(cache_path)`, whose `holding(key)` context is an exclusive POSIX
record lock on one byte of `<cache>.inflight` (the byte chosen by the request key), held
while the request is sent and its reply stored. `ragkit.llm.LLM` takes it after a cache miss
and looks in the cache again once it holds it: a run started beside another on the same
`RAGKIT_HOME` waits for the other's call and reads its reply instead of paying for it again.

Why: the cache's promise is that no request is paid for twice, and two `ragkit index
--contextualizer claude` runs started together sent every request twice (196 paid calls for
98 chunks); batches had their journal lock, the embedding cache its own, Claude calls none.

What it is not: a lock between threads of one process (record locks belong to the process;
one process's threads send different requests), nor held anywhere but around one call. Where
the lock file cannot be made or locked (a read-only folder, a file system without record
locks), calls go unguarded as before. The file is opened once per process and never closed:
closing any descriptor of it would drop every lock the process holds on it.
"""
from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SLOTS = 1 << 30  # bytes a key's lock can fall on: collisions (a needless wait) are rare
_OPEN: dict[Path, int | None] = {}  # lock file → its descriptor in this process (None: none)
_GUARD = threading.Lock()


def _descriptor(path: Path) -> int | None:
    with _GUARD:
        if path not in _OPEN:
            try:
                _OPEN[path] = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                                      0o600)  # a link there: unguarded, never followed
            except OSError:
                _OPEN[path] = None
        return _OPEN[path]


class InFlight:
    """Per-request locks beside the call cache at `cache_path` (module docstring)."""

    def __init__(self, cache_path: Path) -> None:
        self.path = cache_path.with_name(cache_path.name + ".inflight")

    @contextmanager
    def holding(self, key: str) -> Iterator[None]:
        """Hold the lock of `key` (hex digits: a cache key) for the body's duration."""
        fd = _descriptor(self.path)
        slot = int(key[:15], 16) % SLOTS
        try:
            if fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, slot, os.SEEK_SET)
        except OSError:  # no record locks here: unguarded, as before
            fd = None
        try:
            yield
        finally:
            if fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot, os.SEEK_SET)
