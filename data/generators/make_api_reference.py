"""Render data/corpus/manuals/fernway-api-reference.md from the endpoint table below.

What it is: the API reference of a fictional e-commerce service, Fernway Commerce, written
as data (one entry per endpoint, hand-written descriptions, parameters, errors and rate
limits) and rendered through one template, so that every endpoint has sections with the same
headings ("Parameters", "Errors", "Rate limits") that read alike. A "Rate limits" section
only makes sense under its heading path (resource > endpoint > Rate limits): the case for
heading-aware context and parent-child chunking in long technical documents (the 2026 RAG
best-practice notes).

What it is not: a real API. Fernway, its hosts and its error codes are invented; the
example host uses the reserved .example top-level domain.

Limits: deterministic, no randomness; the rate-limit sentence of every endpoint is unique
(checked below), so golden spans drawn from it stay unique within the document.

Usage:
    python data/generators/make_api_reference.py          # (re)write the file
    python data/generators/make_api_reference.py --check  # exit 1 if the file differs
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from _output import write_or_check  # noqa: E402  (this folder is on sys.path)

OUT = Path(__file__).resolve().parents[1] / "corpus" / "manuals" / "fernway-api-reference.md"
BASE = "https://api.fernway.example/v2"

# Each endpoint: method, path, title, description, params [(name, type, required, text)],
# example body (dict or None), response (dict), errors [(status, code, text)],
# rate (bucket, per_minute, burst, extra sentence or "").
RESOURCES: list[tuple[str, str, list[dict]]] = [
    ("Orders", "An order records what a customer bought, the prices that applied at checkout and the state of fulfilment. Orders move through the states `pending`, `paid`, `fulfilled`, `cancelled` and `refunded`; the API never deletes an order.", [
        dict(method="GET", path="/orders", title="List orders",
             text="Returns the orders of the store, newest first. Use the filters to narrow the list; results are paginated with cursors as described under Pagination.",
             params=[("status", "string", "no", "Only orders in this state. One of `pending`, `paid`, `fulfilled`, `cancelled`, `refunded`."),
                     ("customer_id", "string", "no", "Only orders placed by this customer."),
                     ("created_after", "timestamp", "no", "Only orders created at or after this time (ISO 8601, UTC)."),
                     ("limit", "integer", "no", "Page size, 1 to 100. Default 25."),
                     ("cursor", "string", "no", "The `next_cursor` value from the previous page.")],
             body=None,
             response={"data": [{"id": "ord_7Hc2Qm", "status": "paid", "total": 4990, "currency": "EUR"}], "next_cursor": "c3Vw"},
             errors=[(400, "invalid_filter", "A filter value has the wrong type or an unknown state name."),
                     (400, "invalid_cursor", "The cursor is malformed or older than 24 hours.")],
             rate=("read", 600, 100, "Listing with `limit=100` counts as one request.")),
        dict(method="POST", path="/orders", title="Create an order",
             text="Creates an order from a list of line items. The API computes taxes and shipping from the store settings; the totals in the response are authoritative and the client should display them rather than its own calculation.",
             params=[("customer_id", "string", "yes", "The customer placing the order."),
                     ("line_items", "array", "yes", "Items to buy, each with `product_id` and `quantity` (1 to 999). At most 250 line items."),
                     ("shipping_address", "object", "yes", "Destination address; `country` must be an ISO 3166-1 alpha-2 code."),
                     ("discount_code", "string", "no", "A discount code to apply. Validated as by `POST /discounts/validate`."),
                     ("idempotency_key", "string", "no", "A unique key of up to 64 characters. Retrying with the same key returns the original order instead of creating a second one.")],
             body={"customer_id": "cus_41Fa9", "line_items": [{"product_id": "prd_Lamp01", "quantity": 2}], "shipping_address": {"country": "NL", "postal_code": "3511 AB"}},
             response={"id": "ord_7Hc2Qm", "status": "pending", "total": 4990, "currency": "EUR"},
             errors=[(404, "customer_not_found", "No customer exists with the given `customer_id`."),
                     (409, "insufficient_stock", "At least one line item asks for more units than are available; the response lists the affected products."),
                     (422, "address_unserviceable", "The store does not ship to the given country or postal code.")],
             rate=("write", 120, 20, "Retries that reuse an `idempotency_key` also count against the limit.")),
        dict(method="GET", path="/orders/{order_id}", title="Retrieve an order",
             text="Returns one order with its line items, payments, shipments and refunds expanded.",
             params=[("order_id", "string", "yes", "The order id, in the path."),
                     ("expand", "string", "no", "Comma-separated list of related objects to include: `customer`, `shipments`, `refunds`.")],
             body=None,
             response={"id": "ord_7Hc2Qm", "status": "fulfilled", "line_items": [{"product_id": "prd_Lamp01", "quantity": 2}]},
             errors=[(404, "order_not_found", "No order exists with the given id in this store.")],
             rate=("read", 900, 150, "")),
        dict(method="POST", path="/orders/{order_id}/cancel", title="Cancel an order",
             text="Cancels an order that has not yet shipped and releases its reserved stock. Cancelling a paid order refunds the payment in full automatically; to refund part of an order use the Refunds resource instead.",
             params=[("order_id", "string", "yes", "The order id, in the path."),
                     ("reason", "string", "no", "One of `customer_request`, `fraud`, `out_of_stock`, `other`."),
                     ("notify_customer", "boolean", "no", "Send the cancellation email. Default `true`.")],
             body={"reason": "customer_request", "notify_customer": True},
             response={"id": "ord_7Hc2Qm", "status": "cancelled"},
             errors=[(404, "order_not_found", "No order exists with the given id in this store."),
                     (409, "order_already_shipped", "At least one shipment has left the warehouse; create a return instead.")],
             rate=("write", 60, 10, "")),
    ]),
    ("Customers", "A customer is a person or business that places orders. Customer records hold contact details, addresses and marketing consent; payment details are never returned by the API.", [
        dict(method="GET", path="/customers", title="List customers",
             text="Returns customers ordered by creation time. The `email` filter matches exactly and ignores case.",
             params=[("email", "string", "no", "Only the customer with this email address."),
                     ("created_after", "timestamp", "no", "Only customers created at or after this time."),
                     ("limit", "integer", "no", "Page size, 1 to 100. Default 25."),
                     ("cursor", "string", "no", "The `next_cursor` value from the previous page.")],
             body=None,
             response={"data": [{"id": "cus_41Fa9", "email": "r.okafor@mail.example"}], "next_cursor": None},
             errors=[(400, "invalid_filter", "A filter value has the wrong type.")],
             rate=("read", 300, 50, "Searching by `email` is served from a separate index and may lag writes by a few seconds.")),
        dict(method="POST", path="/customers", title="Create a customer",
             text="Creates a customer record. Email addresses are unique within a store.",
             params=[("email", "string", "yes", "The customer's email address."),
                     ("name", "string", "no", "Full name, up to 200 characters."),
                     ("phone", "string", "no", "Phone number in E.164 format."),
                     ("marketing_consent", "boolean", "no", "Whether the customer agreed to receive marketing email. Default `false`.")],
             body={"email": "r.okafor@mail.example", "name": "Rita Okafor", "marketing_consent": False},
             response={"id": "cus_41Fa9", "email": "r.okafor@mail.example"},
             errors=[(409, "email_taken", "Another customer in this store already uses the email address."),
                     (422, "invalid_phone", "The phone number is not in E.164 format.")],
             rate=("write", 100, 15, "")),
        dict(method="PATCH", path="/customers/{customer_id}", title="Update a customer",
             text="Changes the given fields of a customer and leaves the others unchanged. Setting `marketing_consent` to `false` also unsubscribes the customer from all mailing lists within one hour.",
             params=[("customer_id", "string", "yes", "The customer id, in the path."),
                     ("name", "string", "no", "New full name."),
                     ("phone", "string", "no", "New phone number in E.164 format."),
                     ("marketing_consent", "boolean", "no", "New consent value.")],
             body={"marketing_consent": False},
             response={"id": "cus_41Fa9", "marketing_consent": False},
             errors=[(404, "customer_not_found", "No customer exists with the given id."),
                     (422, "invalid_phone", "The phone number is not in E.164 format.")],
             rate=("write", 90, 15, "")),
        dict(method="DELETE", path="/customers/{customer_id}", title="Delete a customer",
             text="Erases a customer's personal data. Orders placed by the customer are kept for accounting, with name, email, phone and addresses replaced by placeholders. Erasure cannot be undone.",
             params=[("customer_id", "string", "yes", "The customer id, in the path."),
                     ("confirm", "boolean", "yes", "Must be `true`; protects against accidental calls.")],
             body=None,
             response={"id": "cus_41Fa9", "deleted": True},
             errors=[(404, "customer_not_found", "No customer exists with the given id."),
                     (409, "open_orders", "The customer has orders that are not yet fulfilled or cancelled.")],
             rate=("write", 20, 5, "Bulk erasure requests should be sent through the privacy export tool, not through this endpoint.")),
    ]),
    ("Products", "A product is an item the store sells. Each product has one or more variants (for example sizes or colours), and stock is tracked per variant in the Inventory resource.", [
        dict(method="GET", path="/products", title="List products",
             text="Returns the catalogue, ordered by product name. Archived products are excluded unless `include_archived` is set.",
             params=[("collection", "string", "no", "Only products in this collection."),
                     ("include_archived", "boolean", "no", "Include archived products. Default `false`."),
                     ("limit", "integer", "no", "Page size, 1 to 200. Default 50."),
                     ("cursor", "string", "no", "The `next_cursor` value from the previous page.")],
             body=None,
             response={"data": [{"id": "prd_Lamp01", "name": "Oda table lamp", "price": 2495}], "next_cursor": "bGFtcA"},
             errors=[(400, "invalid_cursor", "The cursor is malformed or older than 24 hours.")],
             rate=("read", 1200, 200, "Catalogue reads are cached at the edge for 30 seconds.")),
        dict(method="POST", path="/products", title="Create a product",
             text="Adds a product to the catalogue with its variants. Prices are integers in the smallest currency unit (cents).",
             params=[("name", "string", "yes", "Product name, up to 120 characters."),
                     ("price", "integer", "yes", "Price in the smallest currency unit."),
                     ("variants", "array", "no", "Variants, each with `sku` and optional `option_values`. At most 100 variants."),
                     ("collections", "array", "no", "Collection ids the product belongs to.")],
             body={"name": "Oda table lamp", "price": 2495, "variants": [{"sku": "ODA-WHT"}, {"sku": "ODA-BLK"}]},
             response={"id": "prd_Lamp01", "name": "Oda table lamp"},
             errors=[(409, "sku_taken", "A variant uses a SKU that already exists in the store."),
                     (422, "too_many_variants", "More than 100 variants were given.")],
             rate=("write", 80, 10, "")),
        dict(method="PATCH", path="/products/{product_id}", title="Update a product",
             text="Changes the given fields of a product. Changing `price` does not affect orders that were already placed.",
             params=[("product_id", "string", "yes", "The product id, in the path."),
                     ("name", "string", "no", "New name."),
                     ("price", "integer", "no", "New price in the smallest currency unit."),
                     ("archived", "boolean", "no", "Archive or restore the product.")],
             body={"price": 2295},
             response={"id": "prd_Lamp01", "price": 2295},
             errors=[(404, "product_not_found", "No product exists with the given id."),
                     (422, "invalid_price", "The price is negative or above 10,000,000.")],
             rate=("write", 150, 25, "")),
    ]),
    ("Inventory", "Inventory levels are tracked per variant and per location. Orders reserve stock when they are created and consume it when they ship.", [
        dict(method="GET", path="/inventory/{sku}", title="Retrieve stock levels",
             text="Returns the available, reserved and incoming quantities of one SKU at every location.",
             params=[("sku", "string", "yes", "The variant SKU, in the path."),
                     ("location_id", "string", "no", "Only this location.")],
             body=None,
             response={"sku": "ODA-WHT", "locations": [{"location_id": "loc_Utrecht", "available": 41, "reserved": 3, "incoming": 120}]},
             errors=[(404, "sku_not_found", "No variant with this SKU exists in the store.")],
             rate=("read", 450, 75, "")),
        dict(method="POST", path="/inventory/{sku}/adjustments", title="Adjust stock",
             text="Records a change in stock at one location, for example after a stock count or a damaged delivery. The adjustment is added to the current level; it does not set an absolute value.",
             params=[("sku", "string", "yes", "The variant SKU, in the path."),
                     ("location_id", "string", "yes", "Where the change happened."),
                     ("delta", "integer", "yes", "Units to add (positive) or remove (negative), between -10,000 and 10,000."),
                     ("reason", "string", "yes", "One of `count`, `damage`, `return`, `correction`.")],
             body={"location_id": "loc_Utrecht", "delta": -2, "reason": "damage"},
             response={"sku": "ODA-WHT", "location_id": "loc_Utrecht", "available": 39},
             errors=[(404, "sku_not_found", "No variant with this SKU exists in the store."),
                     (422, "negative_stock", "The adjustment would make available stock negative.")],
             rate=("write", 240, 40, "Adjustments for the same SKU are applied in the order they are received.")),
    ]),
    ("Refunds", "A refund returns money for all or part of a paid order. Refunds are sent to the original payment method; the API cannot refund to a different card or account.", [
        dict(method="POST", path="/refunds", title="Create a refund",
             text="Refunds an amount against a paid order. Several partial refunds may be made until the order total is reached. Refunds are processed asynchronously: the refund starts in state `pending` and a `refund.succeeded` or `refund.failed` webhook follows.",
             params=[("order_id", "string", "yes", "The order to refund."),
                     ("amount", "integer", "no", "Amount in the smallest currency unit. Omit to refund the remaining balance."),
                     ("reason", "string", "no", "One of `returned`, `damaged`, `goodwill`, `duplicate`."),
                     ("restock", "boolean", "no", "Return the refunded items to stock. Default `false`.")],
             body={"order_id": "ord_7Hc2Qm", "amount": 2495, "reason": "returned", "restock": True},
             response={"id": "ref_9kQ2", "status": "pending", "amount": 2495},
             errors=[(404, "order_not_found", "No order exists with the given id in this store."),
                     (409, "order_not_paid", "The order has no captured payment to refund."),
                     (422, "amount_exceeds_balance", "The amount is larger than the part of the order that has not been refunded yet.")],
             rate=("write", 30, 5, "Refund requests are also limited to 1,000 per store per day.")),
        dict(method="GET", path="/refunds/{refund_id}", title="Retrieve a refund",
             text="Returns one refund with its current state and, once it has succeeded, the reference issued by the payment provider.",
             params=[("refund_id", "string", "yes", "The refund id, in the path.")],
             body=None,
             response={"id": "ref_9kQ2", "status": "succeeded", "provider_reference": "PSP-558201"},
             errors=[(404, "refund_not_found", "No refund exists with the given id.")],
             rate=("read", 360, 60, "")),
    ]),
    ("Shipments", "A shipment is a parcel sent for an order. One order can have several shipments; each shipment carries a tracking number from the carrier.", [
        dict(method="POST", path="/shipments", title="Create a shipment",
             text="Marks line items of an order as shipped and books a label with the carrier configured for the destination. The label is returned as a PDF link valid for seven days.",
             params=[("order_id", "string", "yes", "The order being shipped."),
                     ("line_items", "array", "no", "Items in this parcel, each with `product_id` and `quantity`. Omit to ship everything not yet shipped."),
                     ("carrier", "string", "no", "Override the default carrier: `postnl`, `dhl`, `ups`, `local_courier`."),
                     ("weight_grams", "integer", "yes", "Parcel weight, 1 to 31,500 grams.")],
             body={"order_id": "ord_7Hc2Qm", "weight_grams": 1850},
             response={"id": "shp_3Xy8", "tracking_number": "3SFRN0041887", "label_url": "https://files.fernway.example/labels/shp_3Xy8.pdf"},
             errors=[(404, "order_not_found", "No order exists with the given id in this store."),
                     (409, "nothing_to_ship", "All line items of the order have already shipped."),
                     (422, "parcel_too_heavy", "The weight exceeds the carrier's limit of 31,500 grams.")],
             rate=("write", 45, 8, "Label booking depends on the carrier and may take up to ten seconds.")),
        dict(method="GET", path="/shipments/{shipment_id}/tracking", title="Track a shipment",
             text="Returns the carrier's tracking events for a shipment, newest first. Events are refreshed from the carrier at most every fifteen minutes.",
             params=[("shipment_id", "string", "yes", "The shipment id, in the path.")],
             body=None,
             response={"id": "shp_3Xy8", "events": [{"time": "2025-03-04T09:12:00Z", "status": "out_for_delivery"}]},
             errors=[(404, "shipment_not_found", "No shipment exists with the given id."),
                     (503, "carrier_unavailable", "The carrier's tracking service did not answer; retry later.")],
             rate=("read", 240, 30, "")),
    ]),
    ("Webhooks", "Webhook subscriptions deliver events (for example `order.paid` or `refund.succeeded`) to an HTTPS endpoint of yours. Each delivery is signed with the subscription's secret in the `Fernway-Signature` header.", [
        dict(method="POST", path="/webhooks", title="Create a webhook subscription",
             text="Subscribes an HTTPS URL to one or more event types. The response contains the signing secret; it is shown only once.",
             params=[("url", "string", "yes", "HTTPS URL that receives the events."),
                     ("events", "array", "yes", "Event types, for example `order.paid`, `order.cancelled`, `refund.succeeded`. Use `*` for all."),
                     ("description", "string", "no", "A note for your own reference, up to 200 characters.")],
             body={"url": "https://hooks.shop.example/fernway", "events": ["order.paid", "refund.succeeded"]},
             response={"id": "whk_51Ba", "secret": "whsec_…", "events": ["order.paid", "refund.succeeded"]},
             errors=[(422, "insecure_url", "The URL does not use HTTPS."),
                     (422, "too_many_subscriptions", "The store already has 20 webhook subscriptions.")],
             rate=("write", 10, 2, "")),
        dict(method="GET", path="/webhooks", title="List webhook subscriptions",
             text="Returns all webhook subscriptions of the store with their delivery statistics for the last 24 hours.",
             params=[("include_disabled", "boolean", "no", "Include subscriptions disabled after repeated delivery failures. Default `true`.")],
             body=None,
             response={"data": [{"id": "whk_51Ba", "url": "https://hooks.shop.example/fernway", "failures_24h": 0}]},
             errors=[(400, "invalid_filter", "A filter value has the wrong type.")],
             rate=("read", 120, 25, "")),
        dict(method="DELETE", path="/webhooks/{webhook_id}", title="Delete a webhook subscription",
             text="Stops deliveries to the subscription immediately. Events already queued are discarded.",
             params=[("webhook_id", "string", "yes", "The subscription id, in the path.")],
             body=None,
             response={"id": "whk_51Ba", "deleted": True},
             errors=[(404, "webhook_not_found", "No subscription exists with the given id.")],
             rate=("write", 40, 6, "")),
    ]),
    ("Discounts", "Discount codes give a fixed amount or a percentage off an order. A code can be limited in time, in number of uses and to particular products.", [
        dict(method="POST", path="/discounts", title="Create a discount code",
             text="Creates a discount code. Codes are case-insensitive and unique within a store.",
             params=[("code", "string", "yes", "The code customers type, 4 to 32 letters and digits."),
                     ("percent_off", "integer", "no", "Percentage off, 1 to 90. Give either `percent_off` or `amount_off`."),
                     ("amount_off", "integer", "no", "Fixed amount off in the smallest currency unit."),
                     ("max_uses", "integer", "no", "Total number of orders that may use the code."),
                     ("expires_at", "timestamp", "no", "When the code stops working.")],
             body={"code": "SPRING15", "percent_off": 15, "max_uses": 500},
             response={"id": "dsc_8Lm", "code": "SPRING15", "percent_off": 15},
             errors=[(409, "code_taken", "A discount with this code already exists."),
                     (422, "conflicting_amounts", "Both `percent_off` and `amount_off` were given.")],
             rate=("write", 50, 5, "")),
        dict(method="POST", path="/discounts/validate", title="Validate a discount code",
             text="Checks whether a code can be applied to a prospective order and returns the discount it would give, without using up the code.",
             params=[("code", "string", "yes", "The code to check."),
                     ("customer_id", "string", "no", "The customer who would use it; needed for once-per-customer codes."),
                     ("line_items", "array", "yes", "The items of the prospective order.")],
             body={"code": "SPRING15", "line_items": [{"product_id": "prd_Lamp01", "quantity": 1}]},
             response={"valid": True, "discount": 374},
             errors=[(404, "code_not_found", "No discount with this code exists."),
                     (422, "code_expired", "The code's expiry time has passed."),
                     (422, "code_exhausted", "The code has reached `max_uses`.")],
             rate=("read", 500, 80, "Validation calls made from a storefront should be debounced so that each keystroke does not trigger a request.")),
    ]),
]

INTRO = f"""# Fernway Commerce API — Reference, version 2

