"""The error and warning every ragkit module raises for bad input, and where it names.

What it is: `RagkitError` (a user-facing error: the command line prints its one line and
exits 2) and two kinds of it, `MissingKey` (a key to set, passed on unwrapped) and
`KeyRejected` (a key the API refused),
`RagkitWarning`, `where(path, line, field)` — the `file:line: field 'x'` every message starts
with — and `not_a_file(path)`, the error for an input that is not a regular file. What it is
not: a hierarchy of inputs; one class says "your input", the message says what and where.
`ragkit.documents` re-exports all three, as before.
"""
from __future__ import annotations

from pathlib import Path


class RagkitError(ValueError):
    """A user-facing error: bad input, missing model, unknown name. The message says where."""


class MissingKey(RagkitError):
    """An API key is not set (or its file cannot be read): the line names what to set. Shown
    as it is, not inside the message of the step it stopped (which document, which chunk):
    the fix is the same wherever it struck, and before a paid request it strikes first."""


class KeyRejected(RagkitError):
    """The API refused the key (HTTP 401): every later call would be refused alike, so a step
    that tolerates a failed call per input (a reranker, query by query) stops on it."""


class _Kept:
    """What part of the work succeeded: `kept` maps each input that did get its result (by
    position, or by request id inside a batch runner) to that result, so a caller that caches
    keeps what was paid for before the error or Ctrl-C reaches the user."""

    def __init__(self, message: str, kept: dict) -> None:
        super().__init__(message)
        self.kept = kept


class PartialResults(_Kept, RagkitError):
    """A failure after part of the work succeeded (`_Kept`)."""


class Interrupted(_Kept, KeyboardInterrupt):
    """Ctrl-C after part of the work succeeded (`_Kept`)."""


class RagkitWarning(UserWarning):
    """Input that can be used but deserves a look (e.g. judged queries with no text)."""


def not_a_file(path: Path | str) -> RagkitError:
    """The error for an input file that is not one: a folder, a pipe or device (`<(cat q)`,
    /dev/stdin: read as a file it could block, or be read once where ragkit reads twice), or
    nothing — each said as it is, not all as "no such file"."""
    path = Path(path)
    if path.is_dir():
        return RagkitError(f"{path}: a folder, not a file")
    if path.exists():
        return RagkitError(f"{path}: not a regular file (a pipe, a device or a socket); save "
                           f"it to a file and give that")
    return RagkitError(f"{path}: no such file")


def where(path: Path | str, line: int | None = None, field_name: str | None = None) -> str:
    """Format a location as `file:line: field 'x'` for error messages."""
    loc = str(path)
    if line is not None:
        loc += f":{line}"
    if field_name:
        loc += f": field '{field_name}'"
    return loc
