"""JSON lines parsed by orjson, with the standard library's verdict where the two differ.

What it is: `fast_json(line)` for the JSONL readers (documents, queries, chunks), which read
a million lines when an index is built or loaded. orjson rejects NaN, Infinity and lone
surrogates, which `json` reads, and turns integers beyond 64 bits into floats; such lines
come back as `NOT_PARSED` so the caller parses them with `json` (and reports its error).
`surrogate_field(line, obj)` names the top-level field of such a line that holds a lone
surrogate, which no file can store: the caller refuses the line rather than fail at a write.

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
    # Walking the parsed object is cheaper than any scan of the line's text: a regular
    # expression looking for fractions, exponents or 20-digit runs cost 5 µs a chunk row,
    # the walk 3 µs (200k rows of a 1M-chunk index).
    try:
        return NOT_PARSED if _has_float(obj) else obj
    except RecursionError:  # orjson reads 1,024 levels, past Python's stack: `json` decides
        return NOT_PARSED


def _has_float(obj: Any) -> bool:
    kind = type(obj)
    if kind is float:
        return True
    if kind is dict:
        return any(map(_has_float, obj.values()))
    if kind is list:
        return any(map(_has_float, obj))
    return False


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_field(line: bytes, obj: Any) -> str | None:
    """The key (backslash-escaped, printable) of the first top-level field of `obj`, parsed
    from `line` by `json`, whose key or value holds a lone surrogate; None for none. Only a
    line with a `\\ud800`-`\\udfff` escape is walked (a pair decodes to one character)."""
    if not isinstance(obj, dict) or not _SURROGATE_ESCAPE.search(line):
        return None
    for key, value in obj.items():
        todo = [key, value]
        while todo:
            item = todo.pop()
            if isinstance(item, str) and _SURROGATE.search(item):
                return key.encode("utf-8", "backslashreplace").decode("utf-8")
            if isinstance(item, dict):
                todo.extend([*item.keys(), *item.values()])
            elif isinstance(item, list):
                todo.extend(item)
    return None
