"""The agent's file tools: seed 004's `grep`, `glob` and `read_file`, sandboxed to a root.

What it is: the three `run_*` functions `ragkit.agent.tools` registers, with seed 004's names
and its `path:line:text` format, every path resolved inside `ToolContext.root` by
`ragkit.agent.sandbox`, every result capped to the context's output budget with a message that
says how to search more narrowly.

What it is not: the tool definitions (descriptions, schemas, examples — `ragkit.agent.tools`)
or the approval and schema checks (`ragkit.agent.gate`).
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from ragkit.agent.sandbox import (MAX_FILE_BYTES, TIMEOUT, compile_pattern, glob_paths,
                                  read_text, relative, resolve, search, walk)
from ragkit.agent.tool import ToolContext, ToolError

MAX_HITS, MAX_GLOB, MAX_READ_LINES, MAX_LINE_READ = 200, 200, 200, 1000
MAX_GREP_CHARS = 20_000_000  # text one grep call may search (the corpus is about 0.8 M)


def _no_files(root: Path, pattern: str) -> str:
    top = sorted({p.split("/")[0] for p in walk(root)})[:20]
    example = pattern if pattern.startswith("**") else f"**/{pattern}"
    return (f"no files match '{pattern}'. Patterns are relative to the root and match files "
            f"only; '*' stays within one folder, '**/' spans folders (e.g. '{example}'). "
            f"Top-level entries: {', '.join(top) or '(the root is empty)'}")


def run_grep(args: dict[str, Any], ctx: ToolContext) -> str:
    pattern, where = args["pattern"], args.get("path_glob", "**/*")
    max_hits = args.get("max_hits", 50)
    compile_pattern(pattern)
    files, skipped, size = [], [], 0
    for rel in glob_paths(ctx.root, where):
        try:
            files.append((rel, read_text(resolve(ctx.root, rel), rel)))
        except ToolError:
            skipped.append(rel)
            continue
        size += len(files[-1][1])
        if size > MAX_GREP_CHARS:
            raise ToolError(f"'{where}' covers more than {MAX_GREP_CHARS:,} characters of "
                            f"text; search a part of the tree with a narrower path_glob, "
                            f"e.g. a folder such as '{PurePosixPath(rel).parts[0]}/**/*'")
    hits, more = search(pattern, files, max_hits, ctx.extra.get("grep_timeout", TIMEOUT))
    lines, used = [], 0
    for path, number, text in hits:  # within the output cap, leaving room for the notes
        line = f"{path}:{number}:{text}"
        if used + len(line) + 1 > ctx.max_output - 400:
            more = True
            break
        lines.append(line)
        used += len(line) + 1
    if not files:
        lines.append(_no_files(ctx.root, where))
    elif not hits:
        lines.append(f"no lines match {pattern!r} in the {len(files)} files of '{where}'; try "
                     f"a shorter or more general pattern, (?i) to ignore case, or docs_search "
                     f"for a question in words")
    if more:
        folder = PurePosixPath(hits[0][0]).parent.as_posix()
        folder = "**/*.md" if folder == "." else f"{folder}/**/*"
        lines.append(f"[truncated: {len(lines)} matching lines shown, and more match; "
                     f"narrow the search with a more specific pattern or a path_glob such as "
                     f"'{folder}']")
    if skipped:
        lines.append(f"[skipped {len(skipped)} file(s) that are binary, not UTF-8 or over "
                     f"{MAX_FILE_BYTES:,} bytes: {', '.join(skipped[:5])}]")
    return "\n".join(lines)


def run_glob(args: dict[str, Any], ctx: ToolContext) -> str:
    pattern = args["pattern"]
    paths = glob_paths(ctx.root, pattern)
    if not paths:
        return _no_files(ctx.root, pattern)
    shown = paths[:MAX_GLOB]
    if len(paths) > MAX_GLOB:
        shown.append(f"[truncated: {MAX_GLOB} of {len(paths)} files shown; use a narrower "
                     f"pattern, e.g. a folder such as '{PurePosixPath(paths[0]).parent}/*']")
    return "\n".join(shown)


def run_read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    target = resolve(ctx.root, args["path"])
    shown = relative(ctx.root, target)
    lines = read_text(target, shown).splitlines()
    total, start = len(lines), args.get("start_line", 1)
    end = min(args.get("end_line", total), total)
    if total == 0:
        return f"{shown} is empty (0 lines)"
    if start > total:
        raise ToolError(f"start_line {start} is past the end of '{shown}', which has {total} "
                        f"lines; give a start_line between 1 and {total}")
    if args.get("end_line", start) < start:
        raise ToolError(f"end_line {args['end_line']} is before start_line {start}")
    rows, used, budget = [], 0, ctx.max_output - 200
    for number in range(start, min(end, start + MAX_READ_LINES - 1) + 1):
        text = lines[number - 1]
        if len(text) > MAX_LINE_READ:
            text = text[:MAX_LINE_READ] + " … [line cut]"
        row = f"{number:>4} | {text}"
        if rows and used + len(row) + 1 > budget:
            break
        rows.append(row)
        used += len(row) + 1
    last = start + len(rows) - 1
    out = [f"{shown}: lines {start}–{last} of {total}", *rows]
    if last < end:
        out.append(f"[truncated: read lines {last + 1}–{min(end, last + len(rows))} next]")
    return "\n".join(out)
