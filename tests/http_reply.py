"""The JSON reply a loopback test server sends (tests import `send_json`)."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


def send_json(handler: BaseHTTPRequestHandler, status: int, body: object) -> None:
    """Answer `handler`'s request with `status` and `body` as JSON (bytes: sent as they are)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
