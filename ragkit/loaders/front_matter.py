"""The front matter of a Markdown or text file: `---`-fenced `key: value` lines at its top.

What it is: `split_front_matter(raw)` → (the values by key, the text after the block). A
value in YAML quotes is read as YAML reads it, without them: `title: "Soil: a primer"`
(double quotes, backslash escapes) or `author: 'Ana''s lab'` (single quotes, `''` for `'`);
a double-quoted value with an escape JSON does not read (`\\x41`) or one naming no character
(`\\ud800`, half a surrogate pair, which no UTF-8 file can hold) loses its quotes alone.
Jekyll, Hugo, Obsidian and Quarto quote every title that holds `: ` or ` #`; kept, the
quotes were part of the title in every citation, context and `[Source | Section]` tag.

What it is not: a YAML parser. A list or a multi-line value under a key is not read (the
key is kept, empty), a comment after a value stays in it, and TOML front matter (`+++`,
Hugo's other form) is text.
"""
from __future__ import annotations

import json
import re

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def split_front_matter(raw: str) -> tuple[dict[str, str], str]:
    """Split a `---`-fenced block of `key: value` lines off the top of a text file."""
    match = _FRONT.match(raw)
    if not match:
        return {}, raw
    meta = {}
    for entry in match.group(1).splitlines():
        key, sep, value = entry.partition(":")
        if sep and key.strip():
            meta[key.strip()] = unquoted(value.strip())
    return meta, raw[match.end():].lstrip("\n")


def unquoted(value: str) -> str:
    """`value` without the YAML quotes around it, its escapes read; else as written."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            text = json.loads(value)  # JSON's escapes (\" \\ \n \t \uXXXX) are YAML's too
            str(text).encode("utf-8")  # "\ud800", half a pair: no character (nor in YAML)
        except ValueError:  # an escape JSON lacks (YAML's \e, \x41): the quotes alone go
            return value[1:-1]
        return text if isinstance(text, str) else value[1:-1]
    return value
