"""The offline stand-in for the Anthropic Messages API: a documented program, not a model.

What it is: `respond(path, request)` is a pure function from a request body (the JSON the
Anthropic SDK sends) to a status code and a reply body (the JSON the API would return). It
is served two ways, so callers never change code between online and offline runs:
- in process: `transport()` wraps it in an `httpx2.MockTransport` for
  `anthropic.Anthropic(http_client=httpx2.Client(transport=...))`, so every request and reply
  goes through the SDK's own serialization, validation and parsing;
- over a loopback socket: `serve()` runs it on `http://127.0.0.1:PORT` for
  `ANTHROPIC_BASE_URL`, to check that a command works exactly as against the real API.

What it answers: each kind of request is recognised by one *rule*, a function in its own
module of this package that looks at the request and returns the reply's content blocks (or
None: not mine). `RULES` lists them in order; the first that answers wins.
- `agent.py` (tried first: only requests with `tools`, which no other rule's callers send):
  the next step of a fixed program — an aggregation question over the reports → one
  `reports_sql` query from a template (`agent_sql.py`); a question in ordinary language →
  one `docs_search`; a code question → the agentic-RAG notes' grep/glob → read → callers
  walk-through; a note asked for → one `notes_save` — then an answer citing what the tools
  returned (`agent_state.py` reads the request, `agent_answer.py` writes the answer).
- `rerank.py` (tried first: its passages may quote anything): RankGPT's listwise-ranking
  conversation → a permutation by query-term overlap.
- `contextualize.py`: a `<document>…</document>` and a `<chunk>…</chunk>` in the user turn
  (Anthropic's contextual-retrieval prompt) → the chunk's structural context.
- `crag.py`: the CRAG and Self-RAG judge prompts (`[ragkit judge: crag_relevance v1]`,
  `selfrag_*`) → labels by word overlap; a `<documents>` long-context prompt → an extractive
  answer over the documents' sentences.
- `answer.py`: `search_result` blocks and a question, no tools → an extractive answer
  quoting the best-supported sentences with `search_result_location` citations, or
  "I don't know" when the support is below its threshold.
- no rule matches: the fixed text `NO_RULE`, stop reason `end_turn`.
- `POST /v1/messages/count_tokens`: `{"input_tokens": estimate}`.
- `"stream": true` (`client.messages.stream`): the same reply as server-sent events, built
  generically from it by `sse.py`, so every rule streams.
- a request without `model`, `max_tokens` or `messages`, a model not in
  `ragkit.pricing.PRICES`, or a body that is not JSON: the API's error JSON (400 / 404).

Usage is an estimate, and says so: `estimate_tokens` counts one token per 4 UTF-8 bytes
(rounded up) of every text in `system`, `messages` and `tools` — the usual rule of thumb for
English; real tokenizers give more for code and Korean. Cache counters are always 0 (a pure
function keeps no cache). Reply ids start with `STANDIN_ID_PREFIX`, which is how
`ragkit.llm` knows a reply costs nothing, even when the stand-in is reached over a socket.
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from ragkit.pricing import PRICES
from ragkit.standin import sse

NAME = "offline stand-in"
STANDIN_ID_PREFIX = "msg_offline_standin_"
NO_RULE = "The offline stand-in has no rule for this request."

Handler = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


def estimate_tokens(text: str) -> int:
    """One token per 4 UTF-8 bytes, rounded up (0 for empty text)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def _texts(value: Any) -> Iterator[str]:
    """Every text in a request part: strings, `text` fields, nested `content`, tool specs."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        if "content" in value:
            yield from _texts(value["content"])
        for key in ("name", "description", "input_schema"):  # tool definitions
            if key in value:
                yield value[key] if isinstance(value[key], str) else json.dumps(value[key])


def request_tokens(request: dict[str, Any]) -> int:
    """The estimated input tokens of a request (system, messages and tools)."""
    parts = [request.get("system", ""), request.get("messages", []), request.get("tools", [])]
    return sum(estimate_tokens(text) for part in parts for text in _texts(part))


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": message}}


Rule = Callable[[dict[str, Any]], "Reply | None"]


@dataclass(frozen=True)
class Reply:
    """What a rule answers: the reply's content blocks and its stop reason."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"

    @classmethod
    def text(cls, text: str) -> "Reply":
        return cls([{"type": "text", "text": text}])


def user_text(request: dict[str, Any]) -> str:
    """Every text of the request's user turns, joined by newlines (tool results included)."""
    return "\n".join(_texts([m for m in request["messages"] if m.get("role") == "user"]))


def _answer(request: dict[str, Any]) -> Reply:
    from ragkit.standin.rules import RULES
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
