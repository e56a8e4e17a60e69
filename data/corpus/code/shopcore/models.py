"""Domain records: orders, order lines, refunds and customers.

Plain dataclasses with no storage logic; :mod:`shopcore.repositories` keeps
them. Money fields are whole-won ``Decimal`` values (see :mod:`shopcore.money`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import Enum

from shopcore.money import ZERO, sum_amounts


class OrderStatus(str, Enum):
    PENDING = "pending"        # created, waiting for payment
    PAID = "paid"              # payment captured
    PREPARING = "preparing"    # picking and packing in the warehouse
    SHIPPED = "shipped"        # handed to the carrier
    DELIVERED = "delivered"
    CANCELLED = "cancelled"
    RETURNED = "returned"


@dataclass
class OrderLine:
    sku: str
    name: str
    unit_price: Decimal
    quantity: int
    returned: bool = False

    @property
    def total(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Order:
    id: str
    customer_id: str
    lines: list[OrderLine]
    status: OrderStatus = OrderStatus.PENDING
    shipping_fee: Decimal = ZERO
    coupon_code: str | None = None
    discount_total: Decimal = ZERO
    payment_id: str | None = None
    region: str = "mainland"
    created_at: datetime | None = None
    paid_at: datetime | None = None
    delivered_at: datetime | None = None
    cancelled_at: datetime | None = None
    points_earned: int = 0

    @property
    def subtotal(self) -> Decimal:
        """Sum of line totals before discount and shipping."""
        return sum_amounts(line.total for line in self.lines)

    @property
    def amount_paid(self) -> Decimal:
        """What the customer was charged: subtotal − discount + shipping."""
        return self.subtotal - self.discount_total + self.shipping_fee

    def line(self, sku: str) -> OrderLine:
        for line in self.lines:
            if line.sku == sku:
                return line
        raise KeyError(f"order {self.id} has no line with SKU {sku}")


@dataclass
class Refund:
    id: str
    order_id: str
    amount: Decimal
    reason: str
    created_at: datetime
    skus: tuple[str, ...] = ()
    status: str = "requested"      # requested → sent → completed | failed
    gateway_refund_id: str | None = None


@dataclass
class Customer:
    id: str
    name: str
    email: str
    phone: str
    tier: str = "basic"
    points_balance: int = 0
    marketing_opt_in: bool = False
    tags: set[str] = field(default_factory=set)
