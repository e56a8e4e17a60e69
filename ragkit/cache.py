"""A persistent cache in front of every paid call, so no request is ever paid for twice.

What it is: `CallCache(path)` is one sqlite table (`calls`). The key of a call is the sha256
of the canonical JSON (sorted keys, no whitespace, UTF-8) of `{"endpoint", "backend", and
every request parameter}` — model, system, messages, tools, tool_choice, temperature, … — so
a different prompt, model or setting is a different call (`request_key`). The value is the
reply JSON, its token usage, whether it was priced (a stand-in reply is not), whether it
came through the Message Batches API (priced at batch prices by `stats`; entries stored
before this mark existed count as interactive), whether the reply reported no usage (its
tokens unknown, not 0: `stats` says how many, and a hit on it is an unreported reply again),
when it was stored, and how often it has been served since. Each entry is committed the
moment its reply arrives, in its own transaction: a crash loses at most the calls in flight, and the
next run resumes without repeating one. Commits are not flushed to disk one by one (sqlite's
WAL mode with `synchronous=NORMAL`): that keeps every committed entry through a crash of the
program, and only an operating-system crash or power cut can lose the last few — while
the flush per commit cost ~13 ms per cache hit (each hit updates its counter), 18 s of
notebook 04's 2 minutes. Default location: `$RAGKIT_HOME/cache/calls.sqlite`,
beside the embedding cache.

`backend` is where the reply came from (the offline stand-in, or the API's base URL), so a
stand-in reply never answers for the real API.

A damaged file (sqlite: "database disk image is malformed", "file is not a database") is
one `DamagedCache` line naming it and `ragkit cache clear`, which then deletes the file (it
cannot be emptied row by row) so the next call starts a new one (`ragkit.sqlite_files`,
shared with the embedding cache). No reply is ever half-read from it.

What it is not: a semantic cache (no fuzzy matching) nor an expiring one; `ragkit cache clear
[--model M]` empties it. Nor a store on read-only media (a RAGKIT_HOME mounted read-only, an
immutable file): there it is read as it is, each hit served but not counted (the count is the
one write a hit makes), and a call it does not hold stops the command in one line before it is
sent, as its reply could not be kept (`CallCache`) — but a free one (`count_tokens`), sent and
not kept. Safe across threads of one process (one lock); across processes sqlite's own locking
applies — which is why the file is never opened outside sqlite once this process has a
connection to it: closing any descriptor of a file drops every POSIX lock the process holds on
it, sqlite's included, and another process closing its connection then believes it is the last
one, checkpoints and resets the write-ahead log under the first (sqlite.org/howtocorrupt.html
§2.2; seen as "database disk image is malformed" with two notebooks run side by side).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ragkit.atomic import check_regular, check_target
# their home is ragkit.call_stats; `ragkit cache stats` and notebooks import them from here
from ragkit.call_stats import ModelStats, format_stats, stats_of  # noqa: F401
from ragkit.call_rows import SCHEMA, add_columns, entry_row, has_table
from ragkit.documents import RagkitError
from ragkit.models import ragkit_home
from ragkit.pricing import Usage
# their home is ragkit.sqlite_files; the call cache's users import them from here
from ragkit.sqlite_files import CacheUnusable, DamagedCache, ReadOnlyCache  # noqa: F401
from ragkit.sqlite_files import remove_database, sqlite_errors  # noqa: F401
from ragkit.sqlite_files import ReadOnlyFile, cannot_write, is_cache_file, read_only_errors
from ragkit.sqlite_files import no_room, not_a_cache, resolved, stranger, use_wal


def default_cache_path() -> Path:
    return ragkit_home() / "cache" / "calls.sqlite"


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, non-ASCII kept: one text per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(endpoint: str, backend: str, params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the endpoint, backend and every request parameter."""
    if not params.get("model"):
        raise RagkitError(f"{endpoint}: a paid call needs a model")
    body = {"endpoint": endpoint, "backend": backend, **params}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Entry:
    """A stored reply: its JSON, its usage, and whether its usage was priced."""

    reply: Any
    usage: Usage
    priced: bool


_CONNECTED: set[Path] = set()  # files a CallCache of this process opens, read-only too
CLEAR_CALLS = ("ragkit cache clear", "calls are made again, and paid for again, when next needed")
_ELSE = (": set RAGKIT_HOME to a folder that can be written, or run where this cache can be "
         "written")
