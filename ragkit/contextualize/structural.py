"""A deterministic contextualizer built from a document's own structure.

What it is: the offline stand-in for Claude-written contexts. For each chunk it states the
document's title and descriptive metadata (company, date, …), the Markdown heading path
above the chunk, the code symbols (class / function) that enclose it, and — when the chunk
does not open the document — the document's first line, which often says what it is about.

What it is not: a summary. It cannot resolve "the previous quarter" into a number the way a
model reading the whole document can; it only restores the labels the chunker cut off.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.documents import Chunk, Document

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
_SYMBOL = re.compile(r"^([ \t]*)(?:pub(?:\([^)]*\))?\s+|export\s+|async\s+)*"
                     r"(class|def|fn|struct|impl|trait|enum|func|function|interface|mod)"
                     r"(?:<[^>\n]*>)?\s+([A-Za-z_]\w*)", re.M)
_META_KEYS = ("company", "quarter", "date", "product", "version")


def heading_path(text: str, offset: int) -> list[str]:
    """Markdown headings in force at `offset`, outermost first."""
    if text.find("#", 0, offset) < 0:  # no heading above: skip the scan
        return []
    stack: list[tuple[int, str]] = []
    for match in _HEADING.finditer(text, 0, offset):
        level = len(match.group(1))
        stack = [(lvl, title) for lvl, title in stack if lvl < level]
        stack.append((level, match.group(2)))
    return [title for _, title in stack]


def enclosing_symbols(text: str, offset: int) -> list[str]:
    """Code definitions (by indentation) that enclose `offset`, outermost first."""
    if offset == 0:
        return []
    stack: list[tuple[int, str]] = []
    for match in _SYMBOL.finditer(text, 0, offset):
        indent = len(match.group(1).expandtabs(4))
        stack = [(ind, name) for ind, name in stack if ind < indent]
        stack.append((indent, f"{match.group(2)} {match.group(3)}"))
    line_start = text.rfind("\n", 0, offset) + 1
    current = len(text[line_start:offset]) - len(text[line_start:offset].lstrip())
    return [name for ind, name in stack if ind < current or ind == 0]


def _opening_line(text: str, limit: int = 160) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#/*-! ").strip()
        if len(line) > 3:
            return line[:limit]
    return ""


def structural_context(doc: Document, chunk: Chunk) -> str:
    """One or two sentences situating `chunk` inside `doc`."""
    return structural_contexts(doc, [chunk])[0]


def _document_parts(doc: Document) -> list[str]:
    """The sentences every chunk of `doc` shares: title, path, descriptive metadata."""
    parts = [f"Document: {doc.title or doc.id}."]
    path = doc.metadata.get("path")
    if path and path != doc.title:
        parts.append(f"Path: {path}.")
    facts = [f"{key}: {doc.metadata[key]}" for key in _META_KEYS if doc.metadata.get(key)]
    if facts:
        parts.append("; ".join(facts) + ".")
    return parts


def structural_contexts(doc: Document, chunks: Sequence[Chunk]) -> list[str]:
    """`structural_context` of each chunk of `doc`, the document's part built once (a chunk
    opening the document has no heading, symbol or opening line to add: it gets just that)."""
    shared = _document_parts(doc)
    head = " ".join(shared)
    out = []
    for chunk in chunks:
        if chunk.start <= 0:
            out.append(head)
            continue
        parts = list(shared)
        headings = heading_path(doc.text, chunk.start)
        if headings:
            parts.append("Section: " + " > ".join(headings) + ".")
        symbols = enclosing_symbols(doc.text, chunk.start)
        if symbols:
            parts.append("In: " + " > ".join(symbols) + ".")
        opening = _opening_line(doc.text)
        if opening and opening not in " ".join(parts):
            parts.append(f"Document opens: {opening}")
        out.append(" ".join(parts))
    return out
