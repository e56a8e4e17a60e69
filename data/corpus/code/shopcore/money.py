"""Money helpers: Korean won as ``Decimal`` with no fractional part.

Never use ``float`` for money in shopcore. Amounts enter through :func:`to_won`
and leave through :func:`format_won`; arithmetic in between stays in Decimal.
"""
from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Iterable

WON = Decimal("1")
ZERO = Decimal("0")


def to_won(value: int | str | Decimal) -> Decimal:
    """Convert ``value`` to a whole-won Decimal; floats are rejected."""
    if isinstance(value, float):
        raise TypeError("money must not be a float; pass int, str or Decimal")
    return Decimal(value).quantize(WON, rounding=ROUND_HALF_UP)


def round_won(amount: Decimal) -> Decimal:
    """Round half up to a whole won (the rule the payment gateway uses)."""
    return amount.quantize(WON, rounding=ROUND_HALF_UP)


def floor_won(amount: Decimal) -> Decimal:
    """Round toward zero to a whole won, e.g. for points and tax shares."""
    return amount.quantize(WON, rounding=ROUND_DOWN)


def sum_amounts(values: Iterable[Decimal]) -> Decimal:
    total = ZERO
    for value in values:
        total += value
    return total


def split_proportionally(total: Decimal, weights: list[Decimal]) -> list[Decimal]:
    """Split ``total`` won over ``weights`` so the parts add up to ``total`` exactly.

    Largest-remainder method: every part is floored first, then the leftover
    won go one by one to the parts with the largest fractional remainders.
    """
    weight_sum = sum_amounts(weights)
    if weight_sum == ZERO:
        return [ZERO for _ in weights]
    exact = [total * w / weight_sum for w in weights]
    parts = [floor_won(x) for x in exact]
    leftover = int(total - sum_amounts(parts))
    order = sorted(range(len(exact)), key=lambda i: exact[i] - parts[i], reverse=True)
    for i in order[:leftover]:
        parts[i] += WON
    return parts


def format_won(amount: Decimal) -> str:
    """``Decimal("12500")`` → ``"12,500원"``."""
    return f"{int(amount):,}원"
