"""Crash-safe writes that never destroy what is not ragkit's own output.

What it is: the one way ragkit puts a file or a folder on disk.
- `write_text(path, text, is_ours=...)`: the text goes to a temporary file beside `path`,
  is fsync'ed, and is renamed over `path`; the folder is fsync'ed too, so after a crash the
  path holds either the old content or the new, never half of it.
- `replace_folder(target, is_ours=...)`: a context manager yielding an empty temporary folder
  beside `target`; on a clean exit the new one takes the old `target`'s place in one step
  (Linux: renameat2's exchange; elsewhere the old is renamed aside, the new one in), and only
  then is the old one deleted. On an error the temporary folder is removed and `target` is
  untouched.

What it is not: a lock (two processes writing one path both succeed, the last rename wins;
but see `ragkit.folder_watch`).
Safety rule: an existing path is replaced only when `is_ours(path)` says it is ragkit's own
output (an index folder, a TREC run, a results folder, ...); anything else — a user's folder,
an unrelated file, a file where a folder is expected — is refused with `RagkitError`, before
any work is done when callers use `check_target` first. Only regular files and folders are
ever replaced: a device (`/dev/null`), a FIFO or a socket at the path is refused before
anything opens it (opening a FIFO blocks until a writer comes; as root, `/dev/null` would be
replaced by a file). A recognizer may itself raise RagkitError to say more precisely why a
path is not ours (e.g. which file in an index folder ragkit did not write).

Temporary folders are named `.NAME.new-PID.HOST-*` (`.NAME.old-…`: the one a two-rename swap
replaces), files `.NAME.PID.HOST-*.tmp`: the next write of the target removes those a
process killed with -9 left (dead pid, this host).

Written files and folders get the umask's permissions (0666 / 0777 masked), not mkstemp's
0600/0700: a teacher's index is readable by the class.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.folder_watch import check_unreplaced, renew
from ragkit.fsync import fsync_dir, fsync_tree
from ragkit.rename_exchange import exchange as _exchange
from ragkit.stale_temp import owner as _owner, remove_stale, remove_stale_files

Recognizer = Callable[[Path], bool]


def _umask() -> int:
    """The process umask, read from /proc on Linux: the portable way (set it, put it back)
    briefly changes it for every thread of the process."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def nearest_existing(folder: Path) -> Path:
    """`folder`, or its nearest ancestor that exists (a link there counts), or the root."""
    while not (folder.exists() or folder.is_symlink()) and folder != folder.parent:
        folder = folder.parent
    return folder


def _check_parent(path: Path) -> None:
    """Refuse `path` when its nearest existing ancestor is a file or is not writable.
    Creates nothing, so a refused or failed command leaves no empty folders behind."""
    ancestor = nearest_existing(Path(os.path.abspath(path)).parent)
    if not ancestor.is_dir():
        raise RagkitError(f"{path}: cannot write here, {ancestor} is a file")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise RagkitError(f"{path}: cannot write here, {ancestor} is not writable")


def _elsewhere(name: object, *folders: Path) -> bool:
    """Whether an error's file `name` is a file outside `folders` (the output being written):
    an unreadable input was said to be the output that "cannot be written"."""
    if not isinstance(name, (str, bytes)) or not name:
        return False
    path = Path(os.path.abspath(os.fsdecode(name)))
    return not any(path == folder or folder in path.parents for folder in folders)


def _writable_parent(path: Path) -> Path:
    """Create `path`'s parent folder; a failure is a clear error, not a traceback."""
    _check_parent(path)
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RagkitError(f"{path}: cannot create {parent} ({exc.strerror})") from None
    return parent


def check_regular(path: Path | str) -> None:
    """Refuse `path` if it exists (through symlinks) and is neither a regular file nor a
    folder: a device, FIFO or socket. Never opens it, so a FIFO cannot block."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # absent, or a dangling symlink: nothing to protect
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise RagkitError(f"{path}: is not a regular file (a device, FIFO or socket); ragkit "
                          f"writes only regular files and folders, choose another path")


def check_target(path: Path | str, is_ours: Recognizer, what: str, folder: bool,
                 replaced: bool = True) -> Path:
    """Refuse `path` unless it is absent or ragkit's own `what` (checked before long work).

    An empty folder counts as free when a folder is expected; a symbolic link or a mount
    point is refused unless `replaced` is False (a rename cannot replace either). Nothing is
    created or changed: calling it before long work costs nothing if the work fails.

    Args:
        path: the file or folder about to be written.
        is_ours: recognises ragkit's own output of this kind at an existing path.
        what: a few words for the error ("a ragkit index", "a TREC run").
        folder: True when a folder is expected at `path`, False for a file.
        replaced: written as a new file or folder renamed over `path`: not a link, nor (a
            folder) the working directory. False: in place (a Milvus index, the call cache).
    Returns `path` as a Path."""
    path = Path(path)
    if path.is_symlink() or path.exists():
        check_regular(path)
        if path.is_symlink() and replaced:  # a rename replaces the link
            raise RagkitError(f"{path}: is a symbolic link (to {os.readlink(path)}); writing "
                              f"{what} replaces the link, not the "
                              f"{'folder' if folder else 'file'} it names: give that "
                              f"{'folder' if folder else 'file'} itself")
        if folder and not path.is_dir():
            raise RagkitError(f"{path}: exists and is a file, not {what}; refusing to replace "
                              f"it (choose another path)")
        if folder and replaced and os.path.ismount(path):  # the swap failed after the work
            raise RagkitError(f"{path}: is a mount point, and {what} is written beside its "
                              f"folder and swapped in: give a folder inside it ({path}/index)")
        if not folder and path.is_dir():
            raise RagkitError(f"{path}: is a folder; expected a file path for {what}")
        if path.exists() and not (folder and is_empty_folder(path)) and not is_ours(path):
            raise RagkitError(f"{path}: exists and is not {what}; refusing to overwrite it "
                              f"(choose a new or empty path, or delete it yourself)")
        if folder and replaced and _holds_cwd(path):  # the shell would sit in a deleted one
            raise RagkitError(f"{path}: is the folder you are in (or holds it), which writing "
                              f"{what} replaces; give another path, or run from elsewhere")
    _check_parent(path)
    return path


def _holds_cwd(path: Path) -> bool:
    """True when the working directory is `path` or lies beneath it."""
    try:
        here, there = Path.cwd().resolve(), path.resolve()
    except OSError:  # the working directory is gone already
        return False
    return here == there or there in here.parents


def _watched(pieces: Iterable[str], path: Path) -> Iterator[str]:
    """`pieces` as they come; an OSError producing one (a cache or a file read for them) is
    its own line, not "cannot write" `path`: a write's failure is raised in the writer."""
    try:
        yield from pieces
    except OSError as exc:
        said = exc.strerror or str(exc)
        raise RagkitError(f"{exc.filename}: {said}; {path} is left as it was" if exc.filename
                          else f"{path}: its content could not be made ({said}); the file is "
                          f"left as it was") from exc


