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


def fast_json(line: bytes | str) -> Any:
    """`line` parsed by orjson, or `NOT_PARSED` where only the standard library's answer will
    do: orjson rejects NaN, Infinity and lone surrogates that `json` reads, and turns integers
    beyond 64 bits into floats, so a line holding any float is parsed again by `json` too
    (which keeps such integers whole)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return NOT_PARSED
    if not (_MAYBE_FLOAT_BYTES if isinstance(line, bytes) else _MAYBE_FLOAT).search(line):
        return obj  # no fraction, exponent or 20-digit run: no float anywhere in the line
    return NOT_PARSED if _has_float(obj) else obj


# A JSON float is digits then a fraction or an exponent (a digit followed by '.', 'e' or
# 'E'), and orjson makes a float of an integer of 20 digits or more; a line with neither
# has no float. A match may be inside a string: then the object is walked.
_MAYBE_FLOAT = re.compile(r"[0-9](?:[.eE]|[0-9]{19})")
_MAYBE_FLOAT_BYTES = re.compile(rb"[0-9](?:[.eE]|[0-9]{19})")


def _has_float(obj: Any) -> bool:
    kind = type(obj)
    if kind is float:
        return True
    if kind is dict:
        return any(map(_has_float, obj.values()))
    if kind is list:
        return any(map(_has_float, obj))
    return False
