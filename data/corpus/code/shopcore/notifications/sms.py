"""SMS notices for shipment events, sent through the carrier-agnostic SMS relay.

Only customers with a mobile number starting with 010 get SMS; others get
nothing (the e-mail already covers the order). Night-time messages (21:00–08:00
KST) are queued until morning, as Korean advertising rules require for
marketing and as customer service asked for shipping notices too.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from shopcore.clock import now
from shopcore.config import load_settings
from shopcore.models import Order
from shopcore.notifications.templates import render_sms
from shopcore.repositories import get_customer_repository

log = logging.getLogger(__name__)

QUIET_HOURS = (21, 8)


@dataclass
class Sms:
    sender: str
    to: str
    text: str


SENT: list[Sms] = []
QUEUED: list[Sms] = []


def in_quiet_hours(hour: int) -> bool:
    start, end = QUIET_HOURS
    return hour >= start or hour < end


def send_sms(to: str, text: str) -> None:
    message = Sms(load_settings().sms_sender_number, to, text)
    if in_quiet_hours(now().hour):
        QUEUED.append(message)
    else:
        SENT.append(message)


def send_shipping_started_sms(order: Order, tracking_no: str, carrier: str) -> None:
    """Tell the customer their parcel left the warehouse."""
    customer = get_customer_repository().get(order.customer_id)
    if not customer.phone.startswith("010"):
        log.info("customer %s has no mobile number; shipping SMS skipped", customer.id)
        return
    send_sms(customer.phone, render_sms("shipped", tracking_no=tracking_no, carrier=carrier))


def flush_queue() -> int:
    """Send queued messages (run by the 08:00 job); returns how many were sent."""
    count = len(QUEUED)
    SENT.extend(QUEUED)
    QUEUED.clear()
    return count
