"""Stock reservation: hold units at checkout, release them on cancellation.

Units are *reserved* when an order is created, *consumed* when it ships and
*released* when it is cancelled. Returned units are put back on hand with
:func:`restock` after inspection.
"""
from __future__ import annotations

import logging

from shopcore.errors import InsufficientStock
from shopcore.models import Order
from shopcore.repositories import StockRepository, get_stock_repository

log = logging.getLogger(__name__)


def reserve_stock(order: Order, stock: StockRepository | None = None) -> None:
    """Reserve every line of ``order``; all or nothing."""
    stock = stock or get_stock_repository()
    short = [line.sku for line in order.lines if stock.available(line.sku) < line.quantity]
    if short:
        raise InsufficientStock(f"not enough stock for {', '.join(short)}")
    for line in order.lines:
        stock.reserved[line.sku] = stock.reserved.get(line.sku, 0) + line.quantity


def release_stock(order: Order, stock: StockRepository | None = None) -> None:
    """Give back the units reserved by ``order`` (called when it is cancelled)."""
    stock = stock or get_stock_repository()
    for line in order.lines:
        held = stock.reserved.get(line.sku, 0)
        stock.reserved[line.sku] = max(held - line.quantity, 0)
        if held < line.quantity:
            log.warning("order %s released more %s than it held", order.id, line.sku)


def consume_stock(order: Order, stock: StockRepository | None = None) -> None:
    """Turn the reservation into a real decrement when the parcel ships."""
    stock = stock or get_stock_repository()
    for line in order.lines:
        stock.reserved[line.sku] = max(stock.reserved.get(line.sku, 0) - line.quantity, 0)
        stock.on_hand[line.sku] = stock.on_hand.get(line.sku, 0) - line.quantity


def restock(sku: str, quantity: int, stock: StockRepository | None = None) -> None:
    """Put ``quantity`` returned units of ``sku`` back on hand."""
    stock = stock or get_stock_repository()
    stock.on_hand[sku] = stock.on_hand.get(sku, 0) + quantity
