"""Order lifecycle: create, move through statuses, cancel, return."""
from __future__ import annotations

from shopcore.orders.cancel import cancel_order
from shopcore.orders.create import create_order
from shopcore.orders.returns import request_return

__all__ = ["cancel_order", "create_order", "request_return"]
