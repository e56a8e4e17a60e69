"""Swap two paths in one step: Linux's renameat2 with RENAME_EXCHANGE, called through ctypes.

What it is: `exchange(a, b)`, used by `ragkit.atomic.replace_folder` so that a reader never
finds the output folder missing while a new one takes its place.
What it is not: portable. Where the C library has no renameat2 (macOS, old glibc) or the file
system cannot exchange, it returns False having changed nothing, and the caller falls back to
two renames. Why a module of its own: it is the one place ragkit talks to the C library.
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path


def exchange(a: Path, b: Path) -> bool:
    """Swap the two paths atomically (renameat2 with RENAME_EXCHANGE); False where the C
    library or the file system cannot (then nothing was changed)."""
    rename = getattr(_libc(), "renameat2", None)
    if rename is None:
        return False
    at_cwd, flag = -100, 2  # AT_FDCWD, RENAME_EXCHANGE (<linux/fcntl.h>, <linux/fs.h>)
    return rename(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), flag) == 0


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The process's C library (None where it cannot be loaded)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
