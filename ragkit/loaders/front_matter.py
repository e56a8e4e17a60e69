"""The front matter of a Markdown or text file: a `---` (YAML) or `+++` (TOML) block at its top.

What it is: `split_front_matter(raw)` → (the values by key, the text after the block).

`---`: YAML, read by PyYAML's safe loader (libyaml's `CSafeLoader` where PyYAML has it), as
Jekyll, Hugo, Obsidian, Quarto and Pandoc read it: quotes and escapes (`title: "Soil: a
primer"`, `author: 'Ana''s lab'`), `|` and `>` block scalars with their lines, `[a, "b, c"]`
and `- item` lines as lists, and a comment (` #` on) left out, after a value or a list item
(`- EG-400  # old name`) — so `title: Issue #12` is `Issue`, as those tools read it: quote
it. Each value is its text as written, never one of YAML 1.1's types: `draft: no` is `no`
(not False, so a product code `NO` stays `NO`), `version: 2.10` is `2.10` (not 2.1), and
`date: 2024-05-01` is `2024-05-01` (YAML's dates are ISO text already). Why: metadata are
JSON strings and lists of strings, which a context states as written; so the loader's tree
of nodes is read, and its construction of types is not. An empty value is "", an empty
list item is left out; a mapping, or a list holding lists or mappings, is not read (the key
is kept, empty). Control characters, which YAML refuses, are read as spaces.

One tolerance: YAML refuses a `: ` in an unquoted value, yet Markdown folders hold titles
written so (`title: Soil: a primer`, which the hand-written reader before this one read),
and refusing the block would title their documents by file name. So a top-level
`key: value` line that YAML refuses on its own is read as the text after `key: `, up to a
` #` comment, without quotes around it: `Soil: a primer`, `[Draft] Pumps`, `@home`, or
`Soil \\ud800 primer` for `"Soil \\ud800 primer"` (an escape naming no character). Nothing
else is tolerated: a block YAML refuses even so (a list indented by a tab), and one that is
not a mapping of keys (`---` over `FAQ` over `---`: a reStructuredText title), stay text, as
a `+++` block that is not TOML does. A block of blank and comment lines holds no keys.

`+++`: Hugo's TOML front matter, read by `tomllib`: a string, number, boolean or date is a
string (a date in ISO form, `2024-05-01`; a boolean `true`), an array of them a list of
strings. Before, the block was text: the opening of the page's first chunk, and its title
the page's file name.

List items lose control characters, as the loader's string values do: an escape sequence
would be obeyed by the terminal a context is printed on. A `title` is always a string (a
list's items joined with `, `): it labels every chunk.

What it is not: a reader of nested metadata. Of TOML, a table (`[params]`) and an array of
tables or of arrays are not read. A block that is not read is text, not an error line: the
loader has no file name to name in one.
"""
from __future__ import annotations

import datetime
import re
import tomllib

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Value = str | list[str]

# a fence may end in spaces (Jekyll's does), and the closing one the file: unread, the block's
# last line over `---` was an underlined heading (`## title: Guide product: EG-400`). YAML's
# document end `...` closes it too (Pandoc and Jekyll read it so): it was text
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TOML_FRONT = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.S)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, else PyYAML's own
# a top-level `key: value` line's key and `: `; the value is the rest, up to a ` #` comment
_KEY = re.compile(r"[^\s#][^:]*:[ \t]+")
_COMMENT = re.compile(r"[ \t]#")
_HALF_PAIR = re.compile(r"[\ud800-\udfff]")  # a surrogate: half a pair, no character
# every control character but \t \n \f: a loaded document's (`ragkit.document_folder`) too
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f]")
# what YAML refuses in a value (controls, the form feed, U+FFFE) or takes for a line break
# (CR, U+0085, U+2028, U+2029): read as a space, as the loader writes each control character
_NOT_YAML = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")


def split_front_matter(raw: str) -> tuple[dict[str, Value], str]:
    """Split a `---` (YAML) or `+++` (TOML) block off the top of a text file."""
    meta: dict[str, Value] | None = None
    match = _FRONT.match(raw)
    if match:
        meta = yaml_values(match.group(1))
    elif match := _TOML_FRONT.match(raw):
        meta = toml_values(match.group(1))
    if match is None or meta is None:
        return {}, raw
    if isinstance(meta.get("title"), list):
        meta["title"] = ", ".join(meta["title"])
    return meta, raw[match.end():].lstrip("\n")


def yaml_values(block: str) -> dict[str, Value] | None:
    """The top-level values of a `---` block (see the module docstring); None when it is not
    a YAML mapping, even with the `key: value` lines YAML refuses read as text."""
    source = _NOT_YAML.sub(" ", block)
    try:
        node = _composed(source)
    except _Refused:
        tolerated = "\n".join(map(_tolerated, source.split("\n")))
        if tolerated == source:
            return None
        try:
            node = _composed(source := tolerated)
        except _Refused:
            return None
    if node is None:
        return {}  # blank, or comments alone
    if not isinstance(node, MappingNode):
        return None  # a title over- and underlined by `---`, a list: text
    return {key.value: _node_value(value, source) for key, value in node.value
            if isinstance(key, ScalarNode) and key.value}


class _Refused(Exception):
    """A block YAML does not read."""


def _composed(source: str) -> Node | None:
    """The YAML node tree of `source` (None: no document), or `_Refused`. Composed, not
    constructed: a node holds its value as written (see the module docstring). Deep nesting
    is refused by libyaml and overflows PyYAML's own composer: refused too."""
    try:
        return yaml.compose(source, Loader=_LOADER)
    except (yaml.YAMLError, RecursionError):
        raise _Refused from None


def _tolerated(line: str) -> str:
    """`line` with its value in YAML quotes when it is a top-level `key: value` line YAML
    refuses on its own (`title: Soil: a primer`); else as written."""
    key = _KEY.match(line)
    value = line[key.end():] if key else ""
    if comment := _COMMENT.search(value):
        value = value[:comment.start()]
    if not value.strip():
        return line
    try:
        _composed(line)
    except _Refused:
        return key.group() + "'" + _bare(value.strip()).replace("'", "''") + "'"
    return line


def _node_value(node: Node, source: str) -> Value:
    """A value as text (a list of them for a list of text); "" for what is not read."""
    if isinstance(node, ScalarNode):
        return _text(node, source)
    if isinstance(node, SequenceNode) and all(isinstance(n, ScalarNode) for n in node.value):
        return [_clean(_text(n, source)) for n in node.value if n.value or n.style]  # `- `
    return ""


def _text(node: ScalarNode, source: str) -> str:
    """A scalar's value; as written, its quotes off, where PyYAML's own reader read an escape
    into half a surrogate pair (`"\\ud800"`: no character, which no UTF-8 file can hold;
    libyaml refuses it, and the line is read as written)."""
    if not _HALF_PAIR.search(node.value):
        return node.value
    return _bare(source[node.start_mark.index:node.end_mark.index])


def _bare(value: str) -> str:
    """`value` without the quotes around it (`"a \\q"`, an escape YAML has not), if any."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def toml_values(block: str) -> dict[str, Value] | None:
    """The top-level values of a `+++` block (see the module docstring); None when it is not
    TOML."""
    try:
        data = tomllib.loads(block)
    except tomllib.TOMLDecodeError:
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
