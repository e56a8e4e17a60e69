"""Request bodies accepted by the API, validated into small dataclasses.

Validation errors raise ``ValueError`` with the offending field; the router
turns them into 400 answers.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation


@dataclass(frozen=True)
class CreateOrderRequest:
    items: list[tuple[str, str, Decimal, int]]
    coupon_code: str | None
    region: str


@dataclass(frozen=True)
class CancelOrderRequest:
    reason: str


@dataclass(frozen=True)
class ReturnRequest:
    skus: list[str]
    reason: str


def _field(body: dict, name: str, kind: type):
    if name not in body:
        raise ValueError(f"missing field '{name}'")
    if not isinstance(body[name], kind):
        raise ValueError(f"field '{name}' must be {kind.__name__}")
    return body[name]


def parse_create_order(body: dict) -> CreateOrderRequest:
    items = []
    for i, item in enumerate(_field(body, "items", list)):
        try:
            price = Decimal(str(item["unit_price"]))
        except (KeyError, InvalidOperation):
            raise ValueError(f"items[{i}].unit_price must be a number") from None
        quantity = int(item.get("quantity", 1))
        if quantity < 1:
            raise ValueError(f"items[{i}].quantity must be at least 1")
        items.append((str(item["sku"]), str(item.get("name", item["sku"])), price, quantity))
    return CreateOrderRequest(items, body.get("coupon_code"), body.get("region", "mainland"))


def parse_cancel_order(body: dict) -> CancelOrderRequest:
    return CancelOrderRequest(reason=str(body.get("reason", "other")))


def parse_return(body: dict) -> ReturnRequest:
    skus = [str(s) for s in _field(body, "skus", list)]
    if not skus:
        raise ValueError("field 'skus' must not be empty")
    return ReturnRequest(skus=skus, reason=str(_field(body, "reason", str)))
