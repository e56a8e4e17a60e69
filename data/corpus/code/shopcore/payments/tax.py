"""VAT arithmetic for receipts and refund slips.

Korean retail prices include 10 % VAT. The supply value and the tax are
derived from a VAT-inclusive amount; tax is rounded down to the won and the
supply value takes the remainder, as on the shop's cash receipts.
"""
from __future__ import annotations

from decimal import Decimal

from shopcore.money import floor_won

VAT_RATE = Decimal("0.10")

# Gift cards and some books are sold tax-free; their SKUs start with these prefixes.
TAX_FREE_SKU_PREFIXES = ("GC-", "BK-")


def vat_included(amount: Decimal) -> Decimal:
    """VAT contained in a VAT-inclusive ``amount``: amount × 10 / 110, rounded down."""
    return floor_won(amount * VAT_RATE / (1 + VAT_RATE))


def supply_value(amount: Decimal) -> Decimal:
    """``amount`` without its VAT."""
    return amount - vat_included(amount)


def is_tax_free(sku: str) -> bool:
    return sku.upper().startswith(TAX_FREE_SKU_PREFIXES)


def receipt_breakdown(amount: Decimal, sku: str = "") -> dict[str, Decimal]:
    """``{"supply": …, "vat": …, "total": …}`` for one receipt line."""
    vat = Decimal(0) if is_tax_free(sku) else vat_included(amount)
    return {"supply": amount - vat, "vat": vat, "total": amount}
