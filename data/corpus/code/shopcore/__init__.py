"""shopcore — order, payment and refund service for a small online shop.

The package is organised by business step: ``orders`` (create, cancel, return),
``payments`` (gateway client, discounts, refunds, webhooks), ``inventory``,
``notifications``, ``loyalty`` and the HTTP layer in ``api``. Storage is the
in-memory repositories in :mod:`shopcore.repositories`; production swaps them
for the SQL versions in the ops repository.
"""
from __future__ import annotations

__version__ = "2.7.1"

__all__ = ["__version__"]
