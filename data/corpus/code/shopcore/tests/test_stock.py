from __future__ import annotations

from decimal import Decimal

import pytest

from shopcore.errors import InsufficientStock
from shopcore.inventory.stock import release_stock, reserve_stock, restock
from shopcore.models import Order, OrderLine
from shopcore.repositories import get_stock_repository


def make_order(quantity: int) -> Order:
    return Order(id="od_s", customer_id="c1",
                 lines=[OrderLine("SKU-LAMP-3", "무드등", Decimal("25000"), quantity)])


def test_reserve_then_release():
    stock = get_stock_repository()
    stock.on_hand["SKU-LAMP-3"] = 5
    order = make_order(2)
    reserve_stock(order)
    assert stock.available("SKU-LAMP-3") == 3
    release_stock(order)
    assert stock.available("SKU-LAMP-3") == 5


def test_reserve_is_all_or_nothing():
    get_stock_repository().on_hand["SKU-LAMP-3"] = 1
    with pytest.raises(InsufficientStock):
        reserve_stock(make_order(2))
    assert get_stock_repository().reserved == {}


def test_restock_adds_units():
    restock("SKU-LAMP-3", 2)
    assert get_stock_repository().on_hand["SKU-LAMP-3"] == 2
