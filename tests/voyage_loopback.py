"""A loopback Voyage API for the embedder and reranker tests: the real SDK talks to it."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tenacity
import voyageai.client
from http_reply import send_json

KEY = "pa-test-key-not-secret"


class Loopback(BaseHTTPRequestHandler):
    """Records each request; replies with queued (status, body) pairs, then `default(body)`."""

    def default(self, body: dict) -> dict:
        raise NotImplementedError

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        server.requests.append((self.path, body, self.headers.get("Authorization")))
        status, reply = server.queue.pop(0) if server.queue else (200, None)
        if reply is None:
            reply = self.default(body)
        send_json(self, status, reply)

    def log_message(self, *args) -> None:
        pass


def serve(handler: type[Loopback], monkeypatch, tmp_path, **attributes):
    """Serve `handler` on 127.0.0.1; VOYAGE_* variables point the SDK at it; retries do not
    sleep. Yields the server (its `requests` and `queue`, plus `attributes`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requests, server.queue = [], []
    for name, value in attributes.items():
        setattr(server, name, value)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    monkeypatch.setenv("VOYAGE_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(voyageai.client, "wait_exponential_jitter",
                        lambda **_: tenacity.wait_none())
    yield server
    server.shutdown()
    server.server_close()
