"""Small file tools over a dict of files, with the documented names, arguments and outputs of
`ragkit.agent.tools` (grep `path:line:text`, glob paths, read_file `  N | text` lines), and an
executor with the gate's contract (schema check, approval for write tools, never raises)."""
from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

from ragkit.agent.tool import Tool, ToolContext, ToolError, ToolResult

SHOPCORE = Path(__file__).resolve().parent.parent / "data" / "corpus" / "code" / "shopcore"


def shopcore_files() -> dict[str, str]:
    return {p.relative_to(SHOPCORE).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(SHOPCORE.rglob("*")) if p.is_file()}


def file_tools(files: dict[str, str]) -> list[Tool]:
    def grep(args: dict[str, Any], context: ToolContext) -> str:
        try:
            pattern = re.compile(args["pattern"])
        except re.error as exc:
            raise ToolError(f"invalid regex: {exc}; escape special characters") from None
        hits = [f"{path}:{n}:{line}" for path, text in sorted(files.items())
                if fnmatch.fnmatch(path, args.get("path_glob", "*"))
                for n, line in enumerate(text.splitlines(), start=1) if pattern.search(line)]
        return "\n".join(hits[:args.get("max_hits", 100)]) or "(no matches)"

    def glob(args: dict[str, Any], context: ToolContext) -> str:
        pattern = args["pattern"].removeprefix("**/")
        found = [p for p in sorted(files) if fnmatch.fnmatch(p, pattern)
                 or fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern)]
        return "\n".join(found) or "[no files match]"

    def read_file(args: dict[str, Any], context: ToolContext) -> str:
        if args["path"] not in files:
            raise ToolError(f"no file {args['path']}; use glob to find paths")
        lines = files[args["path"]].splitlines()
        start, end = args.get("start_line", 1), min(args.get("end_line", len(lines)), len(lines))
        body = "\n".join(f"{n:4d} | {lines[n - 1]}" for n in range(start, end + 1))
        return f"{args['path']} lines {start}-{end} of {len(lines)}\n{body}"

    string = {"type": "string"}
    integer = {"type": "integer"}
    return [
        Tool("grep", "Regex search over the files; hits as path:line:text.",
             {"type": "object", "properties": {"pattern": string, "path_glob": string,
                                               "max_hits": integer},
              "required": ["pattern"], "additionalProperties": False}, grep),
        Tool("glob", "File paths matching a glob pattern.",
             {"type": "object", "properties": {"pattern": string}, "required": ["pattern"],
              "additionalProperties": False}, glob),
        Tool("read_file", "Numbered lines of one file, optionally a line range.",
             {"type": "object", "properties": {"path": string, "start_line": integer,
                                               "end_line": integer},
              "required": ["path"], "additionalProperties": False}, read_file),
    ]


def note_tool(saved: list[dict[str, Any]]) -> Tool:
    def save(args: dict[str, Any], context: ToolContext) -> str:
        saved.append(args)
        return f"saved note {args['title']}"
    return Tool("notes_save", "Save a note.", {
        "type": "object", "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
        "required": ["title", "text"], "additionalProperties": False}, save, writes=True)


def executor(tools: list[Tool], approve: bool = False):
    """`run_tool(name, args, context)` with the gate's contract, over `tools`."""
    by_name = {t.name: t for t in tools}
    types = {"string": str, "integer": int}

    def run_tool(name: str, args: dict[str, Any], context: ToolContext) -> ToolResult:
        tool = by_name[name]
        props = tool.input_schema["properties"]
        for key in tool.input_schema.get("required", []):
            if key not in args:
                return ToolResult(f"Error: {name} needs '{key}'.", is_error=True)
        for key, value in args.items():
            if key not in props or not isinstance(value, types[props[key]["type"]]):
                return ToolResult(f"Error: {name}: bad field '{key}'; the fields are "
                                  f"{', '.join(props)}.", is_error=True)
        if tool.writes and not approve:
            return ToolResult(f"Not executed: the user did not approve {name}.", is_error=True)
        try:
            out = tool.run(args, context)
        except ToolError as exc:
            return ToolResult(f"Error: {exc}", is_error=True)
        return out if isinstance(out, ToolResult) else ToolResult(out)
    return run_tool
