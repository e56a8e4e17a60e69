"""Where the embedding cache file lives, and deleting it (`ragkit cache clear --embeddings`).

What it is: the file's default path; `remove_cache`, which waits for a process embedding
into it; `holding(lock, path)`, that wait, said in one line when there is one; `file_id`,
what tells the file replaced since. What it is not: the cache (`ragkit.embed.cache`, which
re-exports the path and `remove_cache`).
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ragkit.errors import RagkitError
from ragkit.models import ragkit_home
from ragkit.progress import note, unwatched_kernel
from ragkit.sqlite_files import remove_database, resolved


def default_cache_path() -> Path:
    return ragkit_home() / "cache" / "embeddings.sqlite"


def file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path` (through a link, the file it names), read without
    opening it; None when there is none: what tells a file deleted or replaced since."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


# A process says it waits to embed into a cache file at most once a minute: a cell embeds a
# question or a rung a call, and beside a second notebook filling the cache it printed the
# line 23-43 times (`said` is one call's flag).
WAIT_NOTE_SECONDS = 60.0
_WAIT_SAID: dict[str, float] = {}  # cache file -> when this process last said it waits


@contextmanager
def holding(lock: FileLock, path: Path, said: list[bool] | None = None,
            embedding: bool = False) -> Iterator[None]:
    """Hold the embedding cache's `lock` (of the file at `path`). Having to wait for another
    process first is said in one line (`ragkit.progress.note`), once per `said` (a caller's
    flag, set here): a wait for another run's whole embedding went silently (seen once for
    4 min 46 s), since that run takes the lock again after each batch. For an `embedding`,
    at most once per `WAIT_NOTE_SECONDS` in a process, and not in a kernel that papermill or
    nbval runs (no Jupyter session): two notebooks run side by side on a new cache wrote it
    into outputs compared with the committed ones."""
    try:
        lock.acquire(blocking=False)
    except Timeout:
        now = time.monotonic()  # an embedding's wait said within the minute: not again
        quiet = embedding and now - _WAIT_SAID.get(str(path), -math.inf) < WAIT_NOTE_SECONDS
        if (said is None or not said) and not quiet:  # a quiet wait leaves `said` empty:
            if not (embedding and unwatched_kernel()):   # its next wait may say it
                note(f"waiting for another ragkit process embedding into {path} ...")
                if embedding:
                    _WAIT_SAID[str(path)] = now
            if said is not None:
                said.append(True)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def remove_cache(path: Path | None = None) -> int:
    """Delete the embedding cache file (default `default_cache_path()`), damaged or not, once
    no process is embedding a batch into it (its lock file); returns the bytes freed, its
    -wal and -shm files counted (`remove_database`). A folder that cannot be written
    (read-only media) is one `RagkitError` line, and so is a link in a loop (`resolved`,
    as `CachedEmbedder` says it; it was "no embedding cache"). Having to wait for a batch
    (12-26 s with e5-small; Voyage as long as its call) is said first, in one line
    (`ragkit.progress.note`: stderr, or the cell's plain output in a notebook, not a pink
    strip): the clear looked hung."""
    path = Path(path) if path is not None else default_cache_path()
    resolved(path, "embedding cache")  # a link loop: the line `index` says, not "no cache"
    if not path.exists():
        return 0
    try:
        with holding(FileLock(str(path) + ".lock"), path):
            return remove_database(path)
    except OSError as exc:  # a read-only folder was a traceback from the lock file
        raise RagkitError(f"{path}: cannot delete the embedding cache "
                          f"({exc.strerror or exc})") from None
