"""Webhook endpoint logic for events pushed by the payment gateway.

The PG signs the raw request body with HMAC-SHA256 using the shared webhook
secret and sends the hex digest in the ``X-PG-Signature`` header. Events we
act on: ``payment.captured``, ``payment.failed`` and ``refund.completed``.
Anything else is acknowledged and ignored so the PG stops retrying.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging

from shopcore.clock import now
from shopcore.config import load_settings
from shopcore.errors import InvalidSignature
from shopcore.models import OrderStatus
from shopcore.repositories import get_order_repository, get_refund_repository

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-PG-Signature"


def verify_signature(raw_body: bytes, signature: str, secret: str | None = None) -> None:
    """Raise :class:`InvalidSignature` unless ``signature`` matches ``raw_body``."""
    secret = secret or load_settings().pg_webhook_secret
    expected = hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature or ""):
        raise InvalidSignature("webhook signature mismatch")


def handle_webhook(raw_body: bytes, headers: dict[str, str]) -> dict[str, str]:
    """Verify, parse and dispatch one webhook call; returns the JSON acknowledgement."""
    verify_signature(raw_body, headers.get(SIGNATURE_HEADER, ""))
    event = json.loads(raw_body.decode("utf-8"))
    kind = event.get("type", "")
    data = event.get("data", {})
    if kind == "payment.captured":
        _on_payment_captured(data)
    elif kind == "payment.failed":
        _on_payment_failed(data)
    elif kind == "refund.completed":
        _on_refund_completed(data)
    else:
        log.info("ignoring webhook event %s", kind)
    return {"status": "ok"}


def _on_payment_captured(data: dict) -> None:
    order = get_order_repository().get(data["order_id"])
    if order.status == OrderStatus.PENDING:
        order.status = OrderStatus.PAID
        order.payment_id = data["payment_id"]
        order.paid_at = now()
        get_order_repository().save(order)


def _on_payment_failed(data: dict) -> None:
    log.warning("payment failed for order %s: %s", data.get("order_id"), data.get("reason"))


def _on_refund_completed(data: dict) -> None:
    for refund in get_refund_repository().for_order(data["order_id"]):
        if refund.gateway_refund_id == data["refund_id"]:
            refund.status = "completed"
