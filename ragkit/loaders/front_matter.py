"""The front matter of a Markdown or text file: a `---` (YAML) or `+++` (TOML) block at its top.

What it is: `split_front_matter(raw)` → (the values by key, the text after the block).

`---`: `key: value` lines. A value in YAML quotes is read as YAML reads it, without them:
`title: "Soil: a primer"` (double quotes, backslash escapes) or `author: 'Ana''s lab'`
(single quotes, `''` for `'`); a double-quoted value with an escape JSON does not read
(`\\x41`) or one naming no character (`\\ud800`, half a surrogate pair, which no UTF-8 file
can hold) loses its quotes alone. Jekyll, Hugo, Obsidian and Quarto quote every title that
holds `: ` or ` #`; kept, the quotes were part of the title in every citation, context and
`[Source | Section]` tag. A list — `tags: [a, "b, c"]`, or `- item` lines under the key —
is a list of strings (before: the first was the text `[a, "b, c"]`, the second empty, and
its items holding `: ` keys of their own). A block without a `key:` line (`---` over `FAQ`
over `---`: a reStructuredText title) is text, not front matter: it was dropped, and the
document titled by its next heading.

`+++`: Hugo's TOML front matter, read by `tomllib`: a string, number, boolean or date is a
string (a date in ISO form, `2024-05-01`; a boolean `true`), an array of them a list of
strings. Before, the block was text: the opening of the page's first chunk, and its title
the page's file name.

List items lose control characters, as the loader's string values do: an escape sequence
would be obeyed by the terminal a context is printed on. A `title` is always a string (a
list's items joined with `, `): it labels every chunk.

A `|` (literal) or `>` (folded) block scalar is its more-indented lines as YAML reads them
(before: the value `|`, its lines lost); written on one line where a value is (a context, a
title: `ragkit.outline.one_line`).

What it is not: a YAML parser. A nested mapping's `key: value` lines are read as top-level
keys; a list of mappings or a plain value over several lines is not read (the key is kept,
empty); a comment after a value stays in it. Lenient on purpose: Markdown folders hold
front matter YAML refuses (`title: Soil: a primer`, `title:Guide`, a list indented by a
tab), and a strict reader turned such a block into the first chunk's text. Of TOML, a
table (`[params]`) and an array of tables or of arrays are not read, and a `+++` block that
is not TOML stays text, as before (the loader has no file name to name in an error line).
"""
from __future__ import annotations

import datetime
import json
import re
import tomllib

Value = str | list[str]

# a fence may end in spaces (Jekyll's does), and the closing one the file: unread, the block's
# last line over `---` was an underlined heading (`## title: Guide product: EG-400`). YAML's
# document end `...` closes it too (Pandoc and Jekyll read it so): it was text
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TOML_FRONT = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.S)
_ITEM = re.compile(r"([ \t]*)-(?:[ \t]+(.*?))?[ \t]*\Z")  # one `- item` line of a block list
_INDENT = re.compile(r"[ \t]*")
_BLOCK = re.compile(r"[|>](?:[1-9]?[+-]?|[+-][1-9])\Z")  # a block scalar's header: `|`, `>-`
# one item of a flow list: quoted, or plain (no quote, bracket, brace or comma), then `,` or end
_FLOW_ITEM = re.compile(r"""[ \t]*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,"'\[\]{}#][^,\[\]{}]*?)"""
                        r"[ \t]*(?:,|\Z)")
# a line of a `---` block that is neither blank nor a comment: a block of such lines without
# one `key:` is no front matter (`---` / `FAQ` / `---`, a title)
_KEYLESS = re.compile(r"^[ \t]*[^\s#]", re.M)
# every control character but \t \n \f: a loaded document's (`ragkit.document_folder`) too
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f]")


def split_front_matter(raw: str) -> tuple[dict[str, Value], str]:
    """Split a `---` (YAML) or `+++` (TOML) block off the top of a text file."""
    meta: dict[str, Value] | None = None
    match = _FRONT.match(raw)
    if match:
        meta = yaml_values(match.group(1))
        if not meta and _KEYLESS.search(match.group(1)):
            meta = None  # a reStructuredText title over- and underlined by `---`: text
    elif match := _TOML_FRONT.match(raw):
        meta = toml_values(match.group(1))
    if match is None or meta is None:
        return {}, raw
    if isinstance(meta.get("title"), list):
        meta["title"] = ", ".join(meta["title"])
    return meta, raw[match.end():].lstrip("\n")


