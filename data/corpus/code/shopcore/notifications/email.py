"""Transactional e-mail: order confirmation, cancellation and refund notices.

In development (``email_dry_run``) messages are appended to :data:`OUTBOX`
instead of being sent, which is also what the tests inspect.
"""
from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage

from shopcore.config import load_settings
from shopcore.models import Order, Refund
from shopcore.money import ZERO, format_won
from shopcore.notifications.templates import render_email
from shopcore.repositories import get_customer_repository

log = logging.getLogger(__name__)

OUTBOX: list[EmailMessage] = []


def _send(to: str, subject: str, body: str) -> None:
    settings = load_settings()
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    if settings.email_dry_run:
        OUTBOX.append(message)
        return
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=10) as smtp:
        smtp.send_message(message)


def _customer(order: Order) -> tuple[str, str]:
    customer = get_customer_repository().get(order.customer_id)
    return customer.name, customer.email


def send_order_confirmation_email(order: Order) -> None:
    name, email = _customer(order)
    subject, body = render_email("order_confirmation", name=name, order_id=order.id,
                                 amount=format_won(order.amount_paid))
    _send(email, subject, body)


def send_order_cancelled_email(order: Order, refund: Refund | None) -> None:
    """Tell the customer that ``order`` was cancelled and how much comes back."""
    name, email = _customer(order)
    amount = refund.amount if refund is not None else ZERO
    subject, body = render_email("order_cancelled", name=name, order_id=order.id,
                                 amount=format_won(amount))
    _send(email, subject, body)
    log.info("cancellation mail for %s sent to %s", order.id, email)


def send_refund_completed_email(order: Order, refund: Refund) -> None:
    name, email = _customer(order)
    subject, body = render_email("refund_completed", name=name, order_id=order.id,
                                 amount=format_won(refund.amount))
    _send(email, subject, body)
