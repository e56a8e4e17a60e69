"""A folder a command will replace, watched for another run replacing it first.

What it is: `watched(target)`, a context manager a command wraps its whole run in (`ragkit
index`: from reading the documents to the swap), and `check_unreplaced(target, shown, what)`,
which `ragkit.atomic.replace_folder` calls just before its swap: when `target` is no longer
the folder (or the absence) it was when the block began — another run swapped its own in —
the swap is refused in one line and nothing is replaced. Why: two `ragkit index` runs to one
`--out` had both said "indexed", and the one started first, finishing last, won — the other
run's line was untrue, and of an `--update` from cron and one by hand, one update was lost.

What it is not: a lock. Two runs still build at once, and the check and the swap are two
steps (a run finishing in the microseconds between them still wins); the run that finishes
second is refused and says to run it again.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragkit.documents import RagkitError

_SEEN: dict[Path, tuple | None] = {}  # absolute target -> what it was at the start


def _identity(target: Path) -> tuple | None:
    """(device, inode) of the folder at `target` itself (a link is not followed) and of its
    index.json, with that file's modification time — an inode the system gave the folder of
    a run since (ext4 reuses them) does not make a new index the old one — or None when
    nothing is there (or nothing can be: a file in the way is refused elsewhere)."""
    try:
        folder = os.lstat(target)
    except OSError:
        return None
    try:
        manifest = os.lstat(target / "index.json")
    except OSError:
        return folder.st_dev, folder.st_ino
    return folder.st_dev, folder.st_ino, manifest.st_ino, manifest.st_mtime_ns


@contextmanager
def watched(target: Path | str) -> Iterator[None]:
    """For the block: `check_unreplaced` compares `target` with what it is now."""
    key = Path(os.path.abspath(target))
    _SEEN[key] = _identity(key)
    try:
        yield
    finally:
        _SEEN.pop(key, None)


def check_unreplaced(target: Path, shown: Path, what: str) -> None:
    """Refuse when a watched `target` (absolute) was replaced since its block began."""
    if target in _SEEN and _identity(target) != _SEEN[target]:
        was = "was absent" if _SEEN[target] is None else "held another index"
        raise RagkitError(f"{shown}: another run wrote {what} there while this one ran (it "
                          f"{was} when this one started); nothing was replaced — run this "
                          f"again to write its own")


def renew(target: Path) -> None:
    """After this process's own swap: `target` is what it now is."""
    if target in _SEEN:
        _SEEN[target] = _identity(target)
