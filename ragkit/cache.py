"""A persistent cache in front of every paid call, so no request is ever paid for twice.

What it is: `CallCache(path)` is one sqlite table (`calls`). The key of a call is the sha256
of the canonical JSON (sorted keys, no whitespace, UTF-8) of `{"endpoint", "backend", and
every request parameter}` — model, system, messages, tools, tool_choice, temperature, … — so
a different prompt, model or setting is a different call (`request_key`). The value is the
reply JSON, its token usage, whether it was priced (a stand-in reply is not), whether it
came through the Message Batches API (priced at batch prices by `stats`; entries stored
before this mark existed count as interactive), when it was stored, and how often it has
been served since. Each entry is committed the moment its
reply arrives, in its own transaction: a crash loses at most the calls in flight, and the
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

What it is not: a semantic cache (no fuzzy matching) nor an expiring one; `ragkit cache
clear [--model M]` empties it. Nor a cache for read-only media: `read_stats` (`ragkit cache
stats`) reads one there, but serving a reply counts a hit, a write. Safe across threads of
one process (one lock); across processes sqlite's own locking applies — which is why the
file is never opened outside sqlite once this process has a connection to it: closing any
descriptor of a file drops every POSIX lock the process holds on it, sqlite's included, and
another process closing its connection then believes it is the last one, checkpoints and
resets the write-ahead log under the first (sqlite.org/howtocorrupt.html §2.2; seen as
"database disk image is malformed" with two notebooks run side by side).
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.atomic import check_regular, check_target
from ragkit.documents import RagkitError
from ragkit.models import ragkit_home
from ragkit.money import dollars
from ragkit.pricing import PRICES, Usage, batch_cost, cost
# their home is ragkit.sqlite_files; the call cache's users import them from here
from ragkit.sqlite_files import DamagedCache, remove_database, sqlite_errors  # noqa: F401
from ragkit.sqlite_files import ReadOnlyFile, cannot_write, is_cache_file

_SCHEMA = """CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, priced INTEGER NOT NULL, created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0, batch INTEGER NOT NULL DEFAULT 0)"""


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


@dataclass(frozen=True)
class ModelStats:
    """What the cache holds for one (model, endpoint): calls made, hits, tokens, dollars."""

    model: str
    endpoint: str
    misses: int  # replies stored = requests that were sent
    hits: int  # requests answered from the cache instead
    spent: Usage  # tokens of the stored replies
    saved: Usage  # tokens the hits would have cost again
    dollars_spent: float | None  # None: no price (stand-in replies, unknown model)
    dollars_saved: float | None
    standin: bool = False  # replies of the offline stand-in: tokens estimated, nothing paid


_CONNECTED: set[Path] = set()  # files a CallCache of this process has opened (docstring)
CLEAR_CALLS = ("ragkit cache clear", "calls are made again, and paid for again, when next needed")


class CallCache:
    """The paid-call cache at `path` (default `default_cache_path()`); see module docstring."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.resolve() not in _CONNECTED:  # its header read: a descriptor closed
            check_target(self.path, is_cache_file, "a ragkit call cache (sqlite)",
                         folder=False, replaced=False)  # sqlite writes it in place
        # where sqlite writes it: through a link, the folder of the file it names
        self.path.resolve().parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._guard():
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # see the module docstring
            with self._db:
                self._db.execute(_SCHEMA)
            _add_batch_column(self._db)
        _CONNECTED.add(self.path.resolve())

    def _guard(self):
        """Every use of the file: a sqlite error is one line (`sqlite_errors`)."""
        return sqlite_errors(self.path, "call cache", CLEAR_CALLS)

    def close(self) -> None:
        self._db.close()

    def get(self, key: str) -> Entry | None:
        """The stored entry for `key` (counted as a hit), or None."""
        with self._lock, self._guard():
            row = self._db.execute("SELECT reply, input, output, cache_write, cache_read, "
                                   "priced FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            with self._db:
                self._db.execute("UPDATE calls SET hits = hits + 1 WHERE key = ?", (key,))
        return Entry(json.loads(row[0]), Usage(*row[1:5]), bool(row[5]))

    def holds(self, keys: Sequence[str]) -> bool:
        """True when every key in `keys` has an entry (no hit is counted: nothing is served)."""
        wanted = set(keys)
        with self._lock, self._guard():
            found = 0
            ordered = sorted(wanted)
            for i in range(0, len(ordered), 500):  # within sqlite's bound-variable limit
                part = ordered[i:i + 500]
                found += self._db.execute(
                    f"SELECT COUNT(*) FROM calls WHERE key IN ({','.join('?' * len(part))})",
                    part).fetchone()[0]
        return found == len(wanted)

    def put(self, key: str, endpoint: str, model: str, reply: Any, usage: Usage,
            priced: bool, batch: bool = False) -> None:
        """Store one reply now (its own committed transaction); `batch`: it came through the
        Message Batches API, billed at `BATCH_DISCOUNT` of the list price."""
        with self._lock, self._guard(), self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, endpoint, model, reply, input, output, "
                "cache_write, cache_read, priced, created, hits, batch) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                (key, endpoint, model, canonical_json(reply), usage.input, usage.output,
                 usage.cache_write, usage.cache_read, int(priced), time.time(), int(batch)))

    def stats(self) -> list[ModelStats]:
        """One row per (model, endpoint), sorted by model. Dollars: replies marked as batch
        results at batch prices (`batch_cost`), the others — and entries stored before the
        mark existed — at list price; a hit saves what its reply cost (a batch result served
        again saves a batch's price: the same run would batch it again)."""
        with self._lock, self._guard():
            return _stats_of(self._db)

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or those of `model`); returns how many were deleted."""
        with self._lock, self._guard(), self._db:
            if model is None:
                return self._db.execute("DELETE FROM calls").rowcount
            return self._db.execute("DELETE FROM calls WHERE model = ?", (model,)).rowcount


def missing(path: Path | str | None = None) -> str | None:
    """"no call cache at PATH" (saying where a link there points) when no file is there, for
    `ragkit cache stats` and `clear`, which make none (they made one, through a link where it
    points: a disk not mounted); else None, a folder or a stranger's file too (refused)."""
    path = Path(path) if path is not None else default_cache_path()
    if path.exists():
        return None
    named = f" (a link to {os.readlink(path)}, which names no file)" if path.is_symlink() else ""
    return f"no call cache at {path}{named}"


