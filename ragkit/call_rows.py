"""The paid-call cache's table: its columns, the columns added to files made before them,
and one entry's row.

What it is: `SCHEMA` (the `calls` table `ragkit.cache.CallCache` makes), `add_columns(db)`
(a cache made before replies were marked as batch results or as reporting no usage gets
those columns, 0 for its old rows: what they were counted as), `columns(db)`, `has_table(db)`
and `entry_row(db, key)`, which reads a file made before the marks too (read as it is where
it cannot be written, it is never altered). What it is not: the file handling (locks,
read-only media, a full disk: `ragkit.cache`) nor the sums `ragkit cache stats` prints
(`ragkit.call_stats`).
"""
from __future__ import annotations

import sqlite3

SCHEMA = """CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, priced INTEGER NOT NULL, created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0, batch INTEGER NOT NULL DEFAULT 0,
    unreported INTEGER NOT NULL DEFAULT 0)"""


def has_table(db: sqlite3.Connection) -> bool:
    """Whether the file `db` reads has the `calls` table (read as it is, it may have none)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone() is not None


def entry_row(db: sqlite3.Connection, key: str, marked: bool = False) -> tuple | None:
    """The entry of `key`: reply, input, output, cache_write, cache_read, priced, unreported
    (0 for a file made before the mark, read as it is where it cannot be written). `marked`:
    the file is known to have the column (`add_columns` ran), so it is not looked up on
    every cache hit."""
    unreported = "unreported" if marked or "unreported" in columns(db) else "0"
    return db.execute(f"SELECT reply, input, output, cache_write, cache_read, priced, "
                      f"{unreported} FROM calls WHERE key = ?", (key,)).fetchone()


def columns(db: sqlite3.Connection) -> set[str]:
    """The `calls` table's column names (none when the file has no table)."""
    return {row[1] for row in db.execute("PRAGMA table_info(calls)")}


def add_columns(db: sqlite3.Connection) -> None:
    """Give a cache made before replies were marked as batch results, or as reporting no
    usage, those columns (0: list price, usage reported — what those entries were counted
    as). Two processes may race to add one; the loser's "duplicate column" is the same
    outcome."""
    for column in ("batch", "unreported"):
        if column in columns(db):
            continue
        try:
            with db:
                db.execute(f"ALTER TABLE calls ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise
