"""Bounded regular-expression search over files' lines, for the agent's grep.

What it is: `compile_pattern(pattern)`, the pattern compiled or a `ToolError` quoting the
regex error and how to fix it; `search(pattern, texts, max_hits, timeout)`, a regular
expression over files' lines, bounded in time and output. `re` cannot be interrupted
mid-match (`(a+)+$` on a 40-character 'aaa…!' line tries 2^40 ways), so it runs in a child
Python (`-I -S`, the texts on stdin) killed at the deadline; the error says which was running
then, the pattern or the reading of texts.

What it is not: a listing of the files searched (`ragkit.agent.sandbox.glob_paths`).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

from ragkit.agent.tool import ToolError

MAX_PATTERN = 500  # characters of a regular expression or a glob pattern
MAX_LINE = 300  # characters of one grep hit's line text
TIMEOUT = 2.0  # seconds a regex search may run

# The child process: read {"pattern", "files": [[path, text]], "max_hits", "max_line"} on
# stdin, write [[path, line number, text], ...] (at most max_hits + 1) on stdout.
_CHILD = r"""
import json, re, sys
job = json.load(sys.stdin)
rx = re.compile(job["pattern"])
sys.stderr.write("matching\n")
sys.stderr.flush()
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


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled, or ToolError quoting the regex error and how to fix it."""
    if not pattern:
        raise ToolError("empty pattern; give a regular expression, e.g. 'def calculate_refund'")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"the pattern is {len(pattern)} characters long (limit {MAX_PATTERN}); "
                        f"search for a shorter, distinctive part of it")
    try:
        return re.compile(pattern)
    except (re.error, OverflowError) as exc:  # x{4294967295}: "the repetition number is too large"
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
    except subprocess.TimeoutExpired as exc:
        said = exc.stderr or ""
        if "matching" not in (said.decode("utf-8", "replace") if isinstance(said, bytes)
                              else said):
            size = sum(len(text) for _, text in files) / 1e6
            raise ToolError(f"the search for {pattern!r} ran out of its {timeout:g} s before "
                            f"matching began (reading {len(files)} files, {size:.1f} M "
                            f"characters, on a busy machine); narrow path_glob to fewer files"
                            ) from None
        raise ToolError(f"the regular expression {pattern!r} was stopped after {timeout:g} s "
                        f"without finishing: nested repetition such as (a+)+ or (.*)* "
                        f"backtracks without end, and a repeated group such as (ab)*c is slow "
                        f"over a very long line — use a simpler pattern, e.g. a literal word "
                        f"or identifier, or narrow path_glob to fewer files") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"the search for {pattern!r} failed: {last}")
    hits = [(path, int(number), text) for path, number, text in json.loads(done.stdout)]
    return hits[:max_hits], len(hits) > max_hits