def read_stats(path: Path | str | None = None) -> list[ModelStats]:
    """`CallCache(path).stats()` for `ragkit cache stats`, which only reads: none there (nor
    where a link there points, `missing`) is an empty one, nothing created; a cache that
    cannot be written (`cannot_write`: read-only media, an immutable file) is read as it is
    (`CallCache` refused it, "cannot write here"), a damaged one said to be read-only too (no
    `cache clear` there). A file that is not sqlite is refused."""
    path = Path(path) if path is not None else default_cache_path()
    if missing(path):
        return []
    if not cannot_write(path):
        cache = CallCache(path)
        try:
            return cache.stats()
        finally:
            cache.close()
    check_regular(path)  # a FIFO is never opened
    if path.is_dir() or (path.resolve() not in _CONNECTED and not is_cache_file(path)):
        raise RagkitError(f"{path}: is not a ragkit call cache (sqlite)")
    reader = ReadOnlyFile(path)  # read right while another process writes it elsewhere
    try:
        with sqlite_errors(path, "call cache", CLEAR_CALLS):
            return reader.read(_stats_of, [])
    except DamagedCache as exc:  # where `cache clear` cannot delete it: what can be done
        raise DamagedCache(f"{path}: the call cache is damaged ({exc.reason}) and read-only here "
                           f"(read-only media, an immutable file): run `{CLEAR_CALLS[0]}` where "
                           f"it can be written, or copy it into a writable RAGKIT_HOME and clear "
                           f"it there ({CLEAR_CALLS[1]})", path, exc.reason) from None
    finally:
        reader.close()


