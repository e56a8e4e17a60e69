from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from shopcore.errors import InvalidSignature
from shopcore.models import OrderStatus
from shopcore.payments.webhooks import SIGNATURE_HEADER, handle_webhook

SECRET = "whsec_local"


def signed(event: dict) -> tuple[bytes, dict]:
    body = json.dumps(event).encode("utf-8")
    signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {SIGNATURE_HEADER: signature}


def test_captured_payment_marks_order_paid(paid_order):
    paid_order.status = OrderStatus.PENDING
    body, headers = signed({"type": "payment.captured",
                            "data": {"order_id": paid_order.id, "payment_id": "pay_9"}})
    assert handle_webhook(body, headers) == {"status": "ok"}
    assert paid_order.status == OrderStatus.PAID
    assert paid_order.payment_id == "pay_9"


def test_bad_signature_is_rejected(paid_order):
    body, _ = signed({"type": "payment.captured", "data": {}})
    with pytest.raises(InvalidSignature):
        handle_webhook(body, {SIGNATURE_HEADER: "0" * 64})
