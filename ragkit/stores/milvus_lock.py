"""Milvus Lite's one-process rule, waited for and said in one line.

What it is: `wait_for_lite(uri)` — before ragkit opens a Milvus Lite database, wait (up to
`WAIT_SECONDS`, saying so once, `ragkit.progress.note`: stderr, or a notebook cell's plain
output) while another process holds it. Milvus Lite locks its folder (`<uri>/LOCK`, an
exclusive `flock`) for as long as a process has it open, and a second `ragkit search` of the
same index failed with milvus_lite's 20-line traceback and "Open local milvus failed", which
hid why.

`open_waiting(uri, opener)` opens through `opener` after that wait, and waits and opens
again when the open failed because another process took the database between the probe and
the open (a build and a search of one index started together: one of them failed with
"Open local milvus failed").

What it is not: a lock of ragkit's own. The probe takes the lock and lets go at once (held
across the open, it would refuse Milvus Lite's own lock in this process). Windows is not
probed.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ragkit.documents import RagkitError
from ragkit.progress import note

T = TypeVar("T")
WAIT_SECONDS = 60.0  # a search or an update of a small index holds it for seconds
_POLL = 0.2


def wait_for_lite(uri: str, wait: float | None = None) -> None:
    """Return once no other process holds the Milvus Lite database `uri`; RagkitError after
    `wait` seconds (default `WAIT_SECONDS`). Also silences milvus_lite's own logging of a
    failed start (a traceback on stderr), which ragkit reports in one line instead."""
    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)
    lock = Path(uri) / "LOCK"
    if sys.platform == "win32" or not lock.is_file():
        return
    wait = WAIT_SECONDS if wait is None else wait
    deadline, told = time.monotonic() + wait, False
    while _held(lock):
        if time.monotonic() >= deadline:
            raise RagkitError(f"{uri}: in use by another process (Milvus Lite opens a database "
                              f"in one process at a time) for over {wait:.0f} s; wait for it "
                              f"to finish, or serve the index from a Milvus server")
        if not told:
            note(f"ragkit: {uri} is in use by another process (Milvus Lite allows one at a "
                 f"time); waiting up to {wait:.0f} s")
            told = True
        time.sleep(_POLL)


def open_waiting(uri: str, opener: Callable[[], T], attempts: int = 3) -> T:
    """`opener()`, which opens the Milvus Lite database `uri`, once no other process holds
    it (`wait_for_lite`); after a failed open that another process holds the database,
    wait and open again (up to `attempts` opens). Any other failure is raised at once."""
    for attempt in range(attempts):
        wait_for_lite(uri)
        try:
            return opener()
        except Exception:
            lock = Path(uri) / "LOCK"
            if attempt + 1 == attempts or sys.platform == "win32" or not _held(lock):
                raise
    raise AssertionError("unreachable")  # the last attempt returned or raised


def _held(lock: Path) -> bool:
    """True when another process holds `lock` (probed without waiting, released at once)."""
    import fcntl  # deferred: POSIX only
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing the descriptor releases a lock taken through it
    return False