def write_text(path: Path | str, text: str | Iterable[str], is_ours: Recognizer | None = None,
               what: str = "ragkit output") -> Path:
    """Write `text` (UTF-8; or its pieces, written as they come) to `path` atomically; refuse
    to replace a file not ours. `is_ours=None`: the caller owns the path outright (a file in
    a folder it checked), and any existing file there may be replaced. Only a failure to
    write says "PATH: cannot write"; the pieces' producer's OSError is its own (`_watched`).
    """
    path = Path(path)
    if is_ours is not None:
        check_target(path, is_ours, what, folder=False)
    parent = _writable_parent(path)
    remove_stale_files(path)  # what a writer killed mid-write left beside it
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_owner()}-", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise RagkitError(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text) if isinstance(text, str) else handle.writelines(_watched(text, path))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:  # disk full, a folder at `path`, ...: the old file is unchanged
        Path(tmp).unlink(missing_ok=True)
        raise RagkitError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(parent)
    return path


def is_empty_folder(path: Path) -> bool:
    """True for a folder with nothing in it (safe to fill whatever it was meant for)."""
    try:
        return path.is_dir() and not any(path.iterdir())
    except OSError:  # unreadable: not known to be empty
        return False


@contextmanager
def replace_folder(target: Path | str, is_ours: Recognizer, what: str) -> Iterator[Path]:
    """Yield a temporary folder that replaces `target` when the block succeeds.

    An absent target, an empty folder or one that `is_ours` recognises may be replaced;
    anything else is refused before the block runs. The swap is: fsync the new folder, rename
    the old folder aside, rename the new one in, delete the old one — so at every instant
    `target` is either the complete old folder or the complete new one (a crash between the
    two renames leaves the old one beside it as `.NAME.old-*`, never a partial one at
    `target`). An OSError in the block or the swap (disk full, ...) becomes a RagkitError;
    either way the temporary folder is removed and `target` is left as it was. `target` is
    checked again just before the swap, so a file put into it during a long build is kept.
    Temporary folders a killed earlier run left beside `target` are removed first
    (`remove_stale`).
    """
    shown = Path(target)
    check_target(shown, is_ours, what, folder=True)
    target = Path(os.path.abspath(shown))  # "." and ".." get a real name to rename
    parent = _writable_parent(target)
    remove_stale(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{_owner()}-", dir=parent))
    except OSError as exc:
        raise RagkitError(f"{shown}: cannot write ({exc.strerror})") from None
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        fsync_tree(tmp)
        check_target(shown, is_ours, what, folder=True)
        check_unreplaced(target, shown, what)  # by another run, in a `watched` block
        _swap(tmp, target, lambda: check_target(shown, is_ours, what, folder=True))
        renew(target)
    except OSError as exc:  # numpy's short write on a full disk has no errno
        why = exc.strerror or (f"{exc}: a full disk?" if "written" in str(exc) else exc)
        if _elsewhere(exc.filename, tmp, target):  # an input that cannot be read, say
            raise RagkitError(f"{exc.filename}: {why}; {shown}: nothing was replaced") from None
        raise RagkitError(f"{shown}: cannot write {what} ({why}); nothing was replaced") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(new: Path, target: Path, recheck: Callable[[], object] | None = None) -> None:
    """Exchange `new` and `target` in one step where the system can (Linux's renameat2
    RENAME_EXCHANGE), else rename `target` aside and `new` in (put back on failure); then
    delete the old one. With the exchange a reader never finds `target` missing. A `target`
    another writer put in place meanwhile (the rename onto it fails) is swapped out like an
    older one, once, after `recheck` (which raises for what is not ours) accepted it."""
    parent = target.parent
    if target.is_dir() and not target.is_symlink() and _exchange(new, target):
        fsync_dir(parent)
        shutil.rmtree(new, ignore_errors=True)  # now the old folder
        return
    aside = None
    if target.exists() or target.is_symlink():
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{_owner()}-", dir=parent))
        try:
            os.rename(target, aside / target.name)
        except OSError:
            aside.rmdir()
            raise
    try:
        os.rename(new, target)
    except OSError:
        if aside is not None:
            os.rename(aside / target.name, target)
            aside.rmdir()
        elif recheck is not None and (target.exists() or target.is_symlink()):
            recheck()
            return _swap(new, target)
        raise
    fsync_dir(parent)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