def yaml_values(block: str) -> dict[str, Value]:
    """The `key: value` lines of a `---` block (see the module docstring)."""
    meta: dict[str, Value] = {}
    key = ""  # the last key without a value of its own: `- item` lines may follow it
    key_indent, dash_indent, items = 0, -1, []  # items None: a list not read
    scalar: list[str] | None = None  # the lines of a `|` / `>` block scalar under `key`
    for entry in block.splitlines():
        indent = _INDENT.match(entry).end()
        if scalar is not None:
            if not entry.strip() or indent > key_indent:
                scalar.append(entry)
                continue
            meta[key], scalar, key = block_scalar(style, scalar), None, ""
        item = _ITEM.match(entry)
        if key and item and indent >= key_indent and dash_indent in (-1, indent):
            dash_indent = indent
            value = item.group(2) or ""
            if items is not None and value and not value.startswith("#"):  # not null
                if _not_scalar(value):
                    items = None
                else:
                    items.append(_clean(unquoted(value)))
            continue
        if key and dash_indent >= 0 and (not entry.strip() or entry.lstrip()[:1] == "#"):
            continue  # a blank or comment line inside the list
        if key and dash_indent >= 0 and indent > dash_indent:
            items = None  # an item on more than one line, or a mapping: not read
            continue
        if key and dash_indent >= 0:
            meta[key] = items if items is not None else ""
        key = ""
        name, sep, value = entry.partition(":")
        if sep and name.strip():
            value = value.strip()
            if _BLOCK.match(value):
                key, key_indent, scalar, style = name.strip(), indent, [], value
                continue
            flow = flow_list(value) if value.startswith("[") and value.endswith("]") else None
            meta[name.strip()] = unquoted(value) if flow is None else flow
            if not value:
                key, key_indent, dash_indent, items = name.strip(), indent, -1, []
    if scalar is not None:
        meta[key] = block_scalar(style, scalar)
    elif key and dash_indent >= 0:
        meta[key] = items if items is not None else ""
    return meta


def block_scalar(header: str, lines: list[str]) -> str:
    """A `|` (literal: its lines) or `>` (folded: a paragraph's lines joined by spaces, a
    blank line a line break) block scalar's more-indented `lines`, as YAML reads them: the
    common indent off, one final newline (none after `|-` / `>-`)."""
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return ""
    cut = min(_INDENT.match(line).end() for line in lines if line.strip())
    lines = [line[cut:] for line in lines]
    text = "\n".join(lines)
    if header.startswith(">"):
        text = "\n".join(" ".join(part.split("\n")) for part in re.split(r"\n[ \t]*\n", text))
    return _clean(text) + ("" if "-" in header else "\n")


def _not_scalar(value: str) -> bool:
    """True for a list item YAML reads as no plain string: a mapping (`name: x`), a nested
    list or mapping, a block scalar (`|`, `>`), an anchor, alias or tag."""
    if value[:1] in ("'", '"'):
        return False
    return (": " in value or value.endswith(":") or value == "-" or value.startswith("- ")
            or value[:1] in ("[", "{", "|", ">", "&", "*", "!", "?"))


def flow_list(value: str) -> list[str] | None:
    """`[a, "b, c", 'd']` as its strings; None when it holds more than plain or quoted
    strings (a nested list, a mapping, an empty item)."""
    inner, items, at = value[1:-1].strip(), [], 0
    while at < len(inner):
        match = _FLOW_ITEM.match(inner, at)
        if not match or ": " in match.group(1):
            return None
        items.append(_clean(unquoted(match.group(1).strip())))
        at = match.end()
    return items


def toml_values(block: str) -> dict[str, Value] | None:
    """The top-level values of a `+++` block (see the module docstring); None when it is not
    TOML, or nests deeper than Python's stack (`a = [[[…]]]` 500 deep, 1 KB, stopped
    `ragkit index` with a RecursionError traceback, `--skip-bad` or not)."""
    try:
        data = tomllib.loads(block)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    meta: dict[str, Value] = {}
    for key, value in data.items():
        if isinstance(value, list):
            if not any(isinstance(item, (list, dict)) for item in value):
                meta[key] = [_clean(_toml_text(item)) for item in value]
        elif not isinstance(value, dict):
            meta[key] = _toml_text(value)
    return meta


def _toml_text(value: object) -> str:
    """A TOML scalar as text: a boolean as TOML writes it, a date in ISO form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def _clean(text: str) -> str:
    """`text` with each control character but tab, newline and form feed a space (see the
    module docstring)."""
    return UNPRINTABLE.sub(" ", text)


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
