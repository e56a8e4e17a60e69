"""Customer notifications: e-mail and SMS (KakaoTalk alerts go through SMS fallback)."""
from __future__ import annotations

from shopcore.notifications.email import (
    send_order_cancelled_email,
    send_order_confirmation_email,
    send_refund_completed_email,
)

__all__ = [
    "send_order_cancelled_email",
    "send_order_confirmation_email",
    "send_refund_completed_email",
]
