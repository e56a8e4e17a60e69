"""Opening files beneath a root without following a single link: the file tools' reads.

What it is:
- `parts(path)`: a model-given relative path as its components (`.` dropped, `..` applied
  without touching the disk); absolute paths, `~`, NUL, lone surrogates (a name that is not
  UTF-8), paths over 4,096 characters, parts over 255 and `..` above the root are
  `ToolError`s;
- `Root(root)`: an open descriptor of the root folder (a context manager). `Root.folder(parts)`
  and `Root.open_file(parts, shown)` go down one component at a time, each opened relative to
  the descriptor of the folder above with `O_NOFOLLOW` (folders also `O_DIRECTORY`). No symlink
  is followed at any step, so a folder swapped for a link while a call runs makes that call
  fail; it never reads outside. What is checked is the opened file (`fstat` of the descriptor),
  not a path that may have changed since;
- `read_text(root, parts, shown)`: a file's UTF-8 text, reading at most `MAX_FILE_BYTES + 1`
  bytes whatever `stat` says (`TooLarge` beyond: `ragkit.agent.line_window` reads a range).

The rule, and its limits. Only regular files are read: FIFOs, devices and sockets are refused
from `lstat` before anything is opened (opening one can block or have side effects), and again
from `fstat` after. Symlinks are never followed, not even to files inside the root: a link is
reported with the path it points to, for the model to ask for that path. A regular file with
more than one name (`st_nlink > 1`) is refused, because a hard link inside the root can name a
file outside it and nothing on the inside tells the two apart. Not promised: a folder moved out
of the root while a call is reading beneath it, and mount points inside the root (bind mounts
make outside folders look like inside ones) — the root is trusted to be what its owner chose.

What it is not: an operating-system sandbox; it guards what the tools read, not the process.
Error messages name paths relative to the root, never the root itself.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath
from types import TracebackType

from ragkit.agent.tool import ToolError

MAX_FILE_BYTES = 1_000_000  # above this grep skips a file and read_file reads it by line range
MAX_PATH = 4096  # characters of a path (Linux PATH_MAX)
MAX_NAME = 255  # characters of one path part (NAME_MAX)
ALLOWED = "give a path relative to the root, e.g. 'code/shopcore/payments/refund.py'"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def short(path: str, width: int = 120) -> str:
    """`path` cut in the middle to at most about `width` characters, for messages."""
    return path if len(path) <= width else f"{path[:width - 40]}…{path[-30:]}"


_UNDECODABLE = re.compile(r"[\ud800-\udfff]")  # a byte that is not UTF-8, as Python names it


def undecodable(name: str) -> bool:
    """Whether `name` (as `os` lists it, or as JSON's \\udcXX gives it) holds lone
    surrogates: bytes that are not UTF-8, which no request, trace or cache key can carry."""
    return bool(_UNDECODABLE.search(name))


def shown_bytes(name: str) -> str:
    """`name` with its bytes that are not UTF-8 as \\xNN escapes ("bad\\xff.txt"), and any
    other lone surrogate as \\uXXXX."""
    return "".join(f"\\x{ord(c) - 0xdc00:02x}" if "\udc80" <= c <= "\udcff" else
                   f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in name)


def parts(path: str) -> list[str]:
    """The components of `path`, a path relative to the root, or ToolError (see module doc)."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError(f"empty path; {ALLOWED}")
    if "\x00" in path:
        raise ToolError(f"the path contains a NUL character; {ALLOWED}")
    if undecodable(path):
        raise ToolError(f"'{short(shown_bytes(path))}' is not UTF-8 text (it holds a lone "
                        f"surrogate), and these tools read only files whose names are UTF-8; "
                        f"{ALLOWED}")
    # "~" and "~/…" are a home folder (a name such as "~backup.txt" or Word's "~$x.docx" is
    # a file glob and grep list; "~user/…" is looked up under the root, as any name is)
    if PurePosixPath(path).is_absolute() or re.match(r"^[A-Za-z]:[\\/]", path) or \
            path == "~" or path.startswith("~/"):
        raise ToolError(f"'{short(path)}' is an absolute path, and only files under the root "
                        f"can be read; {ALLOWED}")
    if len(path) > MAX_PATH:
        raise ToolError(f"the path is {len(path):,} characters long (limit {MAX_PATH:,}); "
                        f"{ALLOWED}, as grep and glob print it")
    out: list[str] = []
    for part in path.split("/"):
        if len(part) > MAX_NAME:
            raise ToolError(f"a part of the path is {len(part):,} characters long (limit "
                            f"{MAX_NAME}): '{short(part, 60)}'; {ALLOWED}")
        if part == "..":
            if not out:
                raise ToolError(f"'{short(path)}' leads outside the root, which these tools "
                                f"cannot leave; {ALLOWED} (no '..' above the root)")
            out.pop()
        elif part not in ("", "."):
            out.append(part)
    return out


def _kind(mode: int) -> str:
    return "a folder" if stat.S_ISDIR(mode) else _KINDS.get(stat.S_IFMT(mode), "not a file")


OUTSIDE = "; it points outside the root, which these tools do not read"


class Root:
    """An open descriptor of the tools' root folder; use as `with Root(path) as root:`."""

    def __init__(self, path: Path | str) -> None:
        self.real = os.path.realpath(path)  # to show absolute links inside it as relative
        self.given = os.path.abspath(path)  # as the root was named: a link may name it so
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise ToolError(f"the tools' root folder cannot be opened ({exc.strerror}); the "
                            f"file tools are unavailable") from None

    def __enter__(self) -> Root:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        os.close(self.fd)

    def _explain(self, at: int, names: list[str], exc: OSError, shown: str) -> ToolError:
        """A ToolError for a failed open of `names[-1]` in the folder `at` (see `_KINDS`)."""
        here = "/".join(names)
        try:
            info = os.stat(names[-1], dir_fd=at, follow_symlinks=False)
        except OSError:
            info = None
        if info is not None and stat.S_ISLNK(info.st_mode):
            return ToolError(f"'{short(here)}' is a symbolic link, and these tools never follow "
                             f"links, not even inside the root{self._target(here)}")
        if exc.errno == errno.ENOENT:
            # the name's own wildcards or quotes would make the example a broken pattern
            stem = re.sub(r"[^\w.\- ]", "", PurePosixPath(shown).stem)[:40]
            example = f"**/*{stem}*" if stem else "**/*"
            return ToolError(f"no such file '{short(shown)}'; list files with glob, e.g. "
                             f"glob(pattern='{example}')")
        if exc.errno == errno.ENOTDIR:
            return ToolError(f"'{short(here)}' is a file, not a folder, so '{short(shown)}' "
                             f"does not exist; {ALLOWED}")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return ToolError(f"'{short(here)}' cannot be opened (permission denied); try "
                             f"another file")
        return ToolError(f"'{short(here)}' cannot be opened ({exc.strerror}); {ALLOWED}")

    def _target(self, here: str) -> str:
        """'; it points to X' when the link at `here` names a path inside the root, else ''."""
        try:
            *folders, name = here.split("/")
            with self.folder(folders, here) as at:
                target = os.readlink(name, dir_fd=at.fd)
        except (OSError, ToolError):
            return "; read the file it points to by its own path, if that is inside the root"
        for root in (self.real, self.given):
            if target.startswith(root + "/"):
                target, folders = target[len(root) + 1:], []
                break
        else:
            if target.startswith("/"):  # outside: "sub/" + "/tmp/x" was named sub/tmp/x
                return OUTSIDE
        try:
            inside = "/".join(parts("/".join(folders + [target])))
        except ToolError:  # "../../outside/x": it climbs out of the root
            return OUTSIDE
        return f"; it points to '{short(inside)}' — read that path instead"

    def folder(self, names: list[str], shown: str) -> _Folder:
        """The folder at `names` beneath the root, opened link-free (a context manager)."""
        fd = os.dup(self.fd)
        for depth, name in enumerate(names):
            try:
                deeper = os.open(name, _DIR, dir_fd=fd)
            except OSError as exc:
                error = self._explain(fd, names[:depth + 1], exc, shown)
                os.close(fd)
                raise error from None
            os.close(fd)
            fd = deeper
        return _Folder(fd)

    def open_file(self, names: list[str], shown: str) -> int:
        """A descriptor of the regular, single-named file at `names`, or ToolError."""
        if not names:
            raise ToolError(f"'{short(shown)}' is the root folder, not a file; list it with "
                            f"glob(pattern='*')")
        with self.folder(names[:-1], shown) as at:
            try:  # never open a FIFO or a device at all: opening one can block or act
                before = os.stat(names[-1], dir_fd=at.fd, follow_symlinks=False)
                if stat.S_ISLNK(before.st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link")
                if not stat.S_ISREG(before.st_mode):
                    raise self._not_regular(shown, before.st_mode)
                fd = os.open(names[-1], _FILE, dir_fd=at.fd)
            except OSError as exc:
                raise self._explain(at.fd, names, exc, shown) from None
        info = os.fstat(fd)  # the file opened, whatever the path names by now
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise self._not_regular(shown, info.st_mode)
        if info.st_nlink > 1:
            os.close(fd)
            raise ToolError(f"'{short(shown)}' has {info.st_nlink} names (hard links), and a "
                            f"second name may lie outside the root, so these tools read only "
                            f"files with a single name; look for another file")
        return fd

    @staticmethod
    def _not_regular(shown: str, mode: int) -> ToolError:
        if stat.S_ISDIR(mode):
            return ToolError(f"'{short(shown)}' is a folder, not a file; list it with "
                             f"glob(pattern='{short(shown.rstrip('/'))}/*')")
        return ToolError(f"'{short(shown)}' is {_kind(mode)}, not a regular file; these tools "
                         f"read regular text files only")


class _Folder:
    """An open folder descriptor that closes on leaving the `with` block."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class TooLarge(ToolError):
    """A file over `MAX_FILE_BYTES`: grep skips it, read_file reads it by line range."""


def read_capped(fd: int, cap: int) -> bytes:
    """At most `cap + 1` bytes from `fd` (one more than `cap` tells 'too large')."""
    chunks, size = [], 0
    while size <= cap:
        chunk = os.read(fd, min(1 << 16, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_text(root: Root, names: list[str], shown: str) -> str:
    """The UTF-8 text of the file at `names` (shown to the model as `shown`), or ToolError."""
    fd = root.open_file(names, shown)
    try:
        data = read_capped(fd, MAX_FILE_BYTES)
        size = max(len(data), os.fstat(fd).st_size)
    except OSError as exc:
        raise ToolError(f"'{short(shown)}' could not be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge(f"'{short(shown)}' is too large to read whole ({size:,} bytes; the "
                       f"limit is {MAX_FILE_BYTES:,}); give start_line and end_line to read it "
                       f"in parts of up to 200 lines (e.g. start_line=1, end_line=200)")
    if b"\x00" in data:
        raise ToolError(f"'{short(shown)}' is a binary file (it contains NUL bytes); these "
                        f"tools read text files only — look for a text file that describes it "
                        f"instead")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{short(shown)}' is not UTF-8 text (undecodable byte at offset "
                        f"{exc.start}); these tools read UTF-8 text files only") from None
