"""Order cancellation before shipment.

``cancel_order`` is used by the customer "cancel" button, by customer service
and by the unpaid-order sweeper. It refunds what was captured, gives the stock
back, takes back loyalty points earned on the order and tells the customer.
After shipment the order cannot be cancelled; see :mod:`shopcore.orders.returns`.
"""
from __future__ import annotations

import logging

from shopcore.clock import now
from shopcore.inventory.stock import release_stock
from shopcore.loyalty.points import revoke_points
from shopcore.models import Order, OrderStatus, Refund
from shopcore.notifications.email import send_order_cancelled_email
from shopcore.orders.status import ensure_transition
from shopcore.payments.gateway import PaymentGateway, get_gateway
from shopcore.payments.refund import calculate_refund, mark_refund_sent, store_refund
from shopcore.repositories import (
    OrderRepository,
    RefundRepository,
    get_order_repository,
    get_refund_repository,
)

log = logging.getLogger(__name__)

CANCEL_REASONS = {"changed_mind", "ordered_by_mistake", "delivery_too_slow", "unpaid", "other"}


def cancel_order(
    order_id: str,
    reason: str,
    *,
    actor: str = "customer",
    orders: OrderRepository | None = None,
    refunds: RefundRepository | None = None,
    gateway: PaymentGateway | None = None,
) -> Refund | None:
    """Cancel ``order_id`` and refund it; returns the refund, or ``None`` if unpaid."""
    if reason not in CANCEL_REASONS:
        reason = "other"
    orders = orders or get_order_repository()
    order = orders.get(order_id)
    ensure_transition(order.status, OrderStatus.CANCELLED)

    refund = None
    if order.payment_id and order.status != OrderStatus.PENDING:
        refund = _refund_payment(order, reason, refunds or get_refund_repository(),
                                 gateway or get_gateway())

    release_stock(order)
    revoke_points(order)
    order.status = OrderStatus.CANCELLED
    order.cancelled_at = now()
    orders.save(order)
    log.info("order %s cancelled by %s (%s)", order.id, actor, reason)
    send_order_cancelled_email(order, refund)
    return refund


def _refund_payment(order: Order, reason: str, refunds: RefundRepository,
                    gateway: PaymentGateway) -> Refund:
    refund_amount = calculate_refund(order)
    if order.coupon_code:
        # Coupon value is not paid out in cash; only the charged amount goes back.
        refund_amount = refund_amount - order.discount_total
    refund = store_refund(order.id, refund_amount, reason=f"cancel:{reason}", repo=refunds)
    gateway_refund_id = gateway.refund(order.payment_id, refund.amount, idempotency_key=refund.id)
    return mark_refund_sent(refund, gateway_refund_id)
