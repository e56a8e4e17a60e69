"""Stock reservations and warehouse moves."""
from __future__ import annotations

from shopcore.inventory.stock import release_stock, reserve_stock, restock

__all__ = ["release_stock", "reserve_stock", "restock"]
