"""Where the embedding cache file lives, and deleting it (`ragkit cache clear --embeddings`).

What it is: the file's default path and `remove_cache`, which waits for a process embedding
into it. What it is not: the cache (`ragkit.embed.cache`, which re-exports both names).
"""
from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from ragkit.errors import RagkitError
from ragkit.models import ragkit_home
from ragkit.progress import note
from ragkit.sqlite_files import remove_database, resolved


def default_cache_path() -> Path:
    return ragkit_home() / "cache" / "embeddings.sqlite"


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
    lock = FileLock(str(path) + ".lock")
    try:
        try:
            lock.acquire(blocking=False)
        except Timeout:
            note(f"waiting for another ragkit process embedding into {path} ...")
            lock.acquire()
        try:
            return remove_database(path)
        finally:
            lock.release()
    except OSError as exc:  # a read-only folder was a traceback from the lock file
        raise RagkitError(f"{path}: cannot delete the embedding cache "
                          f"({exc.strerror or exc})") from None
