"""Stand-in rule: Anthropic's contextual-retrieval prompt → the chunk's structural context.

Recognises a user turn holding `<document>…</document>` and `<chunk>…</chunk>` (the
cookbook's two blocks, see `ragkit.contextualize.claude`). Answers with
`ragkit.contextualize.structural.structural_context` computed from the document text alone:
the document's title is its first Markdown heading (else its first non-empty line, without
a final period); the chunk is located by its first verbatim occurrence in the document (else
by its first line; else it is treated as the document's opening). The request carries no
metadata, so the context names no company or date that the text itself does not.
"""
from __future__ import annotations

import re
from typing import Any

from ragkit.contextualize.structural import structural_context
from ragkit.documents import Chunk, Document
from ragkit.fences import unfenced
from ragkit.outline import HEADING
from ragkit.standin.base import Reply, user_text

_DOCUMENT = re.compile(r"<document>\n?(.*?)\n?</document>", re.S)
_CHUNK = re.compile(r"<chunk>\n?(.*?)\n?</chunk>", re.S)


def _title(document: str) -> str:
    heading = HEADING.search(unfenced(document))  # linear; a fenced `# comment` is none
    if heading:
        return heading.group(2)
    first = next((line.strip()[:120] for line in document.splitlines() if line.strip()), "")
    return first.rstrip(".")


def _locate(document: str, chunk: str) -> int:
    for probe in (chunk, chunk.strip(), chunk.strip().splitlines()[0] if chunk.strip() else ""):
        at = document.find(probe) if probe else -1
        if at >= 0:
            return at
    return 0


def situate(document: str, chunk: str) -> str:
    """The stand-in's context for `chunk`: structural context from the document text alone."""
    start = _locate(document, chunk)
    doc = Document(id="document", text=document, title=_title(document))
    return structural_context(doc, Chunk("chunk", doc.id, chunk, start=start,
                                         end=start + len(chunk)))


def rule(request: dict[str, Any]) -> Reply | None:
    """A contextualization request → its context; anything else → None."""
    user = user_text(request)
    document, chunk = _DOCUMENT.search(user), _CHUNK.search(user)
    if document and chunk:
        return Reply.text(situate(document.group(1), chunk.group(1)))
    return None
