"""Which entries of a folder are files ragkit may read, and why the others are not.

What it is: `scan(root, wanted, skip_dir)` walks `root` (hidden entries and the folders
`skip_dir` names left out, symbolic links to folders not followed but listed, `linked_note`,
unless the walk reads the folder anyway) and returns every entry whose name `wanted`
accepts, each with None (read it) or the reason it is not read (links of other names to
nothing or in a loop are listed apart, `broken_note`):

- a symbolic link whose target lies outside `root` (a stranger's folder could otherwise
  index `~/.aws/credentials` and send it to an API) or is hidden inside it (`cfg.md ->
  .env`: the walk skips hidden entries, and a link must not read one for it), leads
  nowhere, or loops;
- a FIFO, socket or device (opening a FIFO blocks until a writer comes);
- a name that is not UTF-8, or that holds a control character or a bidirectional override:
  an escape sequence in a name would be obeyed by the terminal that prints it, a newline
  would split a one-line error in two, an override shows the name as another, and the name
  becomes the document id every output carries;
- a subfolder that cannot be listed (its files would be missed without a word);
- a second name that differs from another only in its Unicode form (NFC / NFD).

`recheck(path, real_root)` asks the same of one file again just before it is read, and
`pinned(path, real_root)` opens it once, checks the opened file and hands the loaders
`/proc/self/fd/N`: a file swapped for a link out of the folder mid-run is never read.

`shown(path)` is a path as an error line may print it: undecodable bytes as `\\xe9`, control
characters as `\\n`, `\\x1b`; `escaped(text, keep)` the same for any text (`ragkit ask` keeps
newlines and tabs).

What it is not: a reader (`ragkit.loaders.text`, `ragkit.loaders.load_file`), nor a check of
hard links (a hard link is the file itself, wherever else it is named).
"""
from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.loaders.text import not_regular

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Unicode's bidirectional embeddings, overrides and isolates ("Trojan Source"): a name such as
# "invoice\u202efdp.exe" prints as "invoiceexe.pdf". Marks a right-to-left name needs (LRM,
# RLM, the zero-width joiners) are allowed.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_OUTSIDE = ("a symbolic link to {target}, outside the folder; ragkit reads only the folder's "
            "own files (copy the file in to index it)")


def _escape(char: str) -> str:
    return _ESCAPES.get(char, f"\\x{ord(char):02x}")


def escaped(text: str, keep: str = "") -> str:
    """`text` with each control character but those in `keep` written as its escape (`\\n`,
    `\\x1b`), and each bidirectional override as `\\u202e`: what a terminal would obey is
    shown instead."""
    text = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def shown(path: Path | str) -> str:
    """`path` printable on one line of a terminal (see the module docstring)."""
    return escaped(os.fsencode(path).decode("utf-8", "backslashreplace"))


def _name_problem(rel: str) -> str | None:
    """Why the relative name `rel` cannot be a document id, or None."""
    raw = os.fsencode(rel)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"its name is not UTF-8 (byte \\x{raw[exc.start]:02x}); rename the file"
    if control := _CONTROL.search(rel):
        return (f"its name holds a control character ({_escape(control.group())}); rename "
                f"the file")
    if bidi := _BIDI.search(rel):
        return (f"its name holds a bidirectional override (U+{ord(bidi.group()):04X}), which "
                f"shows it as another name; rename the file")
    return None


def _inside(target: str, real_root: str) -> bool:
    return target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep)


def _readable_at(target: str, real_root: str) -> bool:
    """Whether the resolved path `target` (an opened file's) lies in the folder `real_root`
    and not in a hidden part of it."""
    parts = os.path.relpath(target, real_root).split(os.sep)
    return _inside(target, real_root) and not any(part.startswith(".") for part in parts)


