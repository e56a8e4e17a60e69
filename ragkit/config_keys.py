"""Where a line of a configuration file sits: the keys or the table that enclose it.

What it is: `is_config_name(name)` — a YAML, TOML or JSON file, by its suffix — and
`key_path(name, text, offset)`, the labels in force at `offset`: for YAML and pretty-printed
JSON the keys above it that open a nested block, by indentation ("database" for
"  pool_size: 25" under "database:"; "spec > containers" under a Kubernetes file's two), for
TOML the `[table]` header in force ("tool.pytest.ini_options"). The chunker gives them to a
configuration file's chunks as their section (`ragkit.chunking.section_of`) and the structural
contextualizer states them ("In: database."). Before, such a file was read as prose: a YAML
comment ("# Owned by the platform team") was a Markdown heading and the section of every chunk
below it, and its `key: value` lines were run together into one sentence.

What it is not: a parser. Nothing is validated, and a file that does not parse (a template
holding `{{ }}`) still gets its sections; a block scalar's lines (under "init: |") are text,
never keys, but a flow mapping on one line (`a: {b: 1}`) opens nothing, an alias merged in
(`<<: *db`) brings no keys, a TOML multi-line string's `[x]` line reads as a table, and a
minified JSON file has no sections. PyYAML and tomllib were not used: they give values, not
the offsets a chunk needs.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePosixPath

CONFIG_SUFFIXES = frozenset({".json", ".yaml", ".yml", ".toml"})
LINE_READ = 4096  # characters read back to a line's start: bounded work per chunk
DEPTH = 8  # innermost labels kept: a section is a label, not the whole nesting
# Deeper keys passed over on the way up from a line to the keys enclosing it: a line under
# more than this many deeper keys (a nest no real file has) gets no section, where every
# chunk after a nest 10,000 deep walked all of it.
PASSED = 64
# A TOML table header, "[tool.ruff]", "[[servers]]", '[servers."beta.eu"]', with an optional
# comment: dotted bare or quoted keys, so an array's row ('["10.0.0.0", "10.0.0.255"]') is
# none. Possessive throughout: a line is read once, whatever runs of spaces it holds.
_TOML_KEY = r"""(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')"""
_TABLE = re.compile(rf"^[ \t]*+\[\[?+[ \t]*+({_TOML_KEY}(?:[ \t]*+\.[ \t]*+{_TOML_KEY})*+)"
                    rf"[ \t]*+\]\]?+[ \t]*+(?:#[^\n]*+)?\r?$", re.M)
# A YAML or JSON key opening a nested block: "database:", "- spec:", '"servers": [', a key
# with an anchor or a tag ("db: &db", "cache: !!map") or a block scalar ("init: |"): a key
# with a value on its own line ("port: 8443") opens nothing.
_INDENT = re.compile(r"[ \t]*+(?:-[ \t]++)?+")
_BLOCK_KEY = re.compile(r"""^([ \t]*+(?:-[ \t]++)?+)("[^"\n]*+"|'[^'\n]*+'|[^\s#:"'\[\]{},-]"""
                        r"""[^:#\n]*+):(?:[ \t]++[&!][^\s#]*+)*+[ \t]*+(?:([|>][-+0-9]*+)|"""
                        r"""[\[{])?+[ \t]*+(?:#[^\n]*+)?\r?$""", re.M)


@lru_cache(maxsize=64)
def _scalar_body(indent: int) -> re.Pattern:
    """The lines of a block scalar under a key at `indent`: blank, or indented further."""
    return re.compile(rf"(?:\r?\n(?:[ \t]*+(?=\r?\n|\Z)| {{{indent + 1},}}[^\n]*+))*+")


def is_config_name(name: str) -> bool:
    """True for the path or id of a configuration file: its suffix is in `CONFIG_SUFFIXES`."""
    return "." in name and PurePosixPath(name).suffix.lower() in CONFIG_SUFFIXES


class _Keys:
    """Every block key of one text with the key enclosing it, found in one pass."""

    def __init__(self, text: str, toml: bool) -> None:
        self.toml = toml
        self.starts: list[int] = []  # offset of each key's line
        self.indents: list[int] = []
        self.labels: list[str] = []
        self.parents: list[int] = []  # index of the enclosing key, -1 for none
        stack: list[int] = []
        text_until = -1  # the end of a block scalar's lines: text, no keys
        for m in (_TABLE if toml else _BLOCK_KEY).finditer(text):
            if m.start() < text_until or (toml and m.group(1).isdigit()):
                continue  # a block scalar's line; an array's row "[8443]"
            indent = 0 if toml else len(m.group(1).expandtabs(4))
            while stack and (toml or self.indents[stack[-1]] >= indent):
                stack.pop()
            self.parents.append(stack[-1] if stack else -1)
            stack.append(len(self.starts))
            self.starts.append(m.start())
            self.indents.append(indent)
            name = " ".join((m.group(1) if toml else m.group(2)).split())
            quoted = not toml and len(name) > 1 and name[0] == name[-1] and name[0] in "\"'"
            self.labels.append(name[1:-1] if quoted else name)
            if not toml and m.group(3):  # "init: |": the lines under it are its text
                text_until = _scalar_body(indent).match(text, m.end()).end()

    def chain(self, text: str, offset: int) -> list[int]:
        """The keys in force at `offset`, outermost first: those less indented than its line,
        or opened on that very line (a chunk starting at "database:" is about the database)."""
        begins = text.rfind("\n", max(0, offset - LINE_READ), offset) + 1
        if not begins and offset > LINE_READ:  # inside a very long line: all keys above
            begins, indent = offset, 1 << 30
        else:  # the line's indentation, read from its first LINE_READ characters at most
            indent = _indent_at(text, begins)
        key = bisect.bisect_right(self.starts, offset) - 1
        out: list[int] = []
        for _ in range(DEPTH + PASSED):  # bounded work per chunk, however deep the nesting
            if key < 0 or len(out) == DEPTH:
                break
            if self.toml or self.indents[key] < indent or self.starts[key] >= begins:
                out.append(key)
            key = self.parents[key]
        return out[::-1]


@lru_cache(maxsize=4)
def _keys(text: str, toml: bool) -> _Keys:
    return _Keys(text, toml)


def key_path(name: str, text: str, offset: int) -> list[str]:
    """The keys (YAML, JSON) or the table (TOML) enclosing `offset` of the configuration file
    `name` holding `text`, outermost first, at most `DEPTH` of them."""
    keys = _keys(text, _is_toml(name))
    return [keys.labels[k] for k in keys.chain(text, offset)]


def within(name: str, outer: Sequence[str], text: str, offset: int) -> list[str]:
    """`key_path` at `offset` of a chunk's `text` whose section is `outer` (the path at the
    chunk's start; `line_start` keeps the chunk's first line whole, indentation included):
    the keys the chunk itself opens above `offset`, under as many of `outer` as enclose their
    indentation, or as many as enclose the line's own. A TOML table replaces `outer`.
    The indentation of `outer`'s keys is not in the chunk, so it is taken as even: the
    chunk's first line sits one step under the last of them (a JSON file's braces add a
    level). A file indented unevenly, or a list item's "- ", may put a line under more or
    fewer of `outer` than it is."""
    keys = _keys(text, toml := _is_toml(name))
    chain = keys.chain(text, offset)
    newline = text.find("\n", 0, LINE_READ)
    first_line = newline if newline >= 0 else LINE_READ  # where the chunk's first line ends
    if chain and keys.starts[chain[0]] < first_line:
        chain = chain[1:]  # a key on the chunk's first line is in `outer` already
    labels = [keys.labels[k] for k in chain]
    if toml:
        return labels or list(outer)
    if offset < first_line and not labels:
        return list(outer)
    braces = int(PurePosixPath(name).suffix.lower() == ".json")  # the root "{" indents
    levels = len(outer) + braces  # how many steps in the chunk's first line sits
    first = _indent_at(text, 0)
    step = first // levels if levels and first >= levels else 2

    def enclosing(indent: int) -> list[str]:
        return list(outer[:max(0, indent // step - braces)])
    if labels:
        return [*enclosing(keys.indents[chain[0]]), *labels][-DEPTH:]
    line = text.rfind("\n", max(0, offset - LINE_READ), offset) + 1
    return enclosing(_indent_at(text, line)) if line else list(outer)


def line_start(text: str, offset: int) -> int:
    """Where the line holding `offset` starts (at most `LINE_READ` characters back, else
    `offset`): a configuration file's chunk starts there, so its first line keeps its
    indentation, which says where it sits."""
    found = text.rfind("\n", max(0, offset - LINE_READ), offset)
    return found + 1 if found >= 0 or offset <= LINE_READ else offset


def _indent_at(text: str, line: int) -> int:
    """The indentation of the line starting at `line` (its first `LINE_READ` characters)."""
    return len(_INDENT.match(text, line, line + LINE_READ).group().expandtabs(4))


def opens_block(name: str, line: str) -> bool:
    """True when `line` of the configuration file `name` is a key that opens a block, or a
    TOML table header, and says nothing else: a label, like a heading, never an answer."""
    if not is_config_name(name):
        return False
    pattern = _TABLE if _is_toml(name) else _BLOCK_KEY
    return bool(pattern.fullmatch(line.strip()))


def _is_toml(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() == ".toml"
