"""Reading a cache's sqlite file where it cannot be written (read-only media, an immutable
file), right while another process writes it through a path that can.

What it is: `ReadOnlyFile` (kept between reads, opened again when the file changed),
`connect_read_only`, `unlocked` (read as immutable) and `file_state`. What it is not: the
errors such a read gives (`ragkit.sqlite_files.read_only_errors`) nor either cache.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

READ_ATTEMPTS = 5  # reads of a file another process keeps changing before giving up on it
T = TypeVar("T")


def connect_read_only(path: Path, immutable: bool, timeout: float = 60,
                      shared: bool = False) -> sqlite3.Connection:
    """A connection that only reads the existing sqlite file at `path`; `immutable` (see
    `unlocked`): without sqlite's locks and -shm, and without what a -wal holds — entries
    missed. Such a connection must not outlive a change to the file (`ReadOnlyFile`).
    `shared`: usable from any thread (its user serializes the uses)."""
    target = path.resolve()
    uri = f"file:{quote(str(target))}?mode=ro" + ("&immutable=1" if immutable else "")
    return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=not shared)


def unlocked(path: Path) -> bool:
    """Whether the sqlite file at `path` is read as immutable: a file in WAL mode is read
    through a shared-memory index (-shm) beside it, which a folder that cannot be written
    cannot get. With one there (a writer working on the file through a path that can be
    written, or one killed), sqlite reads through it, the -wal's entries included, as it
    does beside any writer."""
    target = path.resolve()
    return (not os.access(target.parent, os.W_OK | os.X_OK)
            and not target.with_name(target.name + "-shm").exists())


def file_state(path: Path) -> tuple[tuple[int, int, int] | None, ...]:
    """(inode, size, modification time) of the sqlite file at `path` and of its -wal, and the
    inode of its -shm, None for each that is absent: what changes when another process writes
    or replaces them. Not the -shm's size or time: readers write there too (their read marks,
    the index rebuilt), this one included, so a file only this process reads (an immutable one
    in a folder that can be written) seemed changed under every read, and a damaged one was
    read as an empty one."""
    target = path.resolve()
    states: list[tuple[int, int, int] | None] = []
    for part in (target, target.with_name(target.name + "-wal"),
                 target.with_name(target.name + "-shm")):
        try:
            info = part.stat()
        except FileNotFoundError:
            states.append(None)
        else:
            shm = part.name.endswith("-shm")
            states.append((info.st_ino, 0, 0) if shm else
                          (info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(states)


class ReadOnlyFile:
    """The sqlite file at `path`, read where it cannot be written, right while another process
    writes it through a path that can (the machine that owns a cache mounted read-only here).

    Its connection (`connect_read_only`) is kept between reads and opened again when the file
    changed (`file_state`): an immutable connection keeps the pages it read, and after the
    owner stored more, those no longer matched the file ("database disk image is malformed"
    of a sound cache). An immutable read during which the file changed is read again.
    One per thread, as sqlite connections are, unless `shared` (its user holds a lock around
    every read, as the call cache does)."""

    def __init__(self, path: Path, shared: bool = False) -> None:
        self.path, self.shared = path, shared
        self._db: sqlite3.Connection | None = None
        self._state: tuple[tuple[int, int, int] | None, ...] = ()
        self._unlocked = False
        self._shm_unusable: tuple[tuple[int, int, int] | None, ...] = ()  # in this state

    def read(self, query: Callable[[sqlite3.Connection], T], absent: T) -> T:
        """`query(connection)` on the file as it is, or `absent` when there is no file (or it
        changed under every one of READ_ATTEMPTS reads: entries missed, never wrong ones)."""
        for _ in range(READ_ATTEMPTS):
            state = file_state(self.path)
            if state[0] is None:
                self.close()
                return absent
            db = self._db
            if db is None or state != self._state:
                self.close()
                self._unlocked = self._shm_unusable == state or unlocked(self.path)
                db = self._db = connect_read_only(self.path, self._unlocked,
                                                  shared=self.shared)
                self._state = state
            try:
                result = query(db)
            except sqlite3.DatabaseError:
                if file_state(self.path) != state:
                    continue
                if self._unlocked:
                    raise  # damaged as it stands, or another error: the caller's one line
                # a -shm sqlite cannot read by (no -wal beside it): read it as immutable
                self._shm_unusable = state
                self.close()
                continue
            if not self._unlocked or file_state(self.path) == state:
                return result
        return absent

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._state = None, ()
