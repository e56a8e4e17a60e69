"""HTTP layer: a tiny router, request schemas and token auth."""
from __future__ import annotations