This reference describes version 2 of the Fernway Commerce REST API, which lets a store read and change its orders, customers, catalogue, stock, refunds, shipments, webhooks and discount codes. Every endpoint is described in the same way: what it does, its parameters, an example, the errors it can return and its rate limits.

## Conventions

### Base URL and versioning

All endpoints are relative to `{BASE}`. The version is part of the path. Fields may be added to responses at any time without a new version, so clients must ignore fields they do not know. Removing or renaming a field always comes with a new version, announced at least twelve months ahead.

### Authentication

Requests are authenticated with a secret API key sent as a bearer token: `Authorization: Bearer fw_live_…`. Keys are created per store in the dashboard and can be restricted to read-only access. Test keys start with `fw_test_` and operate on a separate copy of the store's data. A request without a valid key receives `401 unauthenticated`; a read-only key used on a write endpoint receives `403 key_read_only`.

### Requests and responses

Request bodies are JSON and must be sent with `Content-Type: application/json`. Timestamps are ISO 8601 strings in UTC. Money amounts are integers in the smallest unit of the store's currency, so `4990` in a euro store means €49.90. Ids are opaque strings with a type prefix (`ord_`, `cus_`, `prd_`, `ref_`, `shp_`, `whk_`, `dsc_`).

### Pagination

List endpoints return at most `limit` objects and a `next_cursor`. Pass the cursor back as `cursor` to get the next page; a `null` cursor means there are no more pages. Cursors expire after 24 hours.

