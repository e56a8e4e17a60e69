"""Checkout: turn a cart into a pending order.

Steps: price the lines from the catalogue, apply an optional coupon, add the
shipping fee, reserve stock and save. Payment happens afterwards at the PG;
its ``payment.captured`` webhook moves the order to ``paid``.
"""
from __future__ import annotations

import uuid
from decimal import Decimal

from shopcore.clock import now
from shopcore.inventory.stock import reserve_stock
from shopcore.models import Order, OrderLine
from shopcore.orders.shipping import shipping_fee
from shopcore.payments.discounts import apply_coupon
from shopcore.repositories import OrderRepository, get_order_repository

CartItem = tuple[str, str, Decimal, int]       # sku, name, unit price, quantity


def new_order_id() -> str:
    return "od_" + uuid.uuid4().hex[:12]


def create_order(
    customer_id: str,
    items: list[CartItem],
    *,
    coupon_code: str | None = None,
    region: str = "mainland",
    orders: OrderRepository | None = None,
) -> Order:
    """Create, price and save a pending order for ``items``."""
    if not items:
        raise ValueError("an order needs at least one item")
    orders = orders or get_order_repository()
    lines = [OrderLine(sku, name, price, qty) for sku, name, price, qty in items]
    order = Order(id=new_order_id(), customer_id=customer_id, lines=lines,
                  region=region, created_at=now())
    if coupon_code:
        apply_coupon(order, coupon_code)
    order.shipping_fee = shipping_fee(order.subtotal - order.discount_total, region)
    reserve_stock(order)
    orders.save(order)
    return order
