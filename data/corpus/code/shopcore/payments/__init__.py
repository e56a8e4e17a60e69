"""Payments: the PG client, coupons and discounts, refunds, tax and webhooks."""
from __future__ import annotations

from shopcore.payments.discounts import allocate_discount, apply_coupon
from shopcore.payments.refund import calculate_refund, store_refund

__all__ = ["allocate_discount", "apply_coupon", "calculate_refund", "store_refund"]
