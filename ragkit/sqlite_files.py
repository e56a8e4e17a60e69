"""What the two sqlite caches (the paid-call cache, the embedding cache) share about their file.

What it is: `sqlite_errors`, which turns sqlite's errors on a cache file into one line naming
it (`DamagedCache` for a damaged one), `remove_database`, which deletes a cache file with
its write-ahead log and shared-memory index, `use_wal`, which puts a new file in WAL mode,
and, for a cache on read-only media (a cache prepared on one machine and mounted read-only
elsewhere, an immutable file), `cannot_write` to tell, `ReadOnlyFile` to read it (its home
is `ragkit.sqlite_read_only`), `read_only_errors` for its errors (a damaged one cannot be
cleared there) and `ReadOnlyCache` for what it cannot keep; and `resolved`, where a cache
path leads (a link loop one line), and `stranger` and `not_a_cache`: whether a file there
is not sqlite at all, and the line for one. What it is not: either cache (`ragkit.cache`,
`ragkit.embed.cache`), nor a general sqlite layer; each cache opens its own connections.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragkit.atomic import nearest_existing
from ragkit.errors import RagkitError
# its home is ragkit.sqlite_read_only; the caches import it from here
from ragkit.sqlite_read_only import ReadOnlyFile  # noqa: F401

_DAMAGE_SIGNS = ("malformed", "not a database", "corrupt", "encrypted")
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every sqlite file


class CacheUnusable(RagkitError):
    """The cache file itself stops the command, whatever the call: its line says what to do,
    so a caller passes it on as it is (its "what was obtained is kept in the cache, rerun"
    would be untrue)."""


class DamagedCache(CacheUnusable):
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
            if stranger(path):  # `clear[0]` refuses it: say what works instead
                raise not_a_cache(path, what, "used") from None
            raise DamagedCache(f"{path}: the {what} is damaged ({reason}); run `{clear[0]}` or "
                               f"delete the file ({clear[1]})", path, reason) from None
        raise RagkitError(f"{path}: the {what} cannot be used ({reason})") from None


class ReadOnlyCache(CacheUnusable):
    """A cache that cannot be written here (`cannot_write`) was asked to keep or clear
    something: what it holds is served, nothing more."""


@contextmanager
def read_only_errors(path: Path, what: str, clear: tuple[str, str]) -> Iterator[None]:
    """`sqlite_errors` for a cache read where it cannot be written: a damaged one is said to
    be read-only here too, with what can be done (`clear[0]`, which deletes it, cannot run
    here)."""
    try:
        with sqlite_errors(path, what, clear):
            yield
    except DamagedCache as exc:
        raise DamagedCache(f"{path}: the {what} is damaged ({exc.reason}) and read-only here "
                           f"(read-only media, an immutable file): run `{clear[0]}` where it "
                           f"can be written, or copy it into a writable RAGKIT_HOME and clear "
                           f"it there ({clear[1]})", path, exc.reason) from None


def resolved(path: Path, what: str) -> Path:
    """`path.resolve()`: where sqlite opens the cache at `path`; a symbolic link that leads
    back to itself (directly or through others) is one line naming it, not a traceback."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11: RuntimeError "Symlink loop from"
        if isinstance(exc, OSError) and exc.errno != errno.ELOOP:
            raise RagkitError(f"{path}: cannot open the {what} ({exc.strerror or exc})") from None
        raise RagkitError(f"{path}: is a symbolic link that leads back to itself (a loop), so "
                          f"no {what} can be opened there; remove the link or point it at a "
                          f"file") from None


def absent_line(path: Path, what: str) -> str:
    """"no WHAT at PATH" for a cache file that is not there, saying where a link there points
    (to no file), or one `RagkitError` line when a file stands where its folder goes
    (RAGKIT_HOME/cache a file: `stats` said "empty" where `ask` said it cannot write)."""
    ancestor = nearest_existing(path.parent)
    if ancestor.exists() and not ancestor.is_dir():
        raise RagkitError(f"{path}: no {what} can be there, {ancestor} is a file, not a "
                          f"folder (move it, or set RAGKIT_HOME elsewhere)")
    named = f" (a link to {os.readlink(path)}, which names no file)" if path.is_symlink() else ""
    return f"no {what} at {path}{named}"


def is_cache_file(path: Path) -> bool:
    """sqlite's header, an empty file, or a header of zero bytes — a cache whose first page
    a crash or a full disk zeroed: damaged (`DamagedCache`, which `cache clear` deletes), not
    a stranger's file to refuse."""
    with open(path, "rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    return head in (b"", SQLITE_MAGIC, bytes(len(SQLITE_MAGIC)))


def not_a_cache(path: Path, what: str, done: str) -> CacheUnusable:
    """The line for a file at a cache path (or named by a link there) that is not sqlite at
    all (`is_cache_file`): ragkit does not `done` it (read, use, delete) and says to move or
    delete it, the one thing that works. What it is not: `DamagedCache`, whose advice is
    `ragkit cache clear`, which refuses such a file (it may not be ragkit's): `search` on one
    advised that command, and `cache stats` said "refusing to overwrite it", writing nothing."""
    target = path.resolve()
    named = f" (a link to {target})" if target != path.absolute() else ""
    return CacheUnusable(f"{path}: is not a ragkit {what} (sqlite){named}, so it is not {done}; "
                         f"move or delete it yourself")


def stranger(path: Path) -> bool:
    """A regular file at `path` (through a link too) that `is_cache_file` says is not one."""
    try:
        return path.is_file() and not is_cache_file(path)
    except OSError:  # unreadable: sqlite's own words stand
        return False


def remove_database(path: Path) -> int:
    """Delete a sqlite file with its write-ahead log and shared-memory index; returns the
    bytes freed, all three counted (a writer killed mid-run leaves its -wal, which holds
    what it stored since the last checkpoint and can outgrow the file itself).

    Through a symbolic link, the file it names goes, with the -wal and -shm sqlite keeps
    beside that file, and the link stays: it is the user's choice of where the cache lives,
    so the next use starts the new file there, as emptying an intact cache keeps both.
    (Unlinking the link left the old file, damaged or full, where nothing used it.) A file
    that is not a cache (`is_cache_file`) is refused, never deleted: a link made to the
    wrong file took that file with it."""
    target, freed = path.resolve(), 0
    if target.exists() and not (target.is_file() and is_cache_file(target)):
        raise not_a_cache(path, "cache", "deleted")
    for part in (target, target.with_name(target.name + "-wal"),
                 target.with_name(target.name + "-shm")):
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


def no_room(path: Path, reason: str) -> bool:
    """Whether sqlite's error `reason` on the file at `path` is its disk being full: sqlite
    says so ("database or disk is full"), or no byte is free where the file is (creating
    its write-ahead log there fails as "disk I/O error")."""
    if "disk is full" in reason:
        return True
    try:
        return os.statvfs(nearest_existing(path.resolve().parent)).f_bavail == 0
    except OSError:
        return False


def use_wal(db: sqlite3.Connection, wait: float = 60.0) -> None:
    """Put the file `db` is connected to in WAL mode (kept in the file). Two processes opening
    a new file at once: sqlite answered one "database is locked" at once (its busy handler is
    not called for a change of journal mode; 5 of 120 starts), and that run stopped. Tried
    again for up to `wait` seconds, as any other lock is waited for."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
