"""Client for the payment gateway (PG) REST API: capture, cancel and refund.

It speaks JSON over HTTPS with a bearer key from :mod:`shopcore.config`.
Calls are retried on timeouts and 5xx answers with exponential backoff; every
call that moves money carries an idempotency key so a retry never charges or
refunds twice.
"""
from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from decimal import Decimal

from shopcore.config import load_settings
from shopcore.errors import PaymentGatewayError

log = logging.getLogger(__name__)

MAX_RETRIES = 3
BACKOFF_SECONDS = 0.5


class PaymentGateway:
    def __init__(self, base_url: str | None = None, api_key: str | None = None,
                 timeout: float | None = None) -> None:
        settings = load_settings()
        self.base_url = (base_url or settings.pg_base_url).rstrip("/")
        self.api_key = api_key or settings.pg_api_key
        self.timeout = timeout or settings.pg_timeout_seconds

    def capture(self, payment_id: str, amount: Decimal, *, idempotency_key: str) -> dict:
        """Capture an authorised payment."""
        return self._post(f"/payments/{payment_id}/capture", {"amount": int(amount)}, idempotency_key)

    def refund(self, payment_id: str, amount: Decimal, *, idempotency_key: str) -> str | None:
        """Refund ``amount`` won of a captured payment; returns the PG refund id.

        The PG rejects zero and negative amounts with a 400, so those are not
        sent at all: the call is skipped with a warning and ``None`` returned.
        """
        if amount <= 0:
            log.warning("refund of %s won for payment %s not sent to PG", amount, payment_id)
            return None
        body = self._post(f"/payments/{payment_id}/refunds", {"amount": int(amount)}, idempotency_key)
        return body.get("refund_id")

    def _post(self, path: str, payload: dict, idempotency_key: str) -> dict:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(payload).encode("utf-8"),
            method="POST",
            headers={
                "Authorization": f"Bearer {self.api_key}",
                "Content-Type": "application/json",
                "Idempotency-Key": idempotency_key,
            },
        )
        for attempt in range(1, MAX_RETRIES + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                if exc.code < 500 or attempt == MAX_RETRIES:
                    raise PaymentGatewayError(f"PG answered {exc.code} for {path}") from exc
            except (urllib.error.URLError, TimeoutError) as exc:
                if attempt == MAX_RETRIES:
                    raise PaymentGatewayError(f"PG unreachable for {path}: {exc}") from exc
            time.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1))
        raise PaymentGatewayError(f"PG call {path} gave up")  # pragma: no cover


_default: PaymentGateway | None = None


def get_gateway() -> PaymentGateway:
    global _default
    if _default is None:
        _default = PaymentGateway()
    return _default
