"""The file tools' sandbox: paths that cannot leave their root, text-only reads, bounded grep.

What it is:
- `resolve(root, path)`: a model-given relative path as a real path inside `root`; absolute
  paths, `..` escapes and symlinks whose target lies outside are refused (resolve, then
  `is_relative_to`, as seed 004's `read_file` does);
- `read_text(path)`: a file's text, refused with guidance when it is huge, binary (a NUL byte)
  or not UTF-8;
- `walk(root)`, `glob_paths(root, pattern)`: files under `root` as sorted relative paths,
  never through a symlinked folder nor to a file outside the root; hidden entries and
  `__pycache__` are skipped;
- `search(pattern, texts, max_hits, timeout)`: a regular expression over files' lines, bounded
  in time and output. Python's `re` cannot be interrupted once a match starts, and a pattern
  such as `(a+)+$` tries about 2^40 ways to match a 40-character 'aaa…!' line (hours), so the search runs in a child Python process (`-I -S`: no site, no environment, no
  files — it receives the texts on stdin) that is killed at the deadline.

What it is not: an operating-system sandbox. It guards what the tools read, not the process.
Every refusal is a `ToolError` saying what is allowed and what to try instead.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

from ragkit.agent.tool import ToolError

MAX_FILE_BYTES = 1_000_000  # files above this are refused by read_file and skipped by grep
MAX_PATTERN = 500  # characters of a regular expression
MAX_LINE = 300  # characters of one grep hit's line text
TIMEOUT = 2.0  # seconds a regex search may run
SKIP_DIRS = frozenset({"__pycache__", "node_modules"})

# The child process: read {"pattern", "files": [[path, text]], "max_hits", "max_line"} on
# stdin, write [[path, line number, text], ...] (at most max_hits + 1) on stdout.
_CHILD = r"""
import json, re, sys
job = json.load(sys.stdin)
rx = re.compile(job["pattern"])
hits, limit, width = [], job["max_hits"] + 1, job["max_line"]
for path, text in job["files"]:
    for number, line in enumerate(text.splitlines(), start=1):
        if rx.search(line):
            hits.append([path, number, line if len(line) <= width else line[:width] + " …"])
            if len(hits) >= limit:
                break
    if len(hits) >= limit:
        break
json.dump(hits, sys.stdout)
"""


def resolve(root: Path, path: str) -> Path:
    """`path` (relative to `root`) as a resolved path that is inside `root`, or ToolError."""
    allowed = "give a path relative to the root, e.g. 'code/shopcore/payments/refund.py'"
    if not isinstance(path, str) or not path.strip():
        raise ToolError(f"empty path; {allowed}")
    if "\x00" in path:
        raise ToolError(f"the path contains a NUL character; {allowed}")
    if PurePosixPath(path).is_absolute() or re.match(r"^[A-Za-z]:[\\/]", path) or \
            path.startswith("~"):
        raise ToolError(f"'{path}' is an absolute path, and only files under the root can be "
                        f"read; {allowed}")
    base = Path(root).resolve()
    try:
        target = (base / path).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long, ...
        raise ToolError(f"'{path}' cannot be resolved ({exc}); {allowed}") from None
    if not target.is_relative_to(base):
        how = "through a symlink " if ".." not in PurePosixPath(path).parts else ""
        raise ToolError(f"'{path}' leads {how}outside the root, which these tools cannot "
                        f"leave; {allowed} (no '..' above the root, no links out of it)")
    return target


def relative(root: Path, path: Path) -> str:
    """`path` relative to `root` with forward slashes (the semantic id tools show)."""
    return Path(path).relative_to(Path(root).resolve()).as_posix()


def read_text(path: Path, shown: str) -> str:
    """The UTF-8 text of the file at `path` (shown to the model as `shown`), or ToolError."""
    if not path.exists():
        raise ToolError(f"no such file '{shown}'; list files with glob, e.g. "
                        f"glob(pattern='**/*{Path(shown).stem}*')")
    if path.is_dir():
        raise ToolError(f"'{shown}' is a folder, not a file; list it with "
                        f"glob(pattern='{shown.rstrip('/')}/*')")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(f"'{shown}' is too large to read ({size:,} bytes; the limit is "
                        f"{MAX_FILE_BYTES:,}); find the lines you need with grep "
                        f"(path_glob='{shown}') instead")
    data = path.read_bytes()
    if b"\x00" in data:
        raise ToolError(f"'{shown}' is a binary file (it contains NUL bytes); these tools read "
                        f"text files only — look for a text file that describes it instead")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{shown}' is not UTF-8 text (undecodable byte at offset "
                        f"{exc.start}); these tools read UTF-8 text files only") from None


def walk(root: Path) -> list[str]:
    """Every regular file under `root` as a sorted relative path (see the module docstring)."""
    base = Path(root).resolve()
    found: list[str] = []
    for folder, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS]
        for name in files:
            if name.startswith("."):
                continue
            path = Path(folder) / name
            real = path.resolve()
            if real.is_relative_to(base) and real.is_file():
                found.append(path.relative_to(base).as_posix())
    return sorted(found)


def glob_paths(root: Path, pattern: str) -> list[str]:
    """Files under `root` whose relative path matches `pattern` (pathlib glob rules), sorted;
    only what `sandbox.walk` lists (no hidden files, nothing through links out of the root)."""
    parts = PurePosixPath(pattern).parts
    if not pattern or PurePosixPath(pattern).is_absolute() or ".." in parts:
        raise ToolError(f"'{pattern}' is not a pattern relative to the root; use e.g. "
                        f"'**/*.py' or 'policies/en/*.md' (no leading '/', no '..')")
    base = Path(root).resolve()
    try:
        matched = {p.relative_to(base).as_posix() for p in base.glob(pattern)}
    except (ValueError, NotImplementedError) as exc:
        raise ToolError(f"invalid glob pattern '{pattern}': {exc}; '**' must be a whole path "
                        f"part, e.g. '**/refund*.py'") from None
    return sorted(matched.intersection(walk(base)))


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled, or ToolError quoting the regex error and how to fix it."""
    if not pattern:
        raise ToolError("empty pattern; give a regular expression, e.g. 'def calculate_refund'")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"the pattern is {len(pattern)} characters long (limit {MAX_PATTERN}); "
                        f"search for a shorter, distinctive part of it")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc} (Python `re` syntax; "
                        f"escape literal characters such as ( [ . * + ? with a backslash)"
                        ) from None


def search(pattern: str, files: list[tuple[str, str]], max_hits: int,
           timeout: float = TIMEOUT) -> tuple[list[tuple[str, int, str]], bool]:
    """Lines of `files` ((shown path, text), in order) matching `pattern`: at most `max_hits`
    (path, line number, text) and whether more matched. ToolError past `timeout` seconds."""
    compile_pattern(pattern)
    job = json.dumps({"pattern": pattern, "files": files, "max_hits": max_hits,
                      "max_line": MAX_LINE})
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _CHILD], input=job,
                              capture_output=True, text=True, encoding="utf-8", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"the regular expression {pattern!r} was stopped after {timeout:g} s "
                        f"without finishing; nested repetition such as (a+)+ or (.*)* "
                        f"backtracks without end — use a simpler pattern, e.g. a literal word "
                        f"or identifier") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"the search for {pattern!r} failed: {last}")
    hits = [(path, int(number), text) for path, number, text in json.loads(done.stdout)]
    return hits[:max_hits], len(hits) > max_hits
