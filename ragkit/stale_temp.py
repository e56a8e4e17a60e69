"""Temporary folders of builds that died: recognised by their name and removed.

What it is: the naming `ragkit.atomic.replace_folder` gives its temporary folders —
`.NAME.new-PID.HOST-XXXXXXXX` for the folder being written (and, after a one-step exchange,
the old folder being deleted) and `.NAME.old-PID.HOST-XXXXXXXX` for the one being replaced
by two renames, PID the writing process and HOST a 6-hex hash of the host name
— and `remove_stale(target)`, which removes those beside `target` whose process is gone;
`remove_stale_files(target)` those of the temporary files `ragkit.atomic.write_text` names
`.NAME.PID.HOST-XXXXXXXX.tmp`, and the unnamed `.NAME.XXXXXXXX.tmp` earlier versions left,
when every mark of theirs is there (mkstemp's mode 0600, this user's, a day old);
`remove_dead(folder, prefix)` does the same for folders named
`PREFIX` + `PID.HOST-*`, and
`scratch(folder, prefix)` makes such a folder for a block (a command's scratch folder: the
shared indexes in the system's temporary folder, `ragkit.index_cache.shared`; the notebook
a `ragkit cookbook refresh` executes beside the one it replaces), and
`process_scratch(prefix)` one in the system's temporary folder for a process's lifetime (a
notebook kernel's).
Why: a build killed with -9 (or by the OOM killer) runs no cleanup; its half-written
folder, often as large as the index, would otherwise stay hidden beside the output for good
— as a killed `ragkit search` left its half-written run, `.run.trec.XXXXXXXX.tmp`.

What it is not: a lock, nor a sweeper of other names. Folders of a live process, of
another host (a shared disk), or written by versions that did not record a pid (but the
files above) are left;
a pid reused by a new process counts as alive, so a stale folder may survive but a live
one is never removed.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import stat
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragkit.errors import RagkitError

UNNAMED_AGE = 24 * 3600  # an earlier version's unnamed temporary file: stale after a day


def owner() -> str:
    """`PID.HOST` for a temporary folder's name: this process, and a short hash of the host
    name (a folder on a shared disk is judged only by the host that made it)."""
    return f"{os.getpid()}.{_host()}"


def _host() -> str:
    return f"{zlib.crc32(socket.gethostname().encode()) & 0xFFFFFF:06x}"


def _alive(pid: int) -> bool:
    """True while process `pid` exists and is not a zombie (a reused pid counts as alive:
    a stale folder is then kept, never a live one removed)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def remove_stale(target: Path) -> list[Path]:
    """Remove the temporary folders beside `target` whose build died: `.NAME.new-PID.HOST-*`
    of a process of this host that no longer runs, and its `.NAME.old-...` once `target`
    exists again (before that, the old folder is the only copy and is kept). Folders of a
    live process, of another host, or named by versions that recorded no pid are left.
    Returns the folders removed (not those it failed to delete)."""
    pattern = re.compile(re.escape(f".{target.name}.")
                         + r"(?P<kind>new|old)-(?P<pid>\d+)\.(?P<host>[0-9a-f]{6})-")
    removed = []
    for entry, found in _dead(target.parent, pattern):
        if found["kind"] == "old" and not (target.exists() or target.is_symlink()):
            continue
        if _deleted(entry.path):
            removed.append(Path(entry.path))
    return removed


def remove_stale_files(target: Path) -> list[Path]:
    """Remove the temporary files beside `target` whose writer died mid-write:
    `.NAME.PID.HOST-XXXXXXXX.tmp` (`ragkit.atomic.write_text`) of a process of this host that
    no longer runs, and the unnamed `.NAME.XXXXXXXX.tmp` of earlier versions once provably
    theirs (`_unnamed_leftovers`). Files of a live process or of another host are left.
    Returns the files removed."""
    pattern = re.compile(re.escape(f".{target.name}.")
                         + r"(?P<pid>\d+)\.(?P<host>[0-9a-f]{6})-[a-z0-9_]+\.tmp\Z")
    try:
        entries = list(os.scandir(target.parent))  # read once for both kinds of file
    except OSError:
        return []
    removed = []
    dead = [entry.path for entry, _ in _dead(target.parent, pattern, False, entries)]
    for path in [*dead, *_unnamed_leftovers(target, entries)]:
        try:
            os.unlink(path)
        except OSError:  # gone already, or not ours to remove: left as it is
            continue
        removed.append(Path(path))
    return removed


