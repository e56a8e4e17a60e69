"""Loyalty points earned on purchases."""
from __future__ import annotations

from shopcore.loyalty.points import earn_points, revoke_points

__all__ = ["earn_points", "revoke_points"]
