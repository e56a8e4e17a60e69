"""JSON lines parsed by orjson, with the standard library's verdict where the two differ.

What it is: `fast_json(line)` for the JSONL readers (documents, queries, chunks), which read
a million lines when an index is built or loaded. orjson rejects NaN, Infinity and lone
surrogates, which `json` reads, and turns integers beyond 64 bits into floats; such lines
come back as `NOT_PARSED` so the caller parses them with `json` (and reports its error).

What it is not: a writer; see `ragkit.index_folder` for the chunk rows.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

NOT_PARSED = object()
_LONG_NUMBER, _LONG_NUMBER_TEXT = re.compile(rb"\d{20}"), re.compile(r"\d{20}")


def fast_json(line: bytes | str) -> Any:
    """`line` parsed by orjson, or `NOT_PARSED` where only the standard library's answer will
    do: orjson rejects NaN, Infinity and lone surrogates that `json` reads, and turns integers
    beyond 64 bits into floats (so a run of 20 digits goes to `json`, which keeps them)."""
    long = (_LONG_NUMBER if isinstance(line, bytes) else _LONG_NUMBER_TEXT).search(line)
    if long:
        return NOT_PARSED
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return NOT_PARSED
