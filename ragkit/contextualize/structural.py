"""A deterministic contextualizer built from a document's own structure.

What it is: the offline stand-in for Claude-written contexts. For each chunk it states the
document's title and descriptive metadata (company, date, …), the Markdown heading path
above the chunk, the code symbols (class / function) or a configuration file's keys
(`ragkit.config_keys`) that enclose it, and — when the chunk does not open the document —
the document's first line, which often says what it is about.

What it is not: a summary. It cannot resolve "the previous quarter" into a number the way a
model reading the whole document can; it only restores the labels the chunker cut off.

Each document is read once (`ragkit.outline`), whatever its number of chunks: the time is
linear in its length (`benchmarks/bench_structural.py`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ragkit.chunking import past_opening_headings, section_of
from ragkit.config_keys import is_config_name
from ragkit.documents import Chunk, Document
from ragkit.file_kinds import doc_name
from ragkit.outline import label, one_line, outline

_META_KEYS = ("company", "quarter", "date", "product", "version")


def heading_path(text: str, offset: int) -> list[str]:
    """Markdown headings in force at `offset`, outermost first."""
    return outline(text).headings(offset)


def enclosing_symbols(text: str, offset: int) -> list[str]:
    """Code definitions (by indentation) that enclose `offset`, outermost first."""
    return outline(text).symbols(offset)


def _opening_line(text: str, limit: int = 160) -> str:
    """The first line with more than 3 characters once stripped of comment and heading marks."""
    for line in text.splitlines():
        line = line.strip().lstrip("#/*-! ").strip()
        if len(line) > 3:
            return line[:limit]
    return ""


def structural_context(doc: Document, chunk: Chunk) -> str:
    """One or two sentences situating `chunk` inside `doc`."""
    return structural_contexts(doc, [chunk])[0]


def _document_parts(doc: Document) -> list[str]:
    """The sentences every chunk of `doc` shares: title, path, descriptive metadata. The
    path and each metadata value are written on one line (`ragkit.outline.one_line`: a YAML
    block scalar's or a TOML multi-line string's line breaks are the metadata's, not the
    context's), a value of blanks left out as an empty one is. The title is put on one line
    where it is read (front matter, documents JSONL, a BEIR corpus), not here: a title taken
    from a first heading keeps that heading's spacing, as the chunks' sections and
    `[Source: …]` tags do (`ragkit.citation_tags.place` matches the two)."""
    parts = [_stopped(f"Document: {label(doc.title or doc.id)}")]
    path = doc.metadata.get("path")
    if path and path != doc.title:
        parts.append(f"Path: {label(one_line(str(path)))}.")
    values = {key: label(one_line(_written(doc.metadata[key]))) for key in _META_KEYS
              if doc.metadata.get(key)}
    facts = [f"{key}: {value}" for key, value in values.items() if value]
    if facts:
        parts.append("; ".join(facts) + ".")
    return parts


def _stopped(sentence: str) -> str:
    """`sentence` ended by a full stop, unless it ends in one already (a title or heading
    that is a sentence, "What changed?"): "Document: Change the oil every 250 hours.."
    was embedded with every chunk of a PDF titled by its first sentence."""
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def _written(value: object) -> str:
    """A metadata value as a sentence states it: a list (front matter's `product: [A, B]`)
    as `A, B`, not Python's `['A', 'B']`; a JSON `NaN` or `Infinity` (pandas writes an empty
    cell as `NaN`) or `null` as nothing, not "company: nan" in every chunk's context."""
    if isinstance(value, list):
        return ", ".join(filter(None, map(_written, value)))
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return str(value)


def structural_contexts(doc: Document, chunks: Sequence[Chunk]) -> list[str]:
    """`structural_context` of each chunk of `doc`, the document's part built once (a chunk
    opening the document has no heading, symbol or opening line to add: it gets just that)."""
    shared = _document_parts(doc)
    head = " ".join(shared)
    config = is_config_name(doc_name(doc))  # a "# " line is a comment, not a heading
    out = []
    opening = None
    for chunk in chunks:
        if chunk.start <= 0:
            out.append(head)
            continue
        parts = list(shared)
        found = outline(doc.text)
        headings = [] if config else found.headings(past_opening_headings(doc.text,
                                                                          chunk.start))
        if headings:
            parts.append(_stopped("Section: " + " > ".join(headings)))
        symbols = (section_of(doc, chunk.start, "code") if config
                   else found.symbols(chunk.start))
        if symbols:
            parts.append("In: " + " > ".join(symbols) + ".")
        if opening is None:
            opening = _opening_line(doc.text)
        if opening and opening not in " ".join(parts):
            parts.append(f"Document opens: {opening}")
        out.append(" ".join(parts))
    return out
