"""Shipping fees charged at checkout.

Standard delivery costs 3,000 won and is free from a 50,000 won subtotal
(after coupon). Jeju and other remote islands pay a surcharge even when the
base fee is waived. Return shipping for a change of mind is charged both ways.
"""
from __future__ import annotations

from decimal import Decimal

BASE_FEE = Decimal("3000")
FREE_SHIPPING_THRESHOLD = Decimal("50000")
REMOTE_SURCHARGE = {"jeju": Decimal("3000"), "island": Decimal("5000")}
RETURN_FEE_CHANGE_OF_MIND = Decimal("6000")     # pickup + original delivery


def shipping_fee(subtotal_after_discount: Decimal, region: str = "mainland") -> Decimal:
    """Fee for delivering an order worth ``subtotal_after_discount`` to ``region``."""
    base = Decimal(0) if subtotal_after_discount >= FREE_SHIPPING_THRESHOLD else BASE_FEE
    return base + REMOTE_SURCHARGE.get(region, Decimal(0))


def return_shipping_fee(reason: str, region: str = "mainland") -> Decimal:
    """Fee deducted from a return refund; defects and wrong items ship back free."""
    if reason in {"defective", "wrong_item", "damaged_in_transit"}:
        return Decimal(0)
    return RETURN_FEE_CHANGE_OF_MIND + REMOTE_SURCHARGE.get(region, Decimal(0))
