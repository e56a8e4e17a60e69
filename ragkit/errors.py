"""The error and warning every ragkit module raises for bad input, and where it names.

What it is: `RagkitError` (a user-facing error: the command line prints its one line and
exits 2), `RagkitWarning`, and `where(path, line, field)` — the `file:line: field 'x'`
every message starts with. What it is not: a hierarchy; one class says "your input", the
message says what and where. `ragkit.documents` re-exports all three, as before.
"""
from __future__ import annotations

from pathlib import Path


class RagkitError(ValueError):
    """A user-facing error: bad input, missing model, unknown name. The message says where."""


class RagkitWarning(UserWarning):
    """Input that can be used but deserves a look (e.g. judged queries with no text)."""


def where(path: Path | str, line: int | None = None, field_name: str | None = None) -> str:
    """Format a location as `file:line: field 'x'` for error messages."""
    loc = str(path)
    if line is not None:
        loc += f":{line}"
    if field_name:
        loc += f": field '{field_name}'"
    return loc
