"""The file tools' sandbox: listings that stay in their root and bounded regex search.

What it is:
- `glob_paths(root, pattern)`: a `Listing` of the regular files under an open `Root`
  (`ragkit.agent.safe_open`) whose relative path matches `pattern` (pathlib's '*', '?', '[abc]',
  '**'). It walks folder descriptors, never a path string, and follows no symlink: links, FIFOs,
  devices and sockets are not listed but named in the `Listing` for the result to report, so a
  symlink loop is one more link, not a crash. Hidden entries, `__pycache__` and `node_modules`
  are skipped, and so are names with a control character ("x\nsub/b.py:1:FAKE" would print as a
  hit of its own) or not UTF-8, each named, escaped, as skipped. The walk stops, and says so,
  after `MAX_ENTRIES` entries or `WALK_TIMEOUT` seconds; it goes at most `MAX_DEPTH` levels
  down, and names as not searched a folder whose files' paths would pass 4,096 characters;
- `search(pattern, texts, max_hits, timeout)`: a regular expression over files' lines, bounded
  in time and output (`ragkit.agent.regex_search`, whose names are kept here too).

What it is not: an operating-system sandbox, nor the reads (`ragkit.agent.safe_open`). Every
refusal is a `ToolError` saying what is allowed and what to try, never the root's path.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from itertools import islice
from pathlib import PurePosixPath

from ragkit.agent.safe_open import MAX_NAME, MAX_PATH, Root, short, shown_bytes, undecodable
from ragkit.agent.regex_search import (MAX_LINE, MAX_PATTERN, TIMEOUT,  # noqa: F401
                                       compile_pattern, search)
from ragkit.agent.tool import ToolError

MAX_ENTRIES = 50_000  # directory entries one glob (or grep's path_glob) may look at
WALK_TIMEOUT = 2.0  # seconds one glob may walk
MAX_DEPTH = 64  # folder levels below the root
SKIP_DIRS = frozenset({"__pycache__", "node_modules"})
_MAGIC = re.compile(r"[*?\[]")
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

@dataclass
class Listing:
    """What a walk found: matching `files`, and what it did not list or search, and why."""

    files: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # symlinks the pattern reaches (not followed)
    special: list[str] = field(default_factory=list)  # FIFOs, devices, sockets that match
    unsearched: list[str] = field(default_factory=list)  # folders too deep or unreadable
    stopped: str = ""  # '50,000 entries' or '2 s' when a budget ran out
    unprintable: list[str] = field(default_factory=list)  # names with control characters
    undecodable: list[str] = field(default_factory=list)  # names that are not UTF-8

    def notes(self, pattern: str, example: str = "code/**/*") -> list[str]:
        """One bracketed line per kind of thing left out, for the tool result; `example`: a
        narrower pattern to suggest when a budget ran out."""
        out = []
        if self.links:
            out.append(f"[not followed: {len(self.links)} symbolic link(s) — these tools never "
                       f"follow links, even inside the root: {_names(self.links)}]")
        if self.special:
            out.append(f"[skipped {len(self.special)} special file(s) (FIFO, device or socket): "
                       f"{_names(self.special)}]")
        if self.unsearched:
            out.append(f"[not searched: {len(self.unsearched)} folder(s) nested too deep (over "
                       f"{MAX_DEPTH} levels or {MAX_PATH:,} characters) or not readable: "
                       f"{_names(self.unsearched)}]")
        for names, what in ((self.unprintable, "holding a line break or another control "
                             "or invisible character (shown escaped)"),
                            (self.undecodable, "that are not UTF-8 (shown with \\x escapes)")):
            if names:
                out.append(f"[skipped {len(names)} name(s) {what}: {_names(names)}]")
        if self.stopped:
            out.append(f"[stopped after {self.stopped}: the listing is incomplete; narrow the "
                       f"pattern to a folder or a part of a name, e.g. '{short(example)}' "
                       f"instead of '{short(pattern)}']")
        return out


# C0, C1, line separators; and the marks that reorder or hide text (a right-to-left override
# shows "gpj.exe" as "exe.jpg" in a trace a person reads), not the joiners of Persian or emoji
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b\u200e\u200f\u202a-\u202e"
                      r"\u2066-\u2069\ufeff]")


def _names(paths: list[str]) -> str:
    return ", ".join(short(p, 80) for p in paths[:5]) + (", …" if len(paths) > 5 else "")


def pattern_parts(pattern: str) -> tuple[str, ...]:
    """The parts of a glob `pattern` relative to the root, or ToolError."""
    if isinstance(pattern, str) and undecodable(pattern):
        raise ToolError(f"the pattern '{short(shown_bytes(pattern))}' is not UTF-8 text (it "
                        f"holds a lone surrogate); use the names glob and grep print")
    if not isinstance(pattern, str) or not pattern.strip() or \
            PurePosixPath(pattern).is_absolute() or ".." in pattern.split("/"):
        raise ToolError(f"'{short(pattern)}' is not a pattern relative to the root; use e.g. "
                        f"'**/*.py' or 'policies/en/*.md' (no leading '/', no '..')")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"the pattern is {len(pattern):,} characters long (limit "
                        f"{MAX_PATTERN}); use a shorter one, e.g. 'code/**/*.py'")
    parts: list[str] = []
    for part in pattern.split("/"):
        if "**" in part and part != "**":
            raise ToolError(f"invalid glob pattern '{short(pattern)}': '**' must be a whole "
                            f"path part, e.g. '**/refund*.py' (use '*' within a name)")
        if part not in ("", ".") and not (part == "**" and parts[-1:] == ["**"]):
            parts.append(part)
    if not parts:
        raise ToolError(f"'{pattern}' is not a pattern relative to the root; use e.g. '**/*.py'")
    return tuple(parts)


def matches(pattern: tuple[str, ...], path: tuple[str, ...], below: bool = False) -> bool:
    """Whether `path` matches `pattern` (or, `below`, whether a path beneath it could), in
    time linear in both: a set of pattern positions reached, not backtracking."""
    n = len(pattern)

    def close(reach: list[bool]) -> list[bool]:  # '**' also matches no folder at all
        for i in range(n):
            if reach[i] and pattern[i] == "**":
                reach[i + 1] = True
        return reach

    reach = close([True] + [False] * n)
    for part in path:
        after = [False] * (n + 1)
        for i in range(n):
            if reach[i]:
                if pattern[i] == "**":
                    after[i] = True
                elif fnmatchcase(part, pattern[i]):
                    after[i + 1] = True
        reach = close(after)
    return any(reach[:n]) if below else reach[n]


def glob_paths(root: Root, pattern: str, max_entries: int = MAX_ENTRIES,
               timeout: float = WALK_TIMEOUT) -> Listing:
    """The regular files under `root` whose relative paths match `pattern`, sorted, and what
    was left out (see the module docstring)."""
    parts = pattern_parts(pattern)
    listing, seen, deadline = Listing(), 0, time.monotonic() + timeout
    start = 0  # leading literal folders are opened directly, not searched for
    while start < len(parts) - 1 and not _MAGIC.search(parts[start]) and parts[start] != "**":
        start += 1
    if any(p.startswith(".") or p in SKIP_DIRS for p in parts[:start]):
        return listing
    fd = os.dup(root.fd)
    for depth in range(start):
        try:
            deeper = os.open(parts[depth], _DIR, dir_fd=fd)
        except OSError as exc:
            try:
                if stat.S_ISLNK(os.stat(parts[depth], dir_fd=fd, follow_symlinks=False).st_mode):
                    listing.links.append("/".join(parts[:depth + 1]))
                elif exc.errno in (errno.EACCES, errno.EPERM):  # not "no files match"
                    listing.unsearched.append("/".join(parts[:depth + 1]))
            except OSError:
                pass  # no such folder: nothing to list
            os.close(fd)
            return listing
        os.close(fd)
        fd = deeper
    budget = _Budget(max_entries + 1, max_entries)  # for all folders together
    stack = [(fd, parts[:start], iter(_entries(fd, budget, listing)))]
    try:
        while stack and not listing.stopped:
            fd, where, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                os.close(stack.pop()[0])
                continue
            seen += 1
            if seen > max_entries:
                listing.stopped = f"{max_entries:,} entries"
            elif seen % 256 == 0 and time.monotonic() > deadline:
                listing.stopped = f"{timeout:g} s"
            if listing.stopped or entry.name.startswith(".") or entry.name in SKIP_DIRS:
                continue
            path = (*where, entry.name)
            if undecodable(entry.name):
                listing.undecodable.append(shown_bytes("/".join(path)))
                continue
            if _CONTROL.search(entry.name):
                listing.unprintable.append("/".join(path).encode("unicode_escape").decode())
                continue
            _visit(listing, stack, fd, entry, path, parts, budget)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    listing.files.sort()
    return listing


@dataclass
class _Budget:
    """The entries a walk's folders may still read (`left`), and the walk's limit (`cap`)."""

    left: int
    cap: int


def _entries(fd: int, budget: _Budget | None = None, listing: Listing | None = None
             ) -> list[os.DirEntry[str]]:
    """The first entries of the folder `fd`, sorted by name, as many as `budget` has left
    (`MAX_ENTRIES` + 1 without one: a huge folder is not read to its end), taken from it;
    [] if it cannot be listed. A folder met once the budget is spent is not read, and stops
    `listing`. Why one budget for the walk: each folder was read up to 50,001 entries but
    counted as one, so 64 nested folders of 50,000 names each held 3.2 million entries
    (0.5 GB) and took 12 s against a 2 s limit."""
    limit = MAX_ENTRIES + 1 if budget is None else budget.left
    if budget is not None and limit <= 0:
        if listing is not None and not listing.stopped:
            listing.stopped = f"{budget.cap:,} entries"
        return []
    try:
        with os.scandir(fd) as found:
            entries = sorted(islice(found, limit), key=lambda e: e.name)
    except OSError:
        return []
    if budget is not None:
        budget.left -= len(entries)
    return entries


def _visit(listing: Listing, stack: list, fd: int, entry: os.DirEntry[str],
           path: tuple[str, ...], pattern: tuple[str, ...], budget: _Budget) -> None:
    """Sort one directory entry into `listing`, or push the folder it is onto `stack`."""
    shown = "/".join(path)
    try:
        if entry.is_symlink():
            if matches(pattern, path) or matches(pattern, path, below=True):
                listing.links.append(shown)
        elif entry.is_dir(follow_symlinks=False):
            if not matches(pattern, path, below=True):
                return
            if len(path) > MAX_DEPTH or len(shown) >= MAX_PATH - MAX_NAME:
                listing.unsearched.append(shown)
                return
            deeper = os.open(entry.name, _DIR, dir_fd=fd)
            stack.append((deeper, path, iter(_entries(deeper, budget, listing))))
        elif matches(pattern, path):
            (listing.files if entry.is_file(follow_symlinks=False) else
             listing.special).append(shown)
    except OSError:  # gone, swapped for a link, or not readable since the folder was listed
        listing.unsearched.append(shown)


def top_level(root: Root) -> list[str]:
    """The visible folders and regular files directly under `root`, sorted."""
    return [e.name for e in _entries(root.fd) if not e.name.startswith(".")
            and e.name not in SKIP_DIRS and not _CONTROL.search(e.name)
            and not undecodable(e.name) and not e.is_symlink()
            and (e.is_dir(follow_symlinks=False) or e.is_file(follow_symlinks=False))]
