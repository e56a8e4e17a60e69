"""The agent's file tools: `grep`, `glob` and `read_file`, sandboxed to a root.

What it is: the three `run_*` functions `ragkit.agent.tools` registers, with the
`path:line:text` format of Anthropic's agentic-search examples, every file opened beneath
`ToolContext.root` by `ragkit.agent.safe_open` (no link followed, regular single-named files
only) and every listing bounded by `ragkit.agent.sandbox` (entries, seconds, depth). Each
result is capped to the context's output budget with a message that says how to search more
narrowly, and names what was left out (links, special files, folders too deep, a budget that
ran out). Budgets can be lowered per context: `extra` keys `grep_timeout`, `walk_timeout`,
`walk_max_entries`. A file over `MAX_FILE_BYTES` is skipped by grep, which names it as not
searched, and read by read_file only by line range, streamed (`ragkit.agent.line_window`).

What it is not: the tool definitions (descriptions, schemas, examples — `ragkit.agent.tools`)
or the approval and schema checks (`ragkit.agent.gate`).
"""
from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Any

from ragkit.agent import line_window
from ragkit.agent.line_window import Window, read_window
from ragkit.agent.safe_open import MAX_FILE_BYTES, Root, TooLarge, parts, read_text, short
from ragkit.agent.sandbox import (MAX_ENTRIES, TIMEOUT, WALK_TIMEOUT, Listing, compile_pattern,
                                  glob_paths, matches, pattern_parts, search, top_level)
from ragkit.agent.tool import ToolContext, ToolError
from ragkit.text_stats import counted

MAX_HITS, MAX_GLOB, MAX_READ_LINES, MAX_LINE_READ = 200, 200, 200, 1000
MAX_GREP_CHARS = 20_000_000  # text one grep call may search (the corpus is about 0.8 M)
NEAR = 3  # names a no-match hint shows


def _no_files(root: Root, pattern: str, ctx: ToolContext) -> str:
    """What to say when `pattern` matched no file, as one bracketed line: a note, as the
    listing's other notes are, so a result without a path line is one that found nothing —
    which is what a program reading results goes by (the offline stand-in), never these
    words. It says how patterns work, with examples that are never the pattern that just
    failed and that say what they find: '**/x' for 'x' (spanning folders), names that match
    but for their case (patterns are case-sensitive), the suffix alone ('**/*.md', if that
    is not what failed) and the top level. Where even '**/*' finds nothing, it says so. Not
    a spelling corrector: of a near miss, only the case of its letters is forgiven."""
    top = ', '.join(top_level(root)[:20]) or '(the root is empty)'
    parts = pattern_parts(pattern)
    if parts in (("**",), ("**", "*")):
        return (f"[no files match '{pattern}': the root holds no file these tools can list "
                f"(hidden files, links and special files are left out). Top-level entries: "
                f"{top}]")
    every = _listing(root, "**/*", ctx)
    anywhere = parts if parts[0] == "**" else ("**", *parts)
    found = [f for f in every.files if matches(anywhere, tuple(f.split("/")))]
    exact = set(found)
    if anywhere == parts:
        hints = ["'**/' spans folders, and '**/*' lists every file"]
    else:
        hints = [f"'**/' spans folders: '**/{pattern}' finds " + (
            f"{counted(len(found), 'file')} ({_some(found)})" if found else "nothing either")]
    folded = tuple(part.lower() for part in anywhere)
    near = [f for f in every.files if f not in exact
            and matches(folded, tuple(f.lower().split("/")))]
    if near:
        hints.append(f"names that match but for the case of a letter: {_some(near)}")
    suffix = PurePosixPath(parts[-1]).suffix
    if suffix and not set(suffix) & set("*?[") and anywhere != ("**", f"*{suffix}"):
        same = [f for f in every.files if f.endswith(suffix)]
        hints.append(f"'**/*{suffix}' lists {counted(len(same), 'file')}" if same else
                     f"no file name ends in '{suffix}'")
    if every.stopped:
        hints.append(f"these hints looked at part of the tree (stopped after {every.stopped})")
    return (f"[no files match '{pattern}'. Patterns are relative to the root, match files "
            f"only and are case-sensitive; '*' stays within one folder, {'; '.join(hints)}. "
            f"Top-level entries: {top}]")


