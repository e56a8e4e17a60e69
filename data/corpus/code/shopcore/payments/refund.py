"""Refund amounts and refund records.

:func:`calculate_refund` answers "how much money goes back to the customer for
these lines"; :func:`store_refund` writes the :class:`~shopcore.models.Refund`
row that the gateway call, the ledger export and the reconciliation job read.
Callers: order cancellation (:mod:`shopcore.orders.cancel`) and returns
(:mod:`shopcore.orders.returns`).
"""
from __future__ import annotations

import logging
import uuid
from decimal import Decimal
from typing import Iterable

from shopcore.clock import now
from shopcore.models import Order, OrderLine, OrderStatus, Refund
from shopcore.money import round_won, sum_amounts, to_won
from shopcore.payments.discounts import allocate_discount
from shopcore.repositories import RefundRepository, get_refund_repository

log = logging.getLogger(__name__)

# Shipping is paid back only if the parcel never left the warehouse.
REFUND_SHIPPING_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.PREPARING})


def calculate_refund(order: Order, lines: Iterable[OrderLine] | None = None) -> Decimal:
    """Amount to pay back for ``lines`` of ``order`` (all lines when ``None``).

    The result is what the customer actually paid for those lines: their
    totals minus their share of the coupon discount, plus the shipping fee
    when the whole order is refunded before dispatch.
    """
    whole_order = lines is None
    selected = list(order.lines) if whole_order else list(lines)
    gross = sum_amounts(line.total for line in selected)
    discount = allocate_discount(order, selected)
    amount = gross - discount
    if whole_order and order.status in REFUND_SHIPPING_STATUSES:
        amount += order.shipping_fee
    return round_won(amount)


def new_refund_id() -> str:
    return "rf_" + uuid.uuid4().hex[:16]


def store_refund(
    order_id: str,
    amount: Decimal,
    reason: str,
    *,
    skus: Iterable[str] = (),
    repo: RefundRepository | None = None,
) -> Refund:
    """Persist a refund of ``amount`` won for ``order_id`` and return it.

    The row is written before the gateway is called, so a crash between the
    two leaves a ``requested`` refund that the reconciliation job retries.
    """
    repo = repo or get_refund_repository()
    refund = Refund(
        id=new_refund_id(),
        order_id=order_id,
        amount=to_won(amount),
        reason=reason,
        created_at=now(),
        skus=tuple(skus),
    )
    repo.add(refund)
    log.info("refund %s stored for order %s: %s won", refund.id, order_id, refund.amount)
    return refund


def mark_refund_sent(refund: Refund, gateway_refund_id: str | None) -> Refund:
    """Record the gateway's answer on ``refund`` (``None`` means nothing was sent)."""
    if gateway_refund_id is None:
        refund.status = "failed"
    else:
        refund.status = "sent"
        refund.gateway_refund_id = gateway_refund_id
    return refund
