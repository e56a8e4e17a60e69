"""The stand-in as the Message Batches API: a batch answered at once, by the same rules.

What it is: `handle(method, path, body, base)` answers
- `POST /v1/messages/batches` `{"requests": [{"custom_id", "params"}]}`: checks what the
  API checks (1 to 100,000 requests, each `custom_id` matching `^[a-zA-Z0-9_-]{1,64}$` and
  unique, `params` an object), keeps the requests, and returns the batch already `ended`
  (a program needs no queue) with its request counts and a `results_url`;
- `GET /v1/messages/batches/{id}`: that batch object again, or 404 for an unknown id;
- `GET /v1/messages/batches`: the list of this process's batches, newest first, one page;
- `GET /v1/messages/batches/{id}/results`: JSONL, one line per request, in reverse order
  (the API promises no order, so callers must match by `custom_id`), each `succeeded` with
  the reply `respond` gives the same body interactively, or `errored` with its error.
Batches live in this process's memory: a new process does not know an old batch id (404),
as the API forgets a batch after 29 days — callers then submit its requests again.

What it is not: the API's timing (no `in_progress` phase) nor its prices (usage is the
stand-in's estimate and ids carry `STANDIN_ID_PREFIX`, so nothing is priced).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from ragkit.standin.base import STANDIN_ID_PREFIX

Respond = Callable[[str, Any], tuple[int, dict[str, Any]]]  # `ragkit.standin.api.respond`

_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_BATCHES: dict[str, list[dict[str, Any]]] = {}
_LOCK = threading.Lock()
PREFIX = "/v1/messages/batches"


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": message}}


def _check(body: Any) -> str | None:
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not 1 <= len(requests) <= 100_000:
        return "requests: a list of 1 to 100,000 requests is required"
    seen: set[str] = set()
    for n, item in enumerate(requests):
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str) or not _ID.match(custom_id):
            return f"requests.{n}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$"
        if custom_id in seen:
            return f"requests.{n}.custom_id: duplicate custom_id '{custom_id}'"
        if not isinstance(item.get("params"), dict):
            return f"requests.{n}.params: Field required"
        seen.add(custom_id)
    return None


def _results(requests: list[dict[str, Any]], respond: Respond) -> list[dict[str, Any]]:
    """Each request's interactive answer as a batch result line, in reverse order."""
    lines = []
    for item in reversed(requests):
        status, reply = respond("/v1/messages", item["params"])
        result = ({"type": "succeeded", "message": reply} if status == 200
                  else {"type": "errored", "error": reply})
        lines.append({"custom_id": item["custom_id"], "result": result})
    return lines


def _batch(batch_id: str, base: str) -> dict[str, Any]:
    results = _BATCHES[batch_id]
    ok = sum(line["result"]["type"] == "succeeded" for line in results)
    return {"id": batch_id, "type": "message_batch", "processing_status": "ended",
            "request_counts": {"processing": 0, "succeeded": ok, "errored": len(results) - ok,
                               "canceled": 0, "expired": 0},
            "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T00:00:00Z", "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base}{PREFIX}/{batch_id}/results"}


def handle(method: str, path: str, body: Any, base: str, respond: Respond
           ) -> tuple[int, dict[str, Any] | bytes] | None:
    """The stand-in's answer to a Message Batches request, or None for another endpoint;
    `respond` answers each request of a batch (the batch's results are made when it is
    created). A bytes answer is the JSONL results file."""
    path = path.rstrip("/")
    if not path.startswith(PREFIX):
        return None
    rest = path[len(PREFIX):].strip("/").split("/")
    if method == "POST" and rest == [""]:
        complaint = _check(body)
        if complaint:
            return _error(400, "invalid_request_error", complaint)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
        batch_id = f"msgbatch_{STANDIN_ID_PREFIX.split('_', 1)[1]}{digest}"
        with _LOCK:
            _BATCHES[batch_id] = _results(body["requests"], respond)
        return 200, _batch(batch_id, base)
    if method == "GET" and rest == [""]:  # the list: this process's batches, newest first
        listed = [_batch(batch_id, base) for batch_id in reversed(list(_BATCHES))]
        return 200, {"data": listed, "has_more": False,
                     "first_id": listed[0]["id"] if listed else None,
                     "last_id": listed[-1]["id"] if listed else None}
    if method == "GET" and rest[0] in _BATCHES and len(rest) <= 2:
        if len(rest) == 2 and rest[1] == "results":
            return 200, b"".join(json.dumps(line).encode() + b"\n"
                                 for line in _BATCHES[rest[0]])
        if len(rest) == 1:
            return 200, _batch(rest[0], base)
    return _error(404, "not_found_error", f"no such batch: {'/'.join(rest)}")
