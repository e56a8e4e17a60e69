"""In-memory repositories for orders, refunds, coupons, stock and customers.

Good enough for tests and local runs. Each ``get_*_repository()`` returns a
process-wide default instance; functions accept an explicit repository so
tests can pass a fresh one.
"""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from shopcore.errors import OrderNotFound
from shopcore.models import Customer, Order, Refund
from shopcore.money import ZERO, sum_amounts

if TYPE_CHECKING:
    from shopcore.payments.discounts import Coupon


class OrderRepository:
    def __init__(self) -> None:
        self._orders: dict[str, Order] = {}

    def get(self, order_id: str) -> Order:
        try:
            return self._orders[order_id]
        except KeyError:
            raise OrderNotFound(f"order {order_id} does not exist") from None

    def save(self, order: Order) -> None:
        self._orders[order.id] = order

    def for_customer(self, customer_id: str) -> list[Order]:
        return [o for o in self._orders.values() if o.customer_id == customer_id]


class RefundRepository:
    """Refund rows, append-only; the ledger export reads :meth:`all`."""

    def __init__(self) -> None:
        self._refunds: list[Refund] = []

    def add(self, refund: Refund) -> None:
        self._refunds.append(refund)

    def for_order(self, order_id: str) -> list[Refund]:
        return [r for r in self._refunds if r.order_id == order_id]

    def total_refunded(self, order_id: str) -> Decimal:
        return sum_amounts(r.amount for r in self.for_order(order_id) if r.status != "failed")

    def all(self) -> list[Refund]:
        return list(self._refunds)


class CouponRepository:
    def __init__(self) -> None:
        self._coupons: dict[str, Coupon] = {}

    def get(self, code: str) -> Coupon | None:
        return self._coupons.get(code.upper())

    def save(self, coupon: Coupon) -> None:
        self._coupons[coupon.code.upper()] = coupon


class StockRepository:
    """Units on hand and units reserved, per SKU."""

    def __init__(self) -> None:
        self.on_hand: dict[str, int] = {}
        self.reserved: dict[str, int] = {}

    def available(self, sku: str) -> int:
        return self.on_hand.get(sku, 0) - self.reserved.get(sku, 0)


class CustomerRepository:
    def __init__(self) -> None:
        self._customers: dict[str, Customer] = {}

    def get(self, customer_id: str) -> Customer:
        return self._customers[customer_id]

    def save(self, customer: Customer) -> None:
        self._customers[customer.id] = customer


_orders = OrderRepository()
_refunds = RefundRepository()
_coupons = CouponRepository()
_stock = StockRepository()
_customers = CustomerRepository()


def get_order_repository() -> OrderRepository:
    return _orders


def get_refund_repository() -> RefundRepository:
    return _refunds


def get_coupon_repository() -> CouponRepository:
    return _coupons


def get_stock_repository() -> StockRepository:
    return _stock


def get_customer_repository() -> CustomerRepository:
    return _customers


def outstanding_balance(order: Order, refunds: RefundRepository | None = None) -> Decimal:
    """Amount paid on ``order`` that has not been refunded yet (never below zero)."""
    refunds = refunds or _refunds
    balance = order.amount_paid - refunds.total_refunded(order.id)
    return balance if balance > ZERO else ZERO
