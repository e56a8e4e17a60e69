"""Returns after delivery (반품).

A delivered order may be returned, in whole or in part, within
``RETURN_WINDOW_DAYS`` of delivery. The refund is the paid price of the
returned lines less return shipping when the reason is a change of mind.
"""
from __future__ import annotations

from shopcore.clock import days_between, now
from shopcore.errors import InvalidTransition, ReturnWindowClosed
from shopcore.inventory.stock import restock
from shopcore.models import OrderStatus, Refund
from shopcore.money import ZERO
from shopcore.notifications.email import send_refund_completed_email
from shopcore.orders.shipping import return_shipping_fee
from shopcore.payments.gateway import PaymentGateway, get_gateway
from shopcore.payments.refund import calculate_refund, mark_refund_sent, store_refund
from shopcore.repositories import (
    OrderRepository,
    RefundRepository,
    get_order_repository,
    get_refund_repository,
)

RETURN_WINDOW_DAYS = 7


def request_return(
    order_id: str,
    skus: list[str],
    reason: str,
    *,
    orders: OrderRepository | None = None,
    refunds: RefundRepository | None = None,
    gateway: PaymentGateway | None = None,
) -> Refund:
    """Return the lines ``skus`` of a delivered order and refund them."""
    orders = orders or get_order_repository()
    order = orders.get(order_id)
    if order.status != OrderStatus.DELIVERED or order.delivered_at is None:
        raise InvalidTransition(f"order {order.id} is {order.status.value}, not delivered")
    if days_between(order.delivered_at, now()) > RETURN_WINDOW_DAYS:
        raise ReturnWindowClosed(f"returns close {RETURN_WINDOW_DAYS} days after delivery")

    lines = [order.line(sku) for sku in skus if not order.line(sku).returned]
    amount = calculate_refund(order, lines)
    amount = max(amount - return_shipping_fee(reason, order.region), ZERO)
    refund = store_refund(order.id, amount, reason=f"return:{reason}",
                          skus=[line.sku for line in lines], repo=refunds or get_refund_repository())
    gateway_refund_id = (gateway or get_gateway()).refund(
        order.payment_id, refund.amount, idempotency_key=refund.id)
    mark_refund_sent(refund, gateway_refund_id)

    for line in lines:
        line.returned = True
        restock(line.sku, line.quantity)
    if all(line.returned for line in order.lines):
        order.status = OrderStatus.RETURNED
    orders.save(order)
    send_refund_completed_email(order, refund)
    return refund
