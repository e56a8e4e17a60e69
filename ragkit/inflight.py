"""One paid call in flight per request across processes and threads: the second waits, then
reads the cache.

What it is: `InFlight(cache_path)`, whose `holding(key)` context is an exclusive lock on one
byte of `<cache>.inflight` (the byte chosen by the request key), held while the request is
sent and its reply stored. `ragkit.llm.LLM` takes it after a cache miss and looks in the
cache again once it holds it: a run started beside another on the same `RAGKIT_HOME` waits
for the other's call and reads its reply instead of paying for it again, and so does a
thread of the same run asking the same request (two identical chunks of one document).

Why: the cache's promise is that no request is paid for twice, and two `ragkit index
--contextualizer claude` runs started together sent every request twice (196 paid calls for
98 chunks); batches had their journal lock, the embedding cache its own, Claude calls none.

How: an open-file-description lock (Linux's `F_OFD_SETLKW`) on a descriptor opened for that
one holding and closed after it. Not a POSIX record lock (`lockf`): those belong to the
process, so threads of one process never exclude each other, and with the contextualizer's
worker threads in two processes the kernel reported false deadlocks (EDEADLK) between locks
that were not deadlocked — each such call went unguarded, and two runs of 40 requests paid
for 8 to 18 of them twice. An OFD lock belongs to its descriptor: no deadlock detection,
and closing it drops only its own lock.

What it is not: held anywhere but around one call. Where the lock file cannot be made or
locked (a read-only folder, a file system or kernel without OFD locks), calls go unguarded
as before.
"""
from __future__ import annotations

import fcntl
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

SLOTS = 1 << 30  # bytes a key's lock can fall on: collisions (a needless wait) are rare
# struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for an OFD lock), padding
_FLOCK = struct.Struct("hhqqi4x")
_HELD: set[int] = set()  # this process's descriptors holding a lock now
_OWNER: dict[tuple[str, int], int] = {}  # (lock file, byte) → the thread holding it here


def _forget_in_child() -> None:
    """A child forked while a lock is held closes its copies of the descriptors: an OFD lock
    lasts while any descriptor of it is open, so the child kept it after the parent let go
    (another process waited for a lock nobody held)."""
    for fd in _HELD:
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()
    _OWNER.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class InFlight:
    """Per-request locks beside the call cache at `cache_path` (module docstring)."""

    def __init__(self, cache_path: Path) -> None:
        """The lock file sits beside the cache file itself: two homes whose caches are links
        to one file share their locks (beside each link, they excluded nothing)."""
        real = Path(os.path.realpath(cache_path))
        self.path = real.with_name(real.name + ".inflight")

    @contextmanager
    def holding(self, key: str) -> Iterator[None]:
        """Hold the lock of `key` (hex digits: a cache key) for the body's duration. A thread
        holding it already goes on unguarded (reentrant): a streamed reply holds it while its
        generator lives, and a `create` of the same request in that thread, the stream
        still open (kept in a variable, or by a notebook's traceback), waited for itself
        for ever."""
        slot = (str(self.path), int(key[:15], 16) % SLOTS)
        if _OWNER.get(slot) == threading.get_ident():
            yield
            return
        fd = _locked(self.path, slot[1])
        if fd is not None:
            _OWNER[slot] = threading.get_ident()
        try:
            yield
        finally:
            if fd is not None:
                _OWNER.pop(slot, None)
                _HELD.discard(fd)
                os.close(fd)  # drops this descriptor's lock, and no other


def _locked(path: Path, slot: int) -> int | None:
    """A new descriptor of `path` holding the OFD write lock of byte `slot` (waited for), or
    None where there is none to be had (unguarded)."""
    try:  # a link there: unguarded, never followed
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_OFD_SETLKW"),
                    _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, slot, 1, 0))
    except (OSError, AttributeError):  # no OFD locks here (not Linux, an old kernel, NFS)
        os.close(fd)
        return None
    except BaseException:  # Ctrl-C while waiting: the descriptor is not left open
        os.close(fd)
        raise
    _HELD.add(fd)
    return fd