def _some(paths: list[str]) -> str:
    """The first few of `paths`, for a hint: "a.md, b.md, c.md, …"."""
    return ", ".join(short(p, 80) for p in paths[:NEAR]) + (", …" if len(paths) > NEAR else "")


def narrower(path: str) -> str:
    """A pattern narrower than '**/*' that still finds `path`: its top folder's files
    ('code/**/*'), or for a file at the top, files named like it ('f000*.txt')."""
    if "/" in path:
        return f"{path.split('/')[0]}/**/*"
    name = PurePosixPath(path)
    return f"{name.stem[:max(1, len(name.stem) // 2)]}*{name.suffix}"


def _notes(listing: Listing, pattern: str) -> list[str]:
    """`listing.notes`, suggesting a pattern narrower around the first file found."""
    return listing.notes(pattern, *([narrower(listing.files[0])] if listing.files else []))


def _listing(root: Root, pattern: str, ctx: ToolContext) -> Listing:
    """`glob_paths` within the context's walk budgets (`extra`: walk_max_entries, walk_timeout)."""
    return glob_paths(root, pattern, ctx.extra.get("walk_max_entries", MAX_ENTRIES),
                      ctx.extra.get("walk_timeout", WALK_TIMEOUT))


def run_grep(args: dict[str, Any], ctx: ToolContext) -> str:
    pattern, where = args["pattern"], args.get("path_glob", "**/*")
    max_hits = args.get("max_hits", 50)
    compile_pattern(pattern)
    files, skipped, large, size = [], [], [], 0
    with _root(ctx) as root:
        listing = _listing(root, where, ctx)
        for rel in listing.files:
            try:
                files.append((rel, read_text(root, rel.split("/"), rel)))
            except ToolError as exc:
                (large if isinstance(exc, TooLarge) else skipped).append(rel)
                continue
            size += len(files[-1][1])
            if size > MAX_GREP_CHARS:
                raise ToolError(f"'{where}' covers more than {MAX_GREP_CHARS:,} characters of "
                                f"text; search a part of the tree with a narrower path_glob, "
                                f"e.g. a folder such as '{PurePosixPath(rel).parts[0]}/**/*'")
        missing = "" if listing.files else _no_files(root, where, ctx)
    notes = _notes(listing, where)
    if skipped:
        notes.insert(0, f"[skipped {len(skipped)} file(s) that are binary, not UTF-8, "
                        f"hard-linked or unreadable: {', '.join(skipped[:5])}]")
    if large:
        notes.insert(0, f"[not searched: {counted(len(large), 'file')} over {MAX_FILE_BYTES:,} "
                        f"bytes, which read_file reads in parts with start_line and end_line: "
                        f"{', '.join(large[:5])}]")
    hits, more = search(pattern, files, max_hits, ctx.extra.get("grep_timeout", TIMEOUT))
    lines, used = [], 0
    budget = ctx.max_output - 300 - sum(len(n) + 1 for n in notes)  # room for the notes
    for path, number, text in hits:
        line = f"{path}:{number}:{text}"
        if used + len(line) + 1 > budget:
            more = True
            break
        lines.append(line)
        used += len(line) + 1
    if missing:
        lines.append(missing)
    elif not hits and (large or skipped):  # not "nothing matched": some were not searched
        unread = len(large) + len(skipped)
        lines.append(f"no file was searched: {counted(unread, 'file')} of '{where}' could "
                     f"not be searched (named below)" if not files else
                     f"no lines match {pattern!r} in the {counted(len(files), 'file')} "
                     f"searched of '{where}'; {counted(unread, 'other file')} could not be "
                     f"searched (named below)")
    elif not hits:
        lines.append(f"no lines match {pattern!r} in the {counted(len(files), 'file')} of "
                     f"'{where}'; try a shorter or more general pattern, (?i) to ignore case, "
                     f"or docs_search for a question in words")
    if more:
        folder = PurePosixPath(hits[0][0]).parent.as_posix()
        folder = narrower(hits[0][0]) if folder == "." else f"{folder}/**/*"
        lines.append(f"[truncated: {len(lines)} matching lines shown, and more match; "
                     f"narrow the search with a more specific pattern or a path_glob such as "
                     f"'{folder}']")
    return "\n".join(lines + notes)


def _root(ctx: ToolContext) -> Root:
    """The tools' root, opened; where it cannot be, the error names docs_search only when
    this run has it (it did with no index given)."""
    try:
        return Root(ctx.root)
    except ToolError as exc:
        if ctx.pipeline is None:
            raise
        raise ToolError(f"{exc} — use docs_search instead") from None


