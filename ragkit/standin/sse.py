"""Any stand-in reply as the Messages API's stream of server-sent events.

What it is: `events(reply)` turns one reply JSON (what `respond` returns for a request) into
the event sequence `client.messages.stream(...)` (and `create(stream=True)`) expects:
`message_start` (the message with empty content and the input usage), `ping`, then per
content block `content_block_start` (the block emptied), its deltas, `content_block_stop`;
then `message_delta` (stop reason and the cumulative usage) and `message_stop`. `encode`
writes them as `event: NAME` / `data: JSON` frames. Because the conversion is generic,
every stand-in rule streams without knowing it.

Deltas per block type: `text` → one `citations_delta` per citation, then `text_delta`s of
one word each (with the white space after it, so the pieces join to the exact text);
`tool_use` → `input_json_delta` with the input JSON in pieces; `thinking` →
`thinking_delta` and `signature_delta`; any other block is sent whole in its start event.
Accumulated by the SDK, the events give back the same content, stop reason and usage.

What it is not: timed. All events are produced at once; a socket server may flush them one
by one (`serve()` does), the in-process transport hands them over as one body.
Event shapes: the SDK's `RawMessageStreamEvent` types (anthropic 2.14.0,
`types/raw_*_event.py`) and `lib/streaming/_messages.py::accumulate_event`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

Event = tuple[str, dict[str, Any]]
_WORD = re.compile(r"\S+\s*|\s+")
JSON_PIECE = 24  # characters of tool input JSON per input_json_delta


def _text_deltas(text: str) -> Iterator[dict[str, Any]]:
    for piece in _WORD.findall(text):
        yield {"type": "text_delta", "text": piece}


def _block_events(index: int, block: dict[str, Any]) -> Iterator[Event]:
    kind = block.get("type")
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
        deltas += list(_text_deltas(block.get("text", "")))
    elif kind == "tool_use":
        start = {**block, "input": {}}
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": raw[i:i + JSON_PIECE]}
                  for i in range(0, len(raw), JSON_PIECE)]
    elif kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")},
                  {"type": "signature_delta", "signature": block.get("signature", "")}]
    else:
        start, deltas = block, []
    yield "content_block_start", {"type": "content_block_start", "index": index,
                                  "content_block": start}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def events(reply: dict[str, Any]) -> list[Event]:
    """The (event name, data) sequence that streams `reply`, a Messages API reply JSON."""
    usage = dict(reply.get("usage") or {})
    opening = {**reply, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {**usage, "output_tokens": 0}}
    out: list[Event] = [("message_start", {"type": "message_start", "message": opening}),
                        ("ping", {"type": "ping"})]
    for index, block in enumerate(reply.get("content") or []):
        out.extend(_block_events(index, block))
    out.append(("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": reply.get("stop_reason"),
                  "stop_sequence": reply.get("stop_sequence")},
        "usage": usage}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def frame(name: str, data: dict[str, Any]) -> bytes:
    """One server-sent event: `event:` and `data:` lines and a blank line."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def encode(reply: dict[str, Any]) -> bytes:
    """The whole event stream of `reply` as bytes (for an in-process transport)."""
    return b"".join(frame(name, data) for name, data in events(reply))


def wants_stream(path: str, status: int, request: Any) -> bool:
    """True when a reply should go out as events: a successful `/v1/messages` call that
    asked for `"stream": true` (errors stay plain JSON with their status, as the API's
    request validation errors do)."""
    return (status == 200 and isinstance(request, dict) and request.get("stream") is True
            and path.rstrip("/").endswith("/v1/messages"))