### Errors

Errors use conventional HTTP status codes and a JSON body with a machine-readable `code`, a human-readable `message` and, where it helps, a `details` object. Codes that every endpoint can return are not repeated in the endpoint sections: `401 unauthenticated`, `403 key_read_only`, `429 rate_limited` and `500 internal_error`. Retry `429` and `5xx` responses with exponential backoff; do not retry `4xx` responses other than `429` without changing the request.

### Rate limiting

Limits are counted per API key in two buckets, one for read requests and one for write requests, over a sliding window of one minute. Each endpoint section states its own limit and the bucket it draws from. A short burst above the per-minute rate is allowed up to the burst size given for the endpoint. When a limit is exceeded the API answers `429 rate_limited` with a `Retry-After` header giving the number of seconds to wait. The current state of the buckets is reported on every response in the headers `Fernway-RateLimit-Remaining` and `Fernway-RateLimit-Reset`.
"""

OUTRO = """## Changelog

### Version 2.4

Added `expand` to Retrieve an order, and the `restock` parameter to Create a refund. The burst size of List products was raised.

### Version 2.3

Added the Discounts resource. Webhook deliveries are now signed with SHA-256 instead of SHA-1; subscriptions created before this version keep SHA-1 until their secret is rotated.

### Version 2.2

Added the `include_disabled` filter to List webhook subscriptions. Customer erasure now also removes the customer from mailing lists.
"""

RATE_TEXT = (
    "Requests to this endpoint draw from the {bucket} bucket. The limit is {n:,} requests per minute per API key, with bursts of up to {b} requests.",
)


def _rate_sentence(bucket: str, n: int, b: int) -> str:
    return RATE_TEXT[0].format(bucket=bucket, n=n, b=b)


def _endpoint(e: dict) -> str:
    out = [f"### {e['title']}", f"`{e['method']} /v2{e['path']}`", e["text"], "#### Parameters",
           "| Name | Type | Required | Description |\n| --- | --- | --- | --- |\n"
           + "\n".join(f"| `{n}` | {t} | {r} | {d} |" for n, t, r, d in e["params"])]
    out.append("#### Example")
    path = e["path"].replace("{order_id}", "ord_7Hc2Qm").replace("{customer_id}", "cus_41Fa9") \
        .replace("{product_id}", "prd_Lamp01").replace("{sku}", "ODA-WHT").replace("{refund_id}", "ref_9kQ2") \
        .replace("{shipment_id}", "shp_3Xy8").replace("{webhook_id}", "whk_51Ba")
    curl = f"curl -X {e['method']} {BASE}{path} \\\n  -H \"Authorization: Bearer $FERNWAY_KEY\""
    if e["body"] is not None:
        curl += " \\\n  -H \"Content-Type: application/json\" \\\n  -d '" + json.dumps(e["body"], ensure_ascii=False) + "'"
    out.append(f"```bash\n{curl}\n```")
    out.append("Response:")
    out.append("```json\n" + json.dumps(e["response"], indent=2, ensure_ascii=False) + "\n```")
    out += ["#### Errors", "| Status | Code | Meaning |\n| --- | --- | --- |\n"
            + "\n".join(f"| {s} | `{c}` | {t} |" for s, c, t in e["errors"])]
    bucket, n, b, extra = e["rate"]
    out += ["#### Rate limits", (_rate_sentence(bucket, n, b) + (" " + extra if extra else ""))]
    return "\n\n".join(out)


def render() -> str:
    front = "---\ntitle: Fernway Commerce API — Reference, version 2\nlang: en\nkind: manual\n---\n"
    parts = [INTRO.rstrip()]
    seen: set[str] = set()
    for name, intro, endpoints in RESOURCES:
        parts.append(f"## {name}\n\n{intro}")
        for e in endpoints:
            r = _rate_sentence(*e["rate"][:3]).split(" bucket. ", 1)[1]
            assert r not in seen, f"rate-limit sentence repeats: {r}"
            seen.add(r)
            parts.append(_endpoint(e))
    parts.append(OUTRO.rstrip())
    return front + "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(__doc__.splitlines()[0], lambda: {OUT: render()}, argv)


if __name__ == "__main__":
    sys.exit(main())