def _unnamed_leftovers(target: Path, entries: list[os.DirEntry]) -> list[str]:
    """The `.NAME.XXXXXXXX.tmp` files beside `target` that earlier versions' `write_text` left
    when killed mid-write (`tempfile.mkstemp`: 8 of `[a-z0-9_]`), counted as theirs only
    when every mark of such a file is there: a regular file of one link, this user's, with
    mkstemp's mode 0600 (a write that finished was given the umask's mode, then renamed), and
    untouched for `UNNAMED_AGE` seconds (no pid says whether its writer still runs; a day
    outlasts any write). A file of the user's own of that name and mode is kept while fresh,
    as is any other file: the name alone proves nothing (`.run.trec.backup01.tmp`)."""
    pattern = re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp\Z")
    old, found = time.time() - UNNAMED_AGE, []
    for entry in entries:
        if not pattern.match(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (info.st_nlink == 1 and info.st_uid == os.getuid()
                and stat.S_IMODE(info.st_mode) == 0o600 and info.st_mtime < old):
            found.append(entry.path)
    return found


def remove_dead(folder: Path, prefix: str) -> list[Path]:
    """Remove the folders in `folder` named `prefix` + `PID.HOST-*` (`owner()`) whose process
    of this host no longer runs; returns them. Folders of a live process, of another host, or
    named without a pid (by versions before it was recorded) are left, and one it failed to
    delete is not returned."""
    pattern = re.compile(re.escape(prefix) + r"(?P<pid>\d+)\.(?P<host>[0-9a-f]{6})-")
    removed = []
    for entry, _ in _dead(folder, pattern):
        if _deleted(entry.path):
            removed.append(Path(entry.path))
    return removed


def _deleted(path: str) -> bool:
    """Delete folder `path` as far as it can be; whether it is gone. A folder that could not
    be deleted whole (a mount inside it, a file the filesystem refuses to unlink) is not
    reported as removed."""
    shutil.rmtree(path, ignore_errors=True)
    return not os.path.lexists(path)


@contextmanager
def scratch(folder: Path, prefix: str) -> Iterator[Path]:
    """A new folder in `folder` named `prefix` + `owner()` + `-*` for the block, deleted after
    it; those of processes that no longer run (`remove_dead`) are deleted first, since a
    process killed with -9, SIGTERM or SIGHUP (a closed terminal) never reaches the deletion.
    A `folder` that cannot be written is one `RagkitError` line naming it, not a traceback."""
    remove_dead(folder, prefix)
    try:
        made = Path(tempfile.mkdtemp(prefix=f"{prefix}{owner()}-", dir=folder))
    except OSError as exc:
        raise RagkitError(f"{folder}: cannot make a working folder here "
                          f"({exc.strerror or exc})") from None
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def process_scratch(prefix: str) -> Path:
    """A new folder in the system's temporary folder named `prefix` + `owner()` + `-*`, for
    as long as this process runs: removed when it exits, or when this process asks for a new
    one of the same prefix (a notebook's setup cell run again), and, since a notebook kernel
    that papermill or nbval ends is killed before any exit handler runs, by the next call
    with the same prefix once this process is gone (`remove_dead`). No temporary folder
    that can be written is one `RagkitError` line.

    Why: a `tempfile.TemporaryDirectory` held by a kernel outlived it — a day of notebook runs
    left 19 folders in /tmp (notebook 05's traces, `reports_sql`'s tables)."""
    if (old := _MADE.pop(prefix, None)) is not None:
        shutil.rmtree(old, ignore_errors=True)
    try:  # gettempdir raises when no candidate folder (TMPDIR, /tmp, ...) can be written
        folder = Path(tempfile.gettempdir())
        remove_dead(folder, prefix)
        made = Path(tempfile.mkdtemp(prefix=f"{prefix}{owner()}-", dir=folder))
    except OSError as exc:
        raise RagkitError(f"no temporary folder to work in ({exc.strerror or exc}); set "
                          f"TMPDIR to a folder you can write") from None
    global _registered
    if not _registered:  # the exit handler, once per process
        atexit.register(_remove_made, os.getpid())
        _registered = True
    _MADE[prefix] = made
    return made


_MADE: dict[str, Path] = {}  # prefix -> this process's folder (`process_scratch`)
_registered = False  # whether `_remove_made` is registered


def _remove_made(pid: int) -> None:
    """At exit: this process's `process_scratch` folders; none in a forked child, whose
    parent still uses them."""
    if os.getpid() == pid:
        for made in _MADE.values():
            shutil.rmtree(made, ignore_errors=True)


def _dead(folder: Path, pattern: re.Pattern[str], folders: bool = True,
          entries: list[os.DirEntry] | None = None) -> list[tuple[os.DirEntry, re.Match[str]]]:
    """The folders (or, `folders` False, regular files) in `folder` (its `entries`, when the
    caller has read them) whose name `pattern` matches (groups `pid` and `host`) and whose
    process of this host, not this one, no longer runs; none when it cannot be read."""
    if entries is None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return []
    host, me = _host(), os.getpid()
    return [(entry, found) for entry in entries
            if (found := pattern.match(entry.name)) and found["host"] == host
            and int(found["pid"]) != me and not _alive(int(found["pid"]))
            and (entry.is_dir(follow_symlinks=False) if folders
                 else entry.is_file(follow_symlinks=False))]
