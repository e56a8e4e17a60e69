from __future__ import annotations

from decimal import Decimal

from shopcore.models import OrderStatus
from shopcore.payments.refund import calculate_refund, store_refund
from shopcore.repositories import get_refund_repository


def test_whole_order_before_shipping_includes_shipping(paid_order):
    assert calculate_refund(paid_order) == Decimal("33000")


def test_whole_order_after_shipping_excludes_shipping(paid_order):
    paid_order.status = OrderStatus.SHIPPED
    assert calculate_refund(paid_order) == Decimal("30000")


def test_coupon_share_is_taken_off(paid_order):
    paid_order.coupon_code = "WELCOME10"
    paid_order.discount_total = Decimal("3000")
    assert calculate_refund(paid_order) == Decimal("30000")     # 30,000 − 3,000 + 3,000 shipping


def test_partial_refund_gets_its_share_of_the_discount(paid_order):
    paid_order.discount_total = Decimal("3000")
    mugs = [paid_order.line("SKU-MUG-07")]
    assert calculate_refund(paid_order, mugs) == Decimal("16200")  # 18,000 − 1,800


def test_store_refund_writes_a_row(paid_order):
    refund = store_refund(paid_order.id, Decimal("33000"), reason="cancel:other")
    assert get_refund_repository().for_order(paid_order.id) == [refund]
    assert refund.status == "requested"
