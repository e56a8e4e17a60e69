"""Shared fixtures: fresh repositories, a frozen clock and a fake gateway."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from shopcore import clock, repositories
from shopcore.models import Customer, Order, OrderLine, OrderStatus
from shopcore.notifications import email


class FakeGateway:
    """Records refund calls instead of talking to the PG."""

    def __init__(self) -> None:
        self.refunds: list[tuple[str, Decimal]] = []

    def refund(self, payment_id, amount, *, idempotency_key):
        if amount <= 0:
            return None
        self.refunds.append((payment_id, amount))
        return f"pgr_{len(self.refunds)}"


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    monkeypatch.setattr(repositories, "_orders", repositories.OrderRepository())
    monkeypatch.setattr(repositories, "_refunds", repositories.RefundRepository())
    monkeypatch.setattr(repositories, "_coupons", repositories.CouponRepository())
    monkeypatch.setattr(repositories, "_stock", repositories.StockRepository())
    monkeypatch.setattr(repositories, "_customers", repositories.CustomerRepository())
    clock.freeze(datetime(2025, 3, 14, 10, 0, tzinfo=clock.KST))
    email.OUTBOX.clear()
    repositories.get_customer_repository().save(
        Customer(id="c1", name="김하늘", email="sky@example.invalid", phone="010-1234-5678"))
    yield
    clock.freeze(None)


@pytest.fixture
def gateway():
    return FakeGateway()


@pytest.fixture
def paid_order():
    """Two lines, 30,000 won subtotal, 3,000 won shipping, no coupon, paid."""
    order = Order(
        id="od_test1",
        customer_id="c1",
        lines=[
            OrderLine("SKU-TEA-01", "녹차 티백 50입", Decimal("12000"), 1),
            OrderLine("SKU-MUG-07", "머그컵 세트", Decimal("9000"), 2),
        ],
        status=OrderStatus.PAID,
        shipping_fee=Decimal("3000"),
        payment_id="pay_1",
    )
    repositories.get_order_repository().save(order)
    stock = repositories.get_stock_repository()
    stock.on_hand.update({"SKU-TEA-01": 10, "SKU-MUG-07": 10})
    stock.reserved.update({"SKU-TEA-01": 1, "SKU-MUG-07": 2})
    return order
