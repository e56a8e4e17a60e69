"""Trace files of agent runs: one JSON record per turn, written as each turn ends, read back.

What it is: `TraceWriter(path)` writes one record per turn and flushes (and fsyncs) it, so
a crash keeps every finished turn; a file is replaced only if it is empty or already a
ragkit trace (`is_trace`), and only by the first record: the first turn's record replaces
the old trace in one rename (`ragkit.atomic.write_text`), the later ones are appended. A run
that fails before its first turn ends (a refused key, an unreachable server) leaves the
previous trace as it was, not an empty file. `turn_record(...)` is the record of one turn:
the exact request sent, the reply, every tool call with its result, the usage counters and
timings.
`read_trace(path)` reads the records back; a line that is not a record is a clear error.

What it is not: the tables, timelines and OpenTelemetry spans made from the records
(`ragkit.agent.trace`, which re-exports these names). Kept apart so the agent loop writes
traces without loading pandas.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, TextIO

from ragkit.atomic import check_target, write_text
from ragkit.documents import RagkitError
from ragkit.jsonl import MalformedJSON, parse_json
from ragkit.pricing import Usage

FORMAT = "ragkit-agent-trace/1"


def is_trace(path: Path) -> bool:
    """True for an empty file or one whose first line is a ragkit trace record."""
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return False
    if not first.strip():
        return True
    try:
        return parse_json(first, path).get("format") == FORMAT
    except (ValueError, AttributeError):
        return False


class TraceWriter:
    """One JSON line per record at `path`: the first replaces an old trace atomically, the
    rest are appended. The path is checked at once (a file that is not a trace is refused
    before the run starts), but nothing is written until there is a record to write."""

    def __init__(self, path: Path | str) -> None:
        self.path = check_target(path, is_trace, "a ragkit trace", folder=False)
        self._handle: TextIO | None = None

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        if self._handle is None:  # the first record: the old trace goes only now
            write_text(self.path, line, is_ours=is_trace, what="a ragkit trace")
            self._handle = open(self.path, "a", encoding="utf-8")
            return
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()


def turn_record(turn: int, request: dict[str, Any], reply: Any, calls: list[Any],
                seconds: float, started_at: float | None = None) -> dict[str, Any]:
    """The trace record of one turn: request, reply, tool calls, usage, timings."""
    started_at = time.time() - seconds if started_at is None else started_at
    return {"format": FORMAT, "turn": turn, "started_at": started_at,
            "model_seconds": round(seconds, 6),
            "request": request,
            "reply": reply.model_dump(mode="json", exclude_none=True),
            "usage": Usage.of(reply.usage).as_dict(),
            "tool_calls": [{"id": c.id, "name": c.name, "input": c.input,
                            "content": c.result.content, "is_error": c.result.is_error,
                            "executed": c.executed, "seconds": round(c.seconds, 6)}
                           for c in calls]}


def read_trace(path: Path | str) -> list[dict[str, Any]]:
    """The records of a trace file; a line that is not a trace record is a clear error."""
    path = Path(path)
    if not path.is_file():
        raise RagkitError(f"{path}: no such trace file")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            record = parse_json(line, path, number)
        except MalformedJSON:
            raise RagkitError(f"{path}:{number}: not JSON (a trace has one record per line)") \
                from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise RagkitError(f"{path}:{number}: format: not a {FORMAT} record")
        records.append(record)
    return records
