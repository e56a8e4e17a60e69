"""Flushing what ragkit wrote to disk: a folder's entry list, a whole folder tree.

What it is: `fsync_dir(folder)` (after a rename in it, so the rename outlives a crash) and
`fsync_tree(folder)` (every file and folder in it, before it is renamed into place); used
by `ragkit.atomic`. What it is not: a write; where a folder cannot be opened (some
platforms), nothing is flushed and the rename is still atomic.
"""
from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """fsync `folder` itself: its entries, a rename among them."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open a folder; the rename is still atomic
        return
    with suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def fsync_tree(folder: Path) -> None:
    """fsync every file in `folder` and the folders themselves (before it is renamed in)."""
    for root, _, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(root))
