"""The stand-in as the Messages API: `respond` (a pure function), `transport`, `serve`.

What it is: `respond(path, request)` checks a request body as the API does, asks the rules
(`ragkit.standin.rules`, first match answers) for the reply's content, and wraps it in the
API's reply JSON with estimated usage; `transport()` serves it in process to the Anthropic
SDK through an `httpx2.MockTransport`, `serve()` on a loopback socket for
`ANTHROPIC_BASE_URL`. Streaming (`"stream": true`) comes from `ragkit.standin.sse`, the
Message Batches endpoints (in process) from `ragkit.standin.batches`. The
package docstring (`ragkit.standin`) says what each request gets.
What it is not: a model, nor a cache (a pure function keeps nothing between requests).
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from ragkit.pricing import PRICES
from ragkit.standin import batches, sse
from ragkit.standin.base import NO_RULE, STANDIN_ID_PREFIX, Reply
from ragkit.standin.rules import RULES
from ragkit.text_stats import estimate_tokens, request_tokens

Handler = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": message}}


def _answer(request: dict[str, Any]) -> Reply:
    for rule in RULES:
        reply = rule(request)
        if reply is not None:
            return reply
    return Reply.text(NO_RULE)


def respond(path: str, request: Any) -> tuple[int, dict[str, Any]]:
    """The stand-in's (status, reply JSON) for a request body sent to `path`."""
    if not isinstance(request, dict):
        return _error(400, "invalid_request_error", "request body is not a JSON object")
    model = request.get("model")
    if not model:
        return _error(400, "invalid_request_error", "model: Field required")
    if model not in PRICES:
        return _error(404, "not_found_error", f"model: {model}")
    if not request.get("messages"):
        return _error(400, "invalid_request_error", "messages: Field required")
    tokens = request_tokens(request)
    if path.rstrip("/").endswith("/v1/messages/count_tokens"):
        return 200, {"input_tokens": tokens}
    if not path.rstrip("/").endswith("/v1/messages"):
        return _error(404, "not_found_error", f"no such endpoint: {path}")
    if not isinstance(request.get("max_tokens"), int):
        return _error(400, "invalid_request_error", "max_tokens: Field required")
    reply = _answer(request)
    content, stop = reply.content, reply.stop_reason
    out_tokens = estimate_tokens(json.dumps(content, ensure_ascii=False)
                                 if any(b["type"] != "text" for b in content)
                                 else "".join(b["text"] for b in content))
    if out_tokens > request["max_tokens"] and len(content) == 1 and content[0]["type"] == "text":
        content = [{"type": "text", "text": content[0]["text"][:4 * request["max_tokens"]]}]
        stop, out_tokens = "max_tokens", request["max_tokens"]
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:24]
    return 200, {"id": STANDIN_ID_PREFIX + digest, "type": "message", "role": "assistant",
                 "model": model, "content": content,
                 "stop_reason": stop, "stop_sequence": None,
                 "usage": {"input_tokens": tokens, "output_tokens": out_tokens,
                           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError:
        return None


def httpx_handler(handler: Handler = respond) -> Callable[[httpx2.Request], httpx2.Response]:
    """An httpx2 request handler around `handler` (a `respond`-like function); a request
    with `"stream": true` gets the reply as server-sent events (`ragkit.standin.sse`)."""
    def handle(request: httpx2.Request) -> httpx2.Response:
        path, body = request.url.path, _parse(request.read())
        base = f"{request.url.scheme}://{request.url.netloc.decode()}"
        batch = batches.handle(request.method, path, body, base, handler)
        if batch is not None:
            status, answer = batch
            return (httpx2.Response(status, content=answer) if isinstance(answer, bytes)
                    else httpx2.Response(status, json=answer))
        status, reply = handler(path, body)
        if sse.wants_stream(path, status, body):
            return httpx2.Response(status, content=sse.encode(reply),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(status, json=reply)
    return handle


def transport(handler: Handler = respond) -> httpx2.MockTransport:
    """An in-process httpx2 transport that answers with `handler` (default: the stand-in)."""
    return httpx2.MockTransport(httpx_handler(handler))


@contextmanager
def serve(handler: Handler = respond) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 at a free port; yields the base URL, stops on exit."""
    class _Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("content-length") or 0)
            path, request = self.path.split("?")[0], _parse(self.rfile.read(length))
            status, body = handler(path, request)
            if sse.wants_stream(path, status, request):
                self._stream(status, body)
                return
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, status: int, reply: dict[str, Any]) -> None:
            """Events one by one, flushed; the body ends when the connection closes."""
            self.send_response(status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in sse.events(reply):
                self.wfile.write(sse.frame(name, data))
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
