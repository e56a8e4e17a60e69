"""Time source for shopcore, replaceable in tests.

All timestamps are timezone-aware and in Korea Standard Time, because return
windows and the cancellation cut-off are defined on the customer's calendar.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

KST = timezone(timedelta(hours=9), name="KST")

_frozen: datetime | None = None


def now() -> datetime:
    """Current time in KST, or the frozen time set by :func:`freeze`."""
    return _frozen if _frozen is not None else datetime.now(KST)


def freeze(at: datetime | None) -> None:
    """Pin :func:`now` to ``at`` (tests only); ``None`` unfreezes."""
    global _frozen
    if at is not None and at.tzinfo is None:
        raise ValueError("freeze() needs a timezone-aware datetime")
    _frozen = at


def days_between(start: datetime, end: datetime) -> int:
    """Whole calendar days from ``start`` to ``end`` in KST (same day = 0)."""
    return (end.astimezone(KST).date() - start.astimezone(KST).date()).days
