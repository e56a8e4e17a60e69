"""HTTP routes of the customer API, on a minimal decorator-based router.

Each handler takes ``(params, body, headers)`` and returns ``(status, json)``.
The WSGI adapter in the ops repository maps real requests onto :func:`dispatch`.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from shopcore.api.auth import require_customer
from shopcore.api.schemas import parse_cancel_order, parse_create_order, parse_return
from shopcore.config import load_settings
from shopcore.errors import OrderNotFound, ShopcoreError
from shopcore.orders.cancel import cancel_order
from shopcore.orders.create import create_order
from shopcore.orders.returns import request_return
from shopcore.payments.webhooks import handle_webhook
from shopcore.repositories import get_order_repository

Handler = Callable[[dict, Any, dict], tuple[int, dict]]
ROUTES: list[tuple[str, re.Pattern, Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "$")

    def register(handler: Handler) -> Handler:
        ROUTES.append((method, regex, handler))
        return handler

    return register


def dispatch(method: str, path: str, body: Any, headers: dict) -> tuple[int, dict]:
    for route_method, regex, handler in ROUTES:
        match = regex.match(path)
        if match and route_method == method:
            try:
                return handler(match.groupdict(), body, headers)
            except ShopcoreError as exc:
                return exc.http_status, exc.to_dict()
            except ValueError as exc:
                return 400, {"error": "REQ-400", "message": str(exc)}
    return 404, {"error": "REQ-404", "message": f"no route for {method} {path}"}


def _owned_order(order_id: str, headers: dict):
    customer_id = require_customer(headers, load_settings().api_token_secret)
    order = get_order_repository().get(order_id)
    if order.customer_id != customer_id:
        raise OrderNotFound(f"order {order_id} does not exist")  # do not reveal other orders
    return order


@route("POST", "/orders")
def post_order(params: dict, body: Any, headers: dict) -> tuple[int, dict]:
    customer_id = require_customer(headers, load_settings().api_token_secret)
    req = parse_create_order(body)
    order = create_order(customer_id, req.items, coupon_code=req.coupon_code, region=req.region)
    return 201, {"order_id": order.id, "amount_due": int(order.amount_paid)}


@route("POST", "/orders/{order_id}/cancel")
def post_cancel(params: dict, body: Any, headers: dict) -> tuple[int, dict]:
    order = _owned_order(params["order_id"], headers)
    refund = cancel_order(order.id, parse_cancel_order(body).reason)
    return 200, {"order_id": order.id, "status": "cancelled",
                 "refund_amount": int(refund.amount) if refund else 0}


@route("POST", "/orders/{order_id}/returns")
def post_return(params: dict, body: Any, headers: dict) -> tuple[int, dict]:
    order = _owned_order(params["order_id"], headers)
    req = parse_return(body)
    refund = request_return(order.id, req.skus, req.reason)
    return 201, {"refund_id": refund.id, "refund_amount": int(refund.amount)}


@route("POST", "/webhooks/pg")
def post_pg_webhook(params: dict, body: Any, headers: dict) -> tuple[int, dict]:
    return 200, handle_webhook(body, headers)