def _stats_of(db: sqlite3.Connection) -> list[ModelStats]:
    """`CallCache.stats` of the cache `db` is connected to. Read as it is (`read_stats`), a
    file may have no table yet (an empty one) or no `batch` column (made before it)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    if not columns:
        return []
    batch = "batch" if "batch" in columns else "0"
    rows = db.execute(
        f"SELECT model, endpoint, {batch} AS b, COUNT(*), SUM(hits), SUM(input), SUM(output), "
        "SUM(cache_write), SUM(cache_read), SUM(hits * input), SUM(hits * output), "
        "SUM(hits * cache_write), SUM(hits * cache_read), priced > 0 FROM calls "
        "GROUP BY model, endpoint, b, priced > 0 ORDER BY model, endpoint, b").fetchall()
    merged: dict[tuple[str, str, bool], ModelStats] = {}
    for model, endpoint, in_batch, n, hits, *tokens, priced in rows:
        spent, saved = Usage(*tokens[:4]), Usage(*tokens[4:])
        price_of = batch_cost if in_batch else cost
        known = bool(priced) and model in PRICES
        row = ModelStats(model, endpoint, n, hits, spent, saved,
                         price_of(spent, model) if known else None,
                         price_of(saved, model) if known else None, standin=not priced)
        key = (model, endpoint, row.standin)  # the stand-in's estimates never summed in
        before = merged.get(key)
        merged[key] = row if before is None else _add(before, row)
    return sorted(merged.values(), key=lambda s: (s.model, s.endpoint, s.standin))


def _add(a: ModelStats, b: ModelStats) -> ModelStats:
    """Two rows of one (model, endpoint) as one; dollars None if either has no price."""
    def plus(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else x + y
    return ModelStats(a.model, a.endpoint, a.misses + b.misses, a.hits + b.hits,
                      a.spent + b.spent, a.saved + b.saved,
                      plus(a.dollars_spent, b.dollars_spent),
                      plus(a.dollars_saved, b.dollars_saved), a.standin)


def _add_batch_column(db: sqlite3.Connection) -> None:
    """Give a cache made before replies were marked as batch results its `batch` column
    (0: list price, which is what those entries were priced at). Two processes may race to
    add it; the loser's "duplicate column" is the same outcome."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    if "batch" in columns:
        return
    try:
        with db:
            db.execute("ALTER TABLE calls ADD COLUMN batch INTEGER NOT NULL DEFAULT 0")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):
            raise


def format_stats(stats: list[ModelStats]) -> str:
    """The `ragkit cache stats` table: one line per model and endpoint."""
    if not stats:
        return "the call cache is empty"
    lines = [f"{'model':<28} {'endpoint':<26} {'misses':>6} {'hits':>6} {'tokens in':>12} "
             f"{'out':>10} {'write':>11} {'read':>12} {'spent $':>11} {'saved $':>11}"]
    for s in stats:
        money = [f"{dollars(v):>11}" if v is not None else f"{'no cost':>11}"
                 for v in (s.dollars_spent, s.dollars_saved)]
        lines.append(f"{s.model + (' *' if s.standin else ''):<28} {s.endpoint:<26} "
                     f"{s.misses:>6,} {s.hits:>6,} {s.spent.input:>12,} {s.spent.output:>10,} "
                     f"{s.spent.cache_write:>11,} {s.spent.cache_read:>12,} {money[0]} {money[1]}")
    if any(s.standin for s in stats):
        lines.append("* answered by the offline stand-in in that model's place (a program, not "
                     "the model): tokens estimated, one per 4 UTF-8 bytes; nothing paid")
    if any(s.dollars_spent is None and not s.standin for s in stats):
        lines.append("no cost: a model without a price row")
    return "\n".join(lines)