def _problem(entry: os.DirEntry, rel: str, real_root: str) -> str | None:
    """Why the entry at `path` is not read, or None (see the module docstring)."""
    if why := _name_problem(rel):
        return why
    try:
        if entry.is_file(follow_symlinks=False):  # the common case, from the listing alone
            return None
    except OSError as exc:
        return f"cannot read ({exc.strerror or exc})"
    return recheck(entry.path, real_root)


def recheck(path: str | Path, real_root: str) -> str | None:
    """Why the file at `path` is not read, from the disk now (its name aside): a link out of
    the folder (`real_root`, resolved), to a hidden file, to nothing or in a loop, or not a
    regular file. The folder loader asks again just before each file is opened, so a file
    swapped for a link to /etc/passwd after the listing (while other files were read) is
    refused as the listing would have refused it."""
    try:
        info = os.lstat(path)
        linked = stat.S_ISLNK(info.st_mode)
        if linked:
            try:
                info = os.stat(path)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return "a symbolic link that loops back on itself"
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    return (f"a symbolic link to nothing ({shown(os.readlink(path))} does not "
                            f"exist)")
                raise
        target = os.path.realpath(path)  # also through a folder above swapped for a link
        if not _inside(target, real_root):
            return _OUTSIDE.format(target=shown(target))
        if linked:
            hidden = os.path.relpath(target, real_root)
            if any(part.startswith(".") for part in hidden.split(os.sep)):
                return (f"a symbolic link to {shown(hidden)}, a hidden file of the folder; "
                        f"ragkit does not read hidden files")
    except OSError as exc:
        return f"cannot read ({exc.strerror or exc})"
    return not_regular(info.st_mode)


