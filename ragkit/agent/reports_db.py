"""The database behind `reports_sql`: the quarterly reports' figures in SQLite, read-only.

What it is: `query(sql, source)` runs ONE read-only SELECT (or WITH … SELECT) and returns a
small text table with the column names. The shipped source is `data/reports/`, CSV tables
written by `data/generators/make_reports.py` beside the reports they describe (`reports.csv`:
one row per company and quarter; `segments.csv`: one row per segment); each CSV becomes a
table named after its file, with INTEGER / REAL / TEXT columns inferred from the values
(an empty cell is NULL). A folder of CSVs is loaded once into a private temporary SQLite
file; a `.sqlite` / `.db` file is used as it is.

Why SQL at all (the agentic-RAG notes): an agent chooses between grep, SQL and vector
search. "Which company grew revenue fastest in 2025?" needs eight companies × eight
quarters summed and compared — a GROUP BY, not a passage that search could find.

Read-only three times over: the file is opened with a `mode=ro` URI, `PRAGMA query_only` is
on, and an authorizer allows only reading tables and calling functions (no PRAGMA, ATTACH,
writes or schema changes). A statement that is not a single SELECT/WITH is refused before it
runs; a query running past `TIMEOUT` seconds is interrupted by a progress handler. A value
is at most 16 MB (`MAX_VALUE`) and is cut to `MAX_CELL` characters as its row is fetched, so
fifty rows of huge values neither fill memory nor take seconds to lay out.

What it is not: a general SQL console, nor a parser of the reports' prose.
"""
from __future__ import annotations

import csv
import re
import sqlite3
import time
from itertools import islice
from pathlib import Path

from tabulate import tabulate

from ragkit.agent.tool import MAX_OUTPUT, ToolError
from ragkit.documents import RagkitError
from ragkit.stale_temp import process_scratch

DEFAULT_SOURCE = Path(__file__).resolve().parents[2] / "data" / "reports"
TIMEOUT = 2.0  # seconds one query may run
MAX_ROWS = 50  # rows shown; more are reported as truncated
# characters (or bytes) of one value kept as it is fetched: no more fit in a tool's result;
# a GROUP BY's group_concat of a thousand characters is shown whole
MAX_CELL = MAX_OUTPUT
SHORT_CELL = 200  # ... and in a single row that is still too wide
_CUT = re.compile(r" … \[[\d,]+ (characters|bytes)\]$")  # what `_clip` adds
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LEADING = re.compile(r"^(\s+|--[^\n]*(\n|$)|/\*.*?\*/)*", re.S)
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
            getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
_built: dict[tuple, Path] = {}
_workdir: Path | None = None  # `process_scratch`: a kernel that nbval kills leaves none behind


def _column_type(values: list[str]) -> str:
    present = [v for v in values if v != ""]
    for kind, parse in (("INTEGER", int), ("REAL", float)):
        try:
            for value in present:
                parse(value)
            return kind
        except ValueError:
            continue
    return "TEXT"


def _cell(value: str, kind: str) -> object:
    if value == "":
        return None
    return int(value) if kind == "INTEGER" else float(value) if kind == "REAL" else value