def run_glob(args: dict[str, Any], ctx: ToolContext) -> str:
    """The matching paths, at most `MAX_GLOB` and as many as leave room in the output for the
    notes (the output's cap cut off "200 of 300 files shown", the links and a stopped walk's
    note, and the last path mid-name)."""
    pattern = args["pattern"]
    with _root(ctx) as root:
        listing = _listing(root, pattern, ctx)
        missing = [] if listing.files else [_no_files(root, pattern, ctx)]
    paths, notes = listing.files, _notes(listing, pattern)
    budget = ctx.max_output - 300 - sum(len(n) + 1 for n in notes)  # room for the notes
    shown, used = [], 0
    for path in paths[:MAX_GLOB]:
        if used + len(path) + 1 > budget:
            break
        shown.append(path)
        used += len(path) + 1
    if len(shown) < len(paths):
        folder = PurePosixPath(paths[0]).parent.as_posix()
        example = f"a folder such as '{folder}/*'" if folder != "." else \
            f"a part of a name such as '{narrower(paths[0])}'"
        shown.append(f"[truncated: {len(shown)} of {len(paths)} files shown; use a narrower "
                     f"pattern, e.g. {example}]")
    return "\n".join(missing + shown + notes)


def _window(root: Root, names: list[str], shown: str, args: dict[str, Any]) -> Window:
    """The lines read_file may show of the file — from `start_line`, at most
    `MAX_READ_LINES` — read whole, or streamed when it is over `MAX_FILE_BYTES` and a line
    range was given (without one it is refused, its message saying how to read it)."""
    start = args.get("start_line", 1)
    last = start + MAX_READ_LINES - 1
    if "end_line" in args:
        last = max(start, min(last, args["end_line"]))
    try:
        lines = read_text(root, names, shown).splitlines()
    except TooLarge:
        if "start_line" not in args and "end_line" not in args:
            raise
        fd = root.open_file(names, shown)
        try:
            return read_window(fd, shown, start, last, MAX_LINE_READ)
        finally:
            os.close(fd)
    return Window(start, last, MAX_LINE_READ, lines[start - 1:last], len(lines))


def run_read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    names = parts(args["path"])
    shown = "/".join(names) or "."
    with _root(ctx) as root:
        window = _window(root, names, shown, args)
    total, start = window.total, args.get("start_line", 1)
    end = min(args.get("end_line", total), total)
    if total == 0:
        return f"{shown} is empty (0 lines)"
    if start > total and not window.complete:
        raise ToolError(f"start_line {_shown(start)} is past the {total:,} lines read of "
                        f"'{shown}' (its first {_size(line_window.MAX_SCAN_BYTES)}, all "
                        f"read_file reads of a file); give a start_line between 1 and {total}")
    if start > total:
        lines = f"{total} line{'s' * (total != 1)}"
        raise ToolError(f"start_line {_shown(start)} is past the end of '{shown}', which has "
                        f"{lines}; give a start_line between 1 and {total}")
    if args.get("end_line", start) < start:
        raise ToolError(f"end_line {_shown(args['end_line'])} is before start_line "
                        f"{_shown(start)}")
    rows, used, budget = [], 0, ctx.max_output - 200
    for number in range(start, min(end, start + MAX_READ_LINES - 1) + 1):
        text = window.rows[number - start]
        if len(text) > MAX_LINE_READ:
            text = text[:MAX_LINE_READ] + " … [line cut]"
        row = f"{number:>4} | {text}"
        if rows and used + len(row) + 1 > budget:
            break
        rows.append(row)
        used += len(row) + 1
    last = start + len(rows) - 1
    of = total if window.complete else f"more than {total:,}"
    out = [f"{shown}: lines {start}–{last} of {of}", *rows]
    if last < end:
        out.append(f"[truncated: read lines {last + 1}–{min(end, last + len(rows))} next]")
    return "\n".join(out)


def _size(size: int) -> str:
    """A power-of-two byte count in GiB or MiB: "1 GiB"."""
    return f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"


def _shown(number: int) -> str:
    """A line number as an error names it: `1e308` (a whole number to JSON Schema) was
    printed as its 309 digits."""
    return str(number) if number < 10**15 else f"{float(number):.3g}"
