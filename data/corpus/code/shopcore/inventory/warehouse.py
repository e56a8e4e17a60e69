"""Warehouse assignment and low-stock alerts.

Orders ship from the warehouse closest to the delivery region that holds the
SKU; Jeju orders always ship from the Jeju hub. Stock below the reorder point
is reported to the merchandising team every morning.
"""
from __future__ import annotations

from dataclasses import dataclass

from shopcore.repositories import StockRepository, get_stock_repository

WAREHOUSES = {
    "ICN-1": "Incheon main hub",
    "PUS-2": "Busan south hub",
    "CJU-1": "Jeju hub",
}
REGION_PREFERENCE = {
    "mainland": ("ICN-1", "PUS-2"),
    "island": ("PUS-2", "ICN-1"),
    "jeju": ("CJU-1", "PUS-2"),
}
REORDER_POINT = 20


@dataclass(frozen=True)
class LowStock:
    sku: str
    available: int


def pick_warehouse(region: str) -> str:
    """Code of the first-choice warehouse for ``region``."""
    return REGION_PREFERENCE.get(region, REGION_PREFERENCE["mainland"])[0]


def low_stock_report(stock: StockRepository | None = None,
                     reorder_point: int = REORDER_POINT) -> list[LowStock]:
    """SKUs whose available units fell below ``reorder_point``, lowest first."""
    stock = stock or get_stock_repository()
    rows = [LowStock(sku, stock.available(sku)) for sku in stock.on_hand]
    return sorted((r for r in rows if r.available < reorder_point), key=lambda r: r.available)
