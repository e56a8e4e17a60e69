"""Bearer-token authentication for the customer API.

Tokens are ``<customer_id>.<expiry>.<signature>`` where the signature is an
HMAC-SHA256 of the first two parts with the server secret. They are issued
by the login service and checked here without a database lookup.
"""
from __future__ import annotations

import hashlib
import hmac
import time

from shopcore.config import load_settings
from shopcore.errors import Unauthorized


def _sign(payload: str, secret: str) -> str:
    return hmac.new(secret.encode("utf-8"), payload.encode("utf-8"), hashlib.sha256).hexdigest()


def issue_token(customer_id: str, secret: str, now: float | None = None) -> str:
    """A token for ``customer_id`` valid for the configured TTL."""
    ttl = load_settings().api_token_ttl_minutes * 60
    expiry = int((now or time.time()) + ttl)
    payload = f"{customer_id}.{expiry}"
    return f"{payload}.{_sign(payload, secret)}"


def customer_from_token(token: str, secret: str, now: float | None = None) -> str:
    """The customer id in a valid, unexpired token; raises :class:`Unauthorized`."""
    try:
        customer_id, expiry, signature = token.rsplit(".", 2)
    except ValueError:
        raise Unauthorized("malformed token") from None
    if not hmac.compare_digest(_sign(f"{customer_id}.{expiry}", secret), signature):
        raise Unauthorized("bad token signature")
    if int(expiry) < (now or time.time()):
        raise Unauthorized("token expired")
    return customer_id


def require_customer(headers: dict[str, str], secret: str) -> str:
    """Customer id from an ``Authorization: Bearer …`` header."""
    value = headers.get("Authorization", "")
    if not value.startswith("Bearer "):
        raise Unauthorized("missing bearer token")
    return customer_from_token(value.removeprefix("Bearer "), secret)
