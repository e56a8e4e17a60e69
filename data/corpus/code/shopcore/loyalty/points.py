"""Loyalty points: earned on delivery, revoked on cancellation or return.

Customers earn a tier-dependent percentage of the amount paid (shipping
excluded), rounded down to whole points; one point is worth one won at
checkout. Points are credited only when the order is delivered, so a cancelled
order normally has nothing to revoke.
"""
from __future__ import annotations

from decimal import Decimal

from shopcore.models import Order
from shopcore.money import floor_won
from shopcore.repositories import CustomerRepository, get_customer_repository

EARN_RATES = {
    "basic": Decimal("0.01"),
    "silver": Decimal("0.02"),
    "gold": Decimal("0.03"),
    "vip": Decimal("0.05"),
}


def points_for(order: Order, tier: str) -> int:
    """Points a customer of ``tier`` earns on ``order``."""
    base = order.subtotal - order.discount_total
    return int(floor_won(base * EARN_RATES.get(tier, EARN_RATES["basic"])))


def earn_points(order: Order, customers: CustomerRepository | None = None) -> int:
    """Credit points for a delivered order and remember them on the order."""
    customers = customers or get_customer_repository()
    customer = customers.get(order.customer_id)
    earned = points_for(order, customer.tier)
    customer.points_balance += earned
    order.points_earned = earned
    customers.save(customer)
    return earned


def revoke_points(order: Order, customers: CustomerRepository | None = None) -> int:
    """Take back the points earned on ``order``; the balance may not go below zero."""
    if order.points_earned == 0:
        return 0
    customers = customers or get_customer_repository()
    customer = customers.get(order.customer_id)
    taken = min(order.points_earned, customer.points_balance)
    customer.points_balance -= taken
    order.points_earned = 0
    customers.save(customer)
    return taken