def scan(root: Path, wanted: Callable[[str], bool], skip_dir: Callable[[Path], bool],
         others: list[Path] | None = None, links: list[Path] | None = None,
         broken: list[Path] | None = None) -> list[tuple[Path, str | None]]:
    """(path, None or why it is not read) for each entry under `root` whose name `wanted`
    accepts, in path order; nothing hidden, nothing under a folder `skip_dir` accepts. The
    entries `wanted` refuses are appended to `others` when it is given (to say what was left
    out), and the symbolic links to folders, whatever their name, to `links` when that is
    given instead (they were counted as files of no suffix, and one named like a document,
    `papers.md`, refused as a file: `linked_note` says what they are) — but for a link to a
    folder the walk reads anyway (`_walked`) — and those `wanted` refuses that lead nowhere
    or loop to `broken` when that is given (counted as files of no suffix: `broken_note`).
    Walked with a stack, not recursion (`os.walk` and `Path.rglob` raise RecursionError past
    about 1,000 nested folders)."""
    root = Path(root)
    real_root = os.path.realpath(root)
    found: list[tuple[Path, str | None]] = []
    folders = [(root, "")]  # each with its path relative to root, "" or ending in "/"
    while folders:
        folder, prefix = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:  # its files would be missed without a word
            found.append((folder, f"cannot list this folder ({exc.strerror or exc})"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = folder / entry.name
            try:
                is_folder = entry.is_dir(follow_symlinks=False)  # a linked folder: not walked
            except OSError:
                is_folder = False
            if is_folder:
                if not skip_dir(path):
                    folders.append((path, f"{prefix}{entry.name}/"))
            elif links is not None and _linked_folder(entry):  # `papers.md -> ~/papers` too
                if not _walked(path, real_root, skip_dir):  # else read under its own name
                    links.append(path)
            elif wanted(entry.name):
                found.append((path, _problem(entry, prefix + entry.name, real_root)))
            elif broken is not None and _broken_link(entry):
                broken.append(path)
            elif others is not None:
                others.append(path)
    return _twins(root, sorted(found, key=lambda entry: entry[0]))


def _linked_folder(entry: os.DirEntry) -> bool:
    """Whether `entry` is a symbolic link to a folder (which the walk does not follow)."""
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False


def _walked(link: Path, real_root: str, skip_dir: Callable[[Path], bool]) -> bool:
    """Whether the folder the symbolic link `link` names is walked anyway: inside the folder
    (`real_root`, resolved), nothing hidden on the way, no folder `skip_dir` accepts. Its files
    are then read under their own path, and the link is not one to tell of ("copy it in"
    was wrong advice for files that are indexed)."""
    target = os.path.realpath(link)
    if not _inside(target, real_root):
        return False
    rel = os.path.relpath(target, real_root)
    parts = [] if rel == os.curdir else rel.split(os.sep)
    return not any(part.startswith(".") or skip_dir(Path(real_root, *parts[:i + 1]))
                   for i, part in enumerate(parts))


def _broken_link(entry: os.DirEntry) -> bool:
    """Whether `entry` is a symbolic link to nothing or in a loop."""
    try:
        if not entry.is_symlink():
            return False
        os.stat(entry.path)
    except OSError as exc:
        return exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)
    return False


def linked_note(linked: list[str]) -> str:
    """One line on the symbolic links to folders a walk left out (relative names); "" for
    none: "left out 2 symbolic links to folders, which ragkit does not follow: papers,
    shared (give the folder itself, or copy it in)"."""
    return _listed(linked, ("symbolic link to a folder", "symbolic links to folders"),
                   ", which ragkit does not follow", " (give the folder itself, or copy it in)")


def broken_note(broken: list[str]) -> str:
    """One line on the symbolic links to nothing or in a loop a walk left out (relative
    names, of types ragkit does not read: one named like a document is an error line of
    its own); "" for none: "left out 2 broken symbolic links (to nothing, or in a loop):
    old-notes, table.csv"."""
    return _listed(broken, ("broken symbolic link", "broken symbolic links"),
                   " (to nothing, or in a loop)", "")


def _listed(names: list[str], what: tuple[str, str], said: str, advice: str) -> str:
    """"left out N `what`[`said`]: the first five `names`…`advice`", or "" for none."""
    if not names:
        return ""
    shown_names = ", ".join(shown(n) for n in names[:5]) + (", …" if len(names) > 5 else "")
    return f"left out {len(names)} {what[len(names) != 1]}{said}: {shown_names}{advice}"


def _twins(root: Path, found: list[tuple[Path, str | None]]) -> list[tuple[Path, str | None]]:
    """`found` with the second of two names that differ only in their Unicode form (`café.md`
    in NFC and in NFD, as a folder copied from macOS beside one written on Linux holds)
    refused: they print the same, so two documents would carry one visible id."""
    first: dict[str, Path] = {}
    out = []
    for path, why in found:
        rel = path.relative_to(root).as_posix()
        key = unicodedata.normalize("NFC", rel)
        if why is None and key in first:
            why = (f"the same name as {first[key].relative_to(root).as_posix()} in another "
                   f"Unicode form (NFC/NFD); rename one")
        elif why is None:
            first[key] = path
        out.append((path, why))
    return out


@contextmanager
def pinned(path: Path, real_root: str) -> Iterator[Path]:
    """`path` opened once without following a link at its end, the opened file checked to
    lie in the folder (`/proc/self/fd`, Linux), and given to the loaders as
    `/proc/self/fd/N`, which reopens that very file whatever the name means by then. Where
    there is no /proc, `path` itself (the `recheck` just before is all there is)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        yield path
        return
    try:  # an in-folder link (the listing allows them): its target, the final part unfollowed
        fd = os.open(os.path.realpath(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:  # ELOOP: a link put at the end since the listing
        changed = "; did it change while the folder was read?" if exc.errno in (
            errno.ELOOP, errno.ENOENT) else ""
        raise RagkitError(f"{shown(path)}: cannot read ({exc.strerror or exc}{changed})"
                          ) from None
    try:
        opened = os.readlink(fds / str(fd))
        if not _readable_at(opened, real_root) or not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RagkitError(f"{shown(path)}: changed while the folder was read (it now "
                              f"opens {shown(opened)}); run again")
        yield fds / str(fd)
    finally:
        os.close(fd)