T = TypeVar("T")


class CallCache:
    """The paid-call cache at `path` (default `default_cache_path()`); see module docstring.

    Where it cannot be written (`read_only`: read-only media, an immutable file) it is read
    as it is (`ReadOnlyFile`): a hit is served, uncounted; a miss, which would be sent and
    then kept, and clearing are one `ReadOnlyCache` line, before anything is sent."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._reader: ReadOnlyFile | None = None
        self._db: sqlite3.Connection
        self.full = False  # on a full disk: read as it is (`_on_full_disk`)
        target = resolved(self.path, "call cache")  # a link loop: one line
        self.read_only = cannot_write(self.path)
        if self.read_only:  # nothing made or changed: checked as `cache_command.read_stats` did
            check_regular(self.path)  # a FIFO is never opened
            if self.path.is_dir() or (self.path.exists() and target not in _CONNECTED
                                      and not is_cache_file(self.path)):
                raise RagkitError(f"{self.path}: is not a ragkit call cache (sqlite)")
            self._reader = ReadOnlyFile(self.path, shared=True)  # used under `_lock`
            if self.path.exists():  # read through sqlite from now on: its header not again
                _CONNECTED.add(target)
            return
        if target not in _CONNECTED:  # its header read: a descriptor closed
            refuse_stranger(self.path, "used")  # not check_target's "refusing to overwrite"
            check_target(self.path, is_cache_file, "a ragkit call cache (sqlite)",
                         folder=False, replaced=False)  # sqlite writes it in place
        # where sqlite writes it: through a link, the folder of the file it names
        target.parent.mkdir(parents=True, exist_ok=True)
        files = [self.path.with_name(self.path.name + end) for end in ("", "-wal", "-shm")]
        existed = [file.exists() for file in files]
        try:
            with self._guard():
                self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
                use_wal(self._db)
                self._db.execute("PRAGMA synchronous=NORMAL")  # see the module docstring
                with self._db:
                    self._db.execute(SCHEMA)
                add_columns(self._db)
        except RagkitError as exc:
            if not no_room(self.path, str(exc)):
                raise
            self._on_full_disk(files, existed)
            return
        _CONNECTED.add(target)

    def _on_full_disk(self, files: list[Path], existed: list[bool]) -> None:
        """A cache that cannot be made or opened for writing on a full disk is read as it is,
        as a read-only one is: an offline `ask`, which sends no call, stopped at "the call
        cache cannot be used (database or disk is full)" (or "(disk I/O error)" where the
        file was there: its write-ahead log could not be made), leaving empty files."""
        if getattr(self, "_db", None) is not None:
            self._db.close()
        for file, was in zip(files, existed):  # what the failed open made: no reply in them
            if not was and file.is_file() and (file != self.path or not file.stat().st_size):
                file.unlink()
        self.read_only, self.full = True, True
        self._reader = ReadOnlyFile(self.path, shared=True)

    def _guard(self):
        """Every use of the file: a sqlite error is one line (`sqlite_errors`; where it cannot
        be written, a damaged one is said to be read-only too, `read_only_errors`)."""
        errors = read_only_errors if self.read_only else sqlite_errors
        return errors(self.path, "call cache", CLEAR_CALLS)

    def _read(self, query: Callable[[sqlite3.Connection], T], absent: T) -> T:
        """`query(connection)` on the file read as it is (`read_only`); `absent` when there
        is no file, or no table in it yet."""
        assert self._reader is not None
        return self._reader.read(lambda db: query(db) if has_table(db) else absent, absent)

    def _read_only(self, so: str, damaged: str = "") -> str:
        """The line of what a cache that cannot be written here cannot do (`so`); `damaged`:
        sqlite's words for the damage it has."""
        where = ("on a full disk" if self.full else
                 "read-only here (read-only media, an immutable file)")
        return (f"{self.path}: the call cache is {f'damaged ({damaged}) and ' if damaged else ''}"
                f"{where}, so {so}")

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        else:
            self._db.close()

    def get(self, key: str, free: bool = False) -> Entry | None:
        """The stored entry for `key` (counted as a hit), or None. Where the cache cannot be
        written, a hit is served uncounted and a miss is a `ReadOnlyCache` line: its reply
        could not be kept, so nothing is sent (and paid for) to be lost — but for a `free`
        call (`count_tokens`), whose miss is None: sent, and not kept, it costs nothing."""
        with self._lock, self._guard():
            if self.read_only:
                row = self._read(lambda db: entry_row(db, key), None)
                if row is None:
                    if free:
                        return None
                    raise ReadOnlyCache(self._read_only(f"a call it does not hold is not sent "
                                                        f"(its reply could not be kept){_ELSE}"))
            else:
                row = entry_row(self._db, key, marked=True)  # `add_columns` ran
                if row is None:
                    return None
                with self._db:
                    self._db.execute("UPDATE calls SET hits = hits + 1 WHERE key = ?", (key,))
        return Entry(json.loads(row[0]), Usage(*row[1:5], unreported=row[6]), bool(row[5]))

    def holds(self, keys: Sequence[str]) -> bool:
        """True when every key in `keys` has an entry (no hit is counted: nothing is served)."""
        wanted = set(keys)
        ordered = sorted(wanted)

        def count(db: sqlite3.Connection) -> int:
            found = 0
            for i in range(0, len(ordered), 500):  # within sqlite's bound-variable limit
                part = ordered[i:i + 500]
                found += db.execute(
                    f"SELECT COUNT(*) FROM calls WHERE key IN ({','.join('?' * len(part))})",
                    part).fetchone()[0]
            return found
        with self._lock, self._guard():
            found = self._read(count, 0) if self.read_only else count(self._db)
        return found == len(wanted)

    def put(self, key: str, endpoint: str, model: str, reply: Any, usage: Usage,
            priced: bool, batch: bool = False) -> None:
        """Store one reply now (its own committed transaction); `batch`: it came through the
        Message Batches API, billed at `BATCH_DISCOUNT` of the list price. Where the cache
        cannot be written: a `ReadOnlyCache` line."""
        if self.read_only:
            raise ReadOnlyCache(self._read_only(f"this reply cannot be kept{_ELSE}"))
        with self._lock, self._guard(), self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, endpoint, model, reply, input, output, "
                "cache_write, cache_read, priced, created, hits, batch, unreported) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                (key, endpoint, model, canonical_json(reply), usage.input, usage.output,
                 usage.cache_write, usage.cache_read, int(priced), time.time(), int(batch),
                 min(usage.unreported, 1)))

    def stats(self) -> list[ModelStats]:
        """One row per (model, endpoint), sorted by model (`stats_of`). Dollars: replies
        marked as batch results at batch prices (`batch_cost`), the others — and entries
        stored before the mark existed — at list price; a hit saves what its reply cost (a
        batch result served again saves a batch's price: the same run would batch it again)."""
        with self._lock, self._guard():
            return self._read(stats_of, []) if self.read_only else stats_of(self._db)

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or those of `model`); returns how many were deleted. Where
        the cache cannot be written: a `ReadOnlyCache` line."""
        if self.read_only:  # a damaged one is said so, as `stats` does (every row is read)
            try:
                with self._lock, self._guard():
                    self._read(stats_of, [])
            except DamagedCache as exc:
                raise ReadOnlyCache(self._read_only(
                    f"it cannot be cleared: run `{CLEAR_CALLS[0]}` where it can be written, or "
                    f"copy it into a writable RAGKIT_HOME and clear it there ({CLEAR_CALLS[1]})",
                    exc.reason)) from None
            raise ReadOnlyCache(self._read_only(f"it cannot be cleared: run `{CLEAR_CALLS[0]}` "
                                                f"where it can be written"))
        with self._lock, self._guard(), self._db:
            if model is None:
                return self._db.execute("DELETE FROM calls").rowcount
            return self._db.execute("DELETE FROM calls WHERE model = ?", (model,)).rowcount


def refuse_stranger(path: Path, done: str) -> None:
    """Refuse a file at the call cache's path (or named by a link there) that is not sqlite at
    all, saying what the command does not do with it (`done`: read, used, deleted) and that
    moving or deleting it is the user's (`not_a_cache`); else return."""
    if stranger(path):
        raise not_a_cache(path, "call cache", done)
