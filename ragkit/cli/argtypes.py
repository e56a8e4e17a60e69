"""argparse types of the command line: each refuses a bad value with one line naming it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragkit.errors import RagkitError

# the mark `ragkit.cli.main` puts on the /dev/null it gives a command started with stdout closed
CLOSED = "ragkit_closed"


def nonempty_path(text: str) -> Path:
    """argparse type for every file or folder argument: a path that is not empty.

    `Path("")` is `.`, so an empty argument (most often an unset shell variable) silently
    meant the current folder: `ragkit index ""` indexed the folder it ran in, exit 0, and
    `--out ""` was refused naming ".". It is refused here, one line naming the argument;
    nothing else about the path is checked (whether it must exist is each command's)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def written_path(text: str) -> Path:
    """argparse type for an output that must be a file or folder: `nonempty_path`, and not
    '-', which a user means as standard output but which was written as a file named "-".
    (`search --out` and `eval --per-query` take '-' and write to standard output:
    `check_stdout`.)"""
    if text == "-":
        raise argparse.ArgumentTypeError("'-' (standard output) is not supported here; "
                                         "name a file or folder")
    return nonempty_path(text)


def positive_int(text: str) -> int:
    """argparse type for counts and cutoffs: a whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def share(text: str) -> float:
    """argparse type for a weight or share: a number from 0 to 1 (not NaN, not inf)."""
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expects a number from 0 to 1, got {text!r}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def check_stdout(option: str) -> None:
    """Refuse `option` '-' when the command started with stdout closed (`>&-`): its output
    went to /dev/null while the command said it "wrote … to standard output", exit 0."""
    if getattr(sys.stdout, CLOSED, False):
        raise RagkitError(f"{option} -: standard output is closed, so the output would be "
                          f"lost; name a file")
