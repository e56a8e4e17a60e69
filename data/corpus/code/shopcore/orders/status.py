"""The order state machine.

An order may be cancelled only while it is still in our hands (pending, paid
or being prepared). Once shipped, the customer must use a return instead
(:mod:`shopcore.orders.returns`).
"""
from __future__ import annotations

from shopcore.errors import InvalidTransition, OrderNotCancellable
from shopcore.models import OrderStatus

TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.PENDING: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED}),
    OrderStatus.PAID: frozenset({OrderStatus.PREPARING, OrderStatus.CANCELLED}),
    OrderStatus.PREPARING: frozenset({OrderStatus.SHIPPED, OrderStatus.CANCELLED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.DELIVERED}),
    OrderStatus.DELIVERED: frozenset({OrderStatus.RETURNED}),
    OrderStatus.CANCELLED: frozenset(),
    OrderStatus.RETURNED: frozenset(),
}

CANCELLABLE_STATUSES = frozenset(
    status for status, targets in TRANSITIONS.items() if OrderStatus.CANCELLED in targets
)


def can_transition(current: OrderStatus, target: OrderStatus) -> bool:
    return target in TRANSITIONS[current]


def ensure_transition(current: OrderStatus, target: OrderStatus) -> None:
    """Raise unless an order in ``current`` may move to ``target``."""
    if can_transition(current, target):
        return
    if target == OrderStatus.CANCELLED:
        raise OrderNotCancellable(
            f"an order that is {current.value} can no longer be cancelled; request a return"
        )
    raise InvalidTransition(f"cannot move an order from {current.value} to {target.value}")
