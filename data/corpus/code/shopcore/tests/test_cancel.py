from __future__ import annotations

from decimal import Decimal

import pytest

from shopcore.errors import OrderNotCancellable
from shopcore.models import OrderStatus
from shopcore.notifications.email import OUTBOX
from shopcore.orders.cancel import cancel_order
from shopcore.repositories import get_stock_repository


def test_cancel_paid_order_refunds_everything(paid_order, gateway):
    refund = cancel_order(paid_order.id, "changed_mind", gateway=gateway)
    assert refund.amount == Decimal("33000")
    assert gateway.refunds == [("pay_1", Decimal("33000"))]
    assert paid_order.status == OrderStatus.CANCELLED


def test_cancel_releases_stock(paid_order, gateway):
    cancel_order(paid_order.id, "changed_mind", gateway=gateway)
    assert get_stock_repository().reserved == {"SKU-TEA-01": 0, "SKU-MUG-07": 0}


def test_cancel_sends_mail(paid_order, gateway):
    cancel_order(paid_order.id, "ordered_by_mistake", gateway=gateway)
    assert "주문이 취소되었습니다" in OUTBOX[-1]["Subject"]


def test_cancel_with_coupon_never_refunds_more_than_paid(paid_order, gateway):
    paid_order.coupon_code = "WELCOME10"
    paid_order.discount_total = Decimal("3000")
    refund = cancel_order(paid_order.id, "changed_mind", gateway=gateway)
    assert refund.amount <= paid_order.amount_paid


def test_shipped_order_cannot_be_cancelled(paid_order, gateway):
    paid_order.status = OrderStatus.SHIPPED
    with pytest.raises(OrderNotCancellable):
        cancel_order(paid_order.id, "changed_mind", gateway=gateway)
