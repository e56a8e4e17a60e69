from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from shopcore.clock import KST
from shopcore.errors import CouponError
from shopcore.payments.discounts import Coupon, allocate_discount, discount_for, validate_coupon


def test_percent_coupon_is_capped():
    coupon = Coupon("SPRING20", "percent", Decimal("20"), max_discount=Decimal("5000"))
    assert discount_for(coupon, Decimal("40000")) == Decimal("5000")


def test_fixed_coupon_never_exceeds_subtotal():
    coupon = Coupon("FLAT10K", "fixed", Decimal("10000"))
    assert discount_for(coupon, Decimal("8000")) == Decimal("8000")


def test_expired_coupon_is_refused():
    coupon = Coupon("OLD", "fixed", Decimal("1000"), expires_at=datetime(2025, 1, 1, tzinfo=KST))
    with pytest.raises(CouponError):
        validate_coupon(coupon, Decimal("30000"))


def test_minimum_order_is_enforced():
    coupon = Coupon("MIN30", "fixed", Decimal("3000"), min_order=Decimal("30000"))
    with pytest.raises(CouponError):
        validate_coupon(coupon, Decimal("29990"))


def test_shares_add_up_to_the_order_discount(paid_order):
    paid_order.discount_total = Decimal("1001")
    shares = [allocate_discount(paid_order, [line]) for line in paid_order.lines]
    assert sum(shares) == Decimal("1001")
