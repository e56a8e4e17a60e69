"""The page a citation quotes: PDF chunks carry a page map, and a cited block's page is read
from it.

What it is: `paged(answer, chunks, parents)` — `answer` (a `ragkit.answer.Answer`) with each
citation's `page` set where the cited chunk's metadata has a page map (`pages`, written by
the PDF loader: `ragkit.loaders.pages`). What it is not: printed page labels (a PDF's roman
front matter): the page is the file's physical page, counted from 1.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ragkit.assemble import blocks
from ragkit.documents import Chunk
from ragkit.loaders.pages import page_at

AnswerT = TypeVar("AnswerT", bound=Any)  # ragkit.answer.Answer (a layer above this one)


def paged(result: AnswerT, chunks: Mapping[str, Chunk] | Sequence[Chunk],
          parents: Mapping[str, Chunk] | None = None) -> AnswerT:
    """`result` with each citation's `page`: where the cited chunk's metadata has a page map
    (`pages`, a PDF's: `ragkit.loaders.pages`), the page holding the cited block's first
    character. Citations of other chunks keep `page` None."""
    cited = {c.chunk_id for c in result.citations}
    if not cited:
        return result
    by_id = ({i: chunks[i] for i in cited if i in chunks} if isinstance(chunks, Mapping)
             else {c.id: c for c in chunks if c.id in cited})
    by_id.update({p.id: p for p in (parents or {}).values() if p.id in cited})
    maps = {i: c.metadata["pages"] for i, c in by_id.items() if c.metadata.get("pages")}
    if not maps:
        return result
    by_index = {n: p for n, p in enumerate(result.passages)}
    citations = []
    for citation in result.citations:
        passage = by_index.get(citation.search_result_index)
        if citation.chunk_id in maps and passage is not None:
            before = blocks(passage.text)[:citation.start_block_index]
            offset = sum(map(len, before))
            offset += len(passage.text[offset:]) - len(passage.text[offset:].lstrip())
            citation = replace(citation, page=page_at(maps[citation.chunk_id], offset))
        citations.append(citation)
    return replace(result, citations=tuple(citations))
