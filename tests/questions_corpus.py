"""A small folder of documents for the golden-set generator's tests (chunk size 64, overlap 8:
several chunks per document, some naming their document, some not)."""
from __future__ import annotations

from pathlib import Path

REFUNDS = """---
title: Larkspur refund policy
---
# Refunds

Customers may return any unopened item within 21 days of delivery for a full refund of the \
price paid, including the original shipping charge.

Opened items are refunded at 80 percent of the price when they come back within 14 days \
together with the original receipt and every accessory.

## Shipping costs

Return shipping is free for orders above 50 euros; otherwise the customer pays a flat fee \
of 4 euros for each parcel sent back to the warehouse.

Refunds are paid to the original payment card within five working days after the \
warehouse inspects and accepts the returned parcel.
"""

GATEWAY = """---
title: Kestrel gateway manual
---
# Network setup

The second Ethernet port keeps the fixed service address 192.168.50.1 so that a laptop \
can always reach the configuration pages during commissioning.

The first Ethernet port obtains its address by DHCP unless an engineer stores a static \
address, mask and default route on the network settings page.

## Factory reset

Holding the recessed reset button for ten seconds restores every factory setting, clears \
the stored certificates and reboots the device into commissioning mode.

A short press of under two seconds only restarts the application and keeps all settings, \
buffered readings and certificates exactly as they were.
"""


def write_corpus(folder: Path) -> Path:
    """The two documents as Markdown files in `folder` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refunds.md").write_text(REFUNDS, encoding="utf-8")
    (folder / "gateway.md").write_text(GATEWAY, encoding="utf-8")
    return folder
