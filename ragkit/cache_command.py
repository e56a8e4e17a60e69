"""The call cache as `ragkit cache stats` and `clear` see it: they make no file.

What it is: `missing(path)`, the line saying no call cache is there (or where a link there
points), and `read_stats(path)`, the cache's rows per model read without creating or
changing anything. What it is not: the cache (`ragkit.cache.CallCache`), which a call makes
when it is not there.
"""
from __future__ import annotations

from pathlib import Path

from ragkit.cache import CallCache, ModelStats, default_cache_path, refuse_stranger
from ragkit.sqlite_files import absent_line, resolved


def missing(path: Path | str | None = None) -> str | None:
    """"no call cache at PATH" (saying where a link there points) when no file is there, for
    `ragkit cache stats` and `clear`, which make none (they made one, through a link where it
    points: a disk not mounted); else None, a folder or a stranger's file too (refused).
    A link loop is not "no file": it is the `resolved` line every command using the cache
    says (`ragkit ask` said a loop where these two said a link naming no file, or empty)."""
    path = Path(path) if path is not None else default_cache_path()
    resolved(path, "call cache")
    return None if path.exists() else absent_line(path, "call cache")


def read_stats(path: Path | str | None = None) -> list[ModelStats]:
    """`CallCache(path).stats()` for `ragkit cache stats`, which only reads: none there (nor
    where a link there points, `missing`) is an empty one, nothing created; one that cannot
    be written is read as it is (`CallCache.read_only`). A file that is not sqlite, and a
    link loop, are refused."""
    path = Path(path) if path is not None else default_cache_path()
    if missing(path):
        return []
    refuse_stranger(path, "read")  # stats writes nothing
    cache = CallCache(path)
    try:
        return cache.stats()
    finally:
        cache.close()