def _load_csv(conn: sqlite3.Connection, path: Path) -> None:
    """One CSV file as a table named after the file (header row = column names)."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise RagkitError(f"{path}: empty CSV, expected a header row")
    header, body = rows[0], rows[1:]
    for name in [path.stem, *header]:
        if not _IDENT.match(name):
            raise RagkitError(f"{path}: '{name}' is not a valid SQL name (letters, digits, _)")
    kinds = [_column_type([r[i] if i < len(r) else "" for r in body]) for i in range(len(header))]
    columns = ", ".join(f'"{n}" {k}' for n, k in zip(header, kinds))
    conn.execute(f'CREATE TABLE "{path.stem}" ({columns})')
    marks = ", ".join("?" * len(header))
    conn.executemany(f'INSERT INTO "{path.stem}" VALUES ({marks})',
                     [[_cell(r[i] if i < len(r) else "", k) for i, k in enumerate(kinds)]
                      for r in body])


def database_file(source: Path | None = None) -> Path:
    """The SQLite file for `source` (a folder of CSVs, one CSV, or a SQLite file), built once
    per process for CSVs (again when a CSV changes)."""
    global _workdir
    source = Path(source or DEFAULT_SOURCE)
    if source.is_file() and source.suffix.lower() != ".csv":
        return source
    csvs = sorted(source.glob("*.csv")) if source.is_dir() else [source] if source.is_file() else []
    if not csvs:
        raise ToolError(f"reports_sql is not available: no CSV tables or database at {source}")
    key = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in csvs)
    if key not in _built:
        if _workdir is None:
            _workdir = process_scratch("ragkit-reports-")
        target = _workdir / f"figures-{len(_built)}.sqlite"
        conn = sqlite3.connect(target)
        try:
            for path in csvs:
                _load_csv(conn, path)
            conn.commit()
        finally:
            conn.close()
        _built[key] = target
    return _built[key]


MAX_VALUE = 16_000_000  # bytes of one value a query may read or build (`connect`)


def _authorize(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def connect(source: Path | None = None, timeout: float = TIMEOUT) -> sqlite3.Connection:
    """A read-only connection (see the module docstring) that stops after `timeout` s."""
    path = database_file(source)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    conn.set_authorizer(_authorize)
    deadline = time.monotonic() + timeout
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    # one string or blob of at most MAX_VALUE bytes: replace(hex(zeroblob(250000000)), …) is
    # one step the progress handler cannot stop, and took 5 s and 2.7 GB
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE)
    return conn


def schema(conn: sqlite3.Connection) -> str:
    """Tables and their columns, one line each: `reports(company TEXT, year INTEGER, …)`."""
    conn.set_authorizer(None)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        lines = [f"{t}(" + ", ".join(f"{c[1]} {c[2]}" for c in conn.execute(
            f'PRAGMA table_info("{t}")')) + ")" for t in tables]
    finally:
        conn.set_authorizer(_authorize)
    return "\n".join(lines)


def check_select(sql: str) -> str:
    """`sql` without a trailing semicolon if it starts with SELECT or WITH, else ToolError."""
    body = _LEADING.sub("", sql or "").strip().rstrip(";").strip()
    if not re.match(r"(?i)(select|with)\b", body):
        raise ToolError("only a single read-only SELECT (or WITH … SELECT) query is allowed; "
                        "this database cannot be changed")
    return body


def query(sql: str, source: Path | None = None, max_rows: int = MAX_ROWS,
          timeout: float = TIMEOUT, max_chars: int | None = None) -> str:
    """The result of one SELECT as a text table (column names first), capped at `max_rows`
    rows and, if given, `max_chars` characters (fewer rows, never a cut row)."""
    body = check_select(sql)
    conn = connect(source, timeout)
    try:
        try:
            cursor = conn.execute(body)
            rows = [tuple(map(_clip, row)) for row in islice(cursor, max_rows + 1)]
        except (sqlite3.Warning, sqlite3.ProgrammingError) as exc:
            raise ToolError(f"one statement only ({exc}); send separate queries as separate "
                            f"calls") from None
        except sqlite3.DatabaseError as exc:
            if "interrupted" in str(exc):
                raise ToolError(f"the query was stopped after {timeout:g} s; add WHERE "
                                f"conditions, GROUP BY or LIMIT to make it smaller") from None
            if "not authorized" in str(exc):
                raise ToolError("not allowed: this tool only reads tables (no PRAGMA, ATTACH, "
                                "writes or schema changes); the tables are:\n"
                                f"{schema(conn)}") from None
            cap = (f" (a value may be at most {MAX_VALUE // 1_000_000} MB)"
                   if "too big" in str(exc) else "")
            raise ToolError(f"SQL error: {exc}{cap}. The tables are:\n{schema(conn)}") from None
        names = [d[0] for d in cursor.description or ()]
        return _table(names, rows, max_rows, conn, max_chars)
    finally:
        conn.close()


def _clip(value: object, limit: int = MAX_CELL) -> object:
    """`value`, or its first `limit` characters (bytes) and how long it was: fifty 15 MB
    values took 14 s and 2.3 GB to lay out as a table. A value cut before keeps its length."""
    if not isinstance(value, (str, bytes)) or len(value) <= limit:
        return value
    if isinstance(value, str) and (was := _CUT.search(value)):
        return f"{value[:limit]}{was.group(0)}"
    unit = "characters" if isinstance(value, str) else "bytes"
    return f"{value[:limit]!s} … [{len(value):,} {unit}]"


def _table(names: list[str], rows: list[tuple], max_rows: int, conn: sqlite3.Connection,
           max_chars: int | None = None) -> str:
    if not rows:
        companies = ", ".join(r[0] for r in _safe(conn, "SELECT DISTINCT company FROM reports"))
        hint = f" Company names are spelled: {companies}." if companies else ""
        return (f"no rows: the query matched nothing.{hint} Check the WHERE conditions "
                f"(quarter is 1-4, year is 2024 or 2025).")
    shown = min(len(rows), max_rows)
    text = tabulate(rows[:shown], headers=names, tablefmt="simple", missingval="NULL")
    while max_chars and len(text) > max_chars and shown > 1:
        shown = max(1, shown * max_chars // len(text) - 1)
        text = tabulate(rows[:shown], headers=names, tablefmt="simple", missingval="NULL")
    if max_chars and len(text) > max_chars:  # one row too wide: its long values cut shorter
        row = tuple(_clip(value, SHORT_CELL) for value in rows[0])
        text = tabulate([row], headers=names, tablefmt="simple", missingval="NULL")
    if shown < len(rows):
        return (f"{text}\n[truncated: only the first {shown} rows are shown; select fewer "
                f"columns, aggregate with GROUP BY, filter with WHERE or add LIMIT]")
    return f"{shown} row{'s' if shown != 1 else ''}\n{text}"


def _safe(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.DatabaseError:
        return []
