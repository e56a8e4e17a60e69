"""argparse types of the command line: each refuses a bad value with one line naming it."""
from __future__ import annotations

import argparse


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
