"""Coupons: validation, the discount they give, and how it is spread over lines.

A coupon discounts the order subtotal (never shipping). The discount is stored
once on the order as ``Order.discount_total``; when only some lines are
refunded, :func:`allocate_discount` gives those lines their share of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Iterable

from shopcore.clock import now
from shopcore.errors import CouponError
from shopcore.models import Order, OrderLine
from shopcore.money import ZERO, round_won, split_proportionally, to_won
from shopcore.repositories import CouponRepository, get_coupon_repository


@dataclass(frozen=True)
class Coupon:
    code: str
    kind: str                      # "percent" or "fixed"
    value: Decimal                 # percent (e.g. 10) or won (e.g. 5000)
    min_order: Decimal = ZERO
    max_discount: Decimal | None = None
    expires_at: datetime | None = None
    single_use: bool = True


def validate_coupon(coupon: Coupon | None, subtotal: Decimal, at: datetime | None = None) -> Coupon:
    """Raise :class:`CouponError` unless ``coupon`` can be used on ``subtotal``."""
    if coupon is None:
        raise CouponError("unknown coupon code")
    at = at or now()
    if coupon.expires_at is not None and at > coupon.expires_at:
        raise CouponError(f"coupon {coupon.code} expired on {coupon.expires_at:%Y-%m-%d}")
    if subtotal < coupon.min_order:
        raise CouponError(f"coupon {coupon.code} needs an order of at least {coupon.min_order} won")
    if coupon.kind not in {"percent", "fixed"}:
        raise CouponError(f"coupon {coupon.code} has unknown kind {coupon.kind!r}")
    return coupon


def discount_for(coupon: Coupon, subtotal: Decimal) -> Decimal:
    """Won taken off ``subtotal`` by ``coupon`` (capped, never more than the subtotal)."""
    if coupon.kind == "percent":
        amount = round_won(subtotal * coupon.value / Decimal(100))
    else:
        amount = to_won(coupon.value)
    if coupon.max_discount is not None:
        amount = min(amount, coupon.max_discount)
    return min(amount, subtotal)


def apply_coupon(order: Order, code: str, coupons: CouponRepository | None = None) -> Decimal:
    """Validate ``code`` for ``order`` and record the discount on the order."""
    coupons = coupons or get_coupon_repository()
    coupon = validate_coupon(coupons.get(code), order.subtotal)
    order.coupon_code = coupon.code
    order.discount_total = discount_for(coupon, order.subtotal)
    return order.discount_total


def allocate_discount(order: Order, lines: Iterable[OrderLine]) -> Decimal:
    """Share of ``order.discount_total`` that belongs to ``lines``.

    The discount is split over *all* lines of the order in proportion to their
    totals, so the shares of every line add up to the order discount exactly.
    """
    if order.discount_total == ZERO:
        return ZERO
    wanted = {id(line) for line in lines}
    shares = split_proportionally(order.discount_total, [line.total for line in order.lines])
    return sum((share for line, share in zip(order.lines, shares) if id(line) in wanted), ZERO)
