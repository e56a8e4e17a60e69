"""Exceptions raised by shopcore, each with a stable error code for the API.

The HTTP layer (:mod:`shopcore.api.routes`) turns a :class:`ShopcoreError` into
a JSON body ``{"error": code, "message": ...}`` with ``http_status``.
"""
from __future__ import annotations


class ShopcoreError(Exception):
    code = "GEN-500"
    http_status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


class OrderNotFound(ShopcoreError):
    code = "ORD-404"
    http_status = 404


class OrderNotCancellable(ShopcoreError):
    """The order has left the warehouse (or is already closed); use a return instead."""

    code = "ORD-409"
    http_status = 409


class InvalidTransition(ShopcoreError):
    code = "ORD-422"
    http_status = 422


class ReturnWindowClosed(ShopcoreError):
    code = "RET-410"
    http_status = 410


class CouponError(ShopcoreError):
    code = "CPN-400"
    http_status = 400


class InsufficientStock(ShopcoreError):
    code = "INV-409"
    http_status = 409


class PaymentGatewayError(ShopcoreError):
    code = "PG-502"
    http_status = 502


class InvalidSignature(ShopcoreError):
    code = "PG-401"
    http_status = 401


class Unauthorized(ShopcoreError):
    code = "AUTH-401"
    http_status = 401
