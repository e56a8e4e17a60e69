"""What the two sqlite caches (the paid-call cache, the embedding cache) share about their file.

What it is: `sqlite_errors`, which turns sqlite's errors on a cache file into one line naming
it (`DamagedCache` for a damaged one), `remove_database`, which deletes a cache file with
its write-ahead log and shared-memory index, and, for a cache on read-only media (a cache
prepared on one machine and mounted read-only elsewhere, an immutable file), `cannot_write`
to tell and `connect_read_only` to read it. What it is not: either cache (`ragkit.cache`,
`ragkit.embed.cache`), nor a general sqlite layer; each cache opens its own connections.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ragkit.errors import RagkitError

_DAMAGE_SIGNS = ("malformed", "not a database", "corrupt", "encrypted")


class DamagedCache(RagkitError):
    """sqlite reports a cache file as damaged: `path` names it, `reason` is sqlite's words."""

    def __init__(self, message: str, path: Path, reason: str) -> None:
        super().__init__(message)
        self.path, self.reason = path, reason


@contextmanager
def sqlite_errors(path: Path, what: str, clear: tuple[str, str]) -> Iterator[None]:
    """Turn a sqlite error on the cache file `path` into one line naming it.

    A damaged file (sqlite: "database disk image is malformed", "file is not a database")
    is a `DamagedCache` that says what to run, `clear[0]`, or to delete the file, and what
    that costs, `clear[1]`; any other sqlite error (locked, disk full, read-only) is a
    `RagkitError` with sqlite's words. Programming errors (`sqlite3.ProgrammingError`,
    `InterfaceError`) are not caught.
    """
    try:
        yield
    except sqlite3.DatabaseError as exc:
        reason = str(exc)
        if any(sign in reason.lower() for sign in _DAMAGE_SIGNS):
            raise DamagedCache(f"{path}: the {what} is damaged ({reason}); run `{clear[0]}` or "
                               f"delete the file ({clear[1]})", path, reason) from None
        raise RagkitError(f"{path}: the {what} cannot be used ({reason})") from None


def remove_database(path: Path) -> int:
    """Delete a sqlite file with its write-ahead log and shared-memory index; returns the
    bytes freed, all three counted (a writer killed mid-run leaves its -wal, which holds
    what it stored since the last checkpoint and can outgrow the file itself).

    Through a symbolic link, the file it names goes, with the -wal and -shm sqlite keeps
    beside that file, and the link stays: it is the user's choice of where the cache lives,
    so the next use starts the new file there, as emptying an intact cache keeps both.
    (Unlinking the link left the old file, damaged or full, where nothing used it.)"""
    path, freed = path.resolve(), 0
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            size = part.lstat().st_size
        except FileNotFoundError:
            continue
        part.unlink(missing_ok=True)
        freed += size
    return freed


def cannot_write(path: Path) -> bool:
    """True when the sqlite file at `path` (through a link, the file it names) or the folder
    it is in (or would be made in) cannot be written: a read-only mount, an immutable file.
    The kernel's access(2) answers, so root is told the truth too (a permission bit does not
    stop root; a read-only mount does). False where nothing says so: the caller then writes
    as usual, and a failure there is its one-line error."""
    target = path.resolve()
    if target.exists():
        return not (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK | os.X_OK))
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK)


def connect_read_only(path: Path, timeout: float = 60) -> sqlite3.Connection:
    """A connection that only reads the existing sqlite file at `path`.

    A file in WAL mode is read through a shared-memory index (-shm) sqlite creates beside
    it; where that folder cannot be written, the file is opened as immutable instead (no
    -shm, no locks: nothing can write it through this mount), and what a -wal left there by
    a killed writer holds is not seen — entries missed, never wrong ones. Where the folder
    can be written (an immutable file in it), sqlite reads as usual, with its locks."""
    target = path.resolve()
    uri = f"file:{quote(str(target))}?mode=ro"
    if not os.access(target.parent, os.W_OK | os.X_OK):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=timeout)
