"""Cited answers from retrieved chunks: Claude with `search_result` blocks, or the stand-in.

What it is: `answer(question, hits, chunks)` assembles the hits (`ragkit.assemble`: most
relevant last, a `[Source: … | Section: …]` tag each, an 8K-token budget), sends ONE
`messages.create` whose user turn holds each passage as a `search_result` block (`source` =
chunk id, `title` = the tag, `content` = one text block per sentence or line, citations
enabled) followed by the question, and returns an `Answer`: the text with `[n]` markers, the
citations mapped back to chunk ids, the usage, and whether it declined. The call goes
through `ragkit.llm.LLM`, so it is cached and metered. `answer_stream` does the same through
`messages.stream`, yielding text as it arrives, then the `Answer`.

Offline (no API key): given the index's `embedder`, the offline extractive answerer
(`ragkit.extractive`: sentences chosen by the embedder's cosine and IDF term coverage, a
decline when retrieval is weak) answers without any call; its quotes become the same
citations, and `Answer.model` is `ragkit.extractive.MODEL`, never a Claude model. Without an
embedder, the offline stand-in's rule (`ragkit.standin.answer`) replies through the SDK path.

No hits: the answer is the decline, and no call is made.

Parent–child indexes: `parents` maps a matched child chunk to its parent; the hits are
lifted to their parents (each parent once, at its best child's rank) before assembly.

Citation mapping: a `search_result_location` citation names its block by
`search_result_index`, 0-based over ALL search_result blocks of the request in order — top
level of user turns and inside tool results, across messages — so `result_sources(messages)`
walks the request the same way. Source: platform.claude.com "Search results" and the SDK's
`types/citations_search_result_location.py`.

What it is not: a judge of the answer (see `ragkit.evaluate`), nor a multi-turn agent.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.assemble import DEFAULT_BUDGET, Assembly, Passage, assemble, blocks, lift
from ragkit.citation_tags import cited_tag
from ragkit.documents import Chunk, RagkitWarning
from ragkit.extractive import MODEL as EXTRACTIVE_MODEL, answers_with, extract
from ragkit.extractive_units import shown
from ragkit.citation_pages import paged
from ragkit.file_kinds import is_code_name
from ragkit.fusion import Ranking
from ragkit.llm import LLM
from ragkit.pricing import Usage

DEFAULT_MODEL = "claude-haiku-4-5"
MAX_TOKENS = 1024
DECLINE = "I don't know: the sources do not answer this question."
SYSTEM = ("Answer the user's question using only the search results in the user turn; the "
          "most relevant result comes last. Quote or closely paraphrase the sentences that "
          "answer it, with citations. If the search results do not answer the question, reply "
          f"exactly: {DECLINE}")


@dataclass(frozen=True)
class Citation:
    """One cited range of one search result, mapped back to its chunk."""

    number: int  # the [n] marker in Answer.text and the position in Answer.sources
    chunk_id: str
    title: str
    cited_text: str
    search_result_index: int
    start_block_index: int
    end_block_index: int
    page: int | None = None  # the source file's page of the cited text (a PDF's), else None


@dataclass(frozen=True)
class Answer:
    """What `answer` returns. `sources` lists the cited chunk ids, numbered from 1."""

    question: str
    text: str
    citations: tuple[Citation, ...]
    sources: tuple[tuple[str, str], ...]  # (chunk id, tag), in marker order
    passages: Assembly
    usage: Usage
    declined: bool
    model: str
    why: str = ""  # the offline extractive answerer's reason for a decline


def search_result(passage: Passage) -> dict[str, Any]:
    """A passage as a `search_result` content block with citations enabled."""
    return {"type": "search_result", "source": passage.chunk_id, "title": passage.tag,
            "content": [{"type": "text", "text": piece} for piece in blocks(passage.text)],
            "citations": {"enabled": True}}


def request(question: str, passages: Assembly, model: str = DEFAULT_MODEL,
            max_tokens: int = MAX_TOKENS) -> dict[str, Any]:
    """The Messages API body: one user turn, the search results then the question."""
    content = [search_result(p) for p in passages] + [{"type": "text", "text": question}]
    return {"model": model, "max_tokens": max_tokens, "system": SYSTEM,
            "messages": [{"role": "user", "content": content}]}


def result_sources(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every search_result block of a request, in `search_result_index` order."""
    found: list[dict[str, Any]] = []

    def walk(blocks_: Any) -> None:
        for block in blocks_ if isinstance(blocks_, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "search_result":
                found.append(block)
            elif block.get("type") == "tool_result":
                walk(block.get("content"))

    for message in messages:
        walk(message.get("content"))
    return found


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _cited_title(result: dict[str, Any], block: int) -> str:
    """The search result's title (its tag) with the Section of its block `block`: the
    heading over the cited sentence, not the one where the chunk starts (`cited_tag`)."""
    content = result.get("content") if isinstance(result.get("content"), list) else []
    texts, end = [str(b.get("text", "")) for b in content if isinstance(b, dict)], block + 1
    while end < len(texts) and "\n" not in texts[end - 1][len(texts[end - 1].rstrip()):]:
        end += 1  # to the cited block's line end: "## 2. " | "Cooling-off period\n" read whole
    doc = str(result.get("source", "")).rsplit("#", 1)[0]
    return cited_tag(str(result.get("title", "")), texts[:end], doc)


class _Numbering:
    """Numbers cited chunks by first citation and renders a block's `[n]` markers."""

    def __init__(self, sources: list[dict[str, Any]]) -> None:
        self.results, self.numbers, self.citations = sources, {}, []

    def add(self, citation: Any) -> int | None:
        if _get(citation, "type") != "search_result_location":
            return None
        index = _get(citation, "search_result_index")
        if not isinstance(index, int) or not 0 <= index < len(self.results):
            return None
        ident = str(self.results[index].get("source"))
        number = self.numbers.setdefault(ident, len(self.numbers) + 1)
        start = int(_get(citation, "start_block_index") or 0)
        self.citations.append(Citation(
            number, ident, _cited_title(self.results[index], start),
            str(_get(citation, "cited_text") or ""), index, start,
            int(_get(citation, "end_block_index") or 0)))
        return number

    def markers(self, citations: Sequence[Any]) -> str:
        numbers = [n for n in (self.add(c) for c in citations or ()) if n is not None]
        return "".join(f" [{n}]" for n in dict.fromkeys(numbers))

    def sources(self) -> tuple[tuple[str, str], ...]:
        tags = {c.chunk_id: c.title for c in self.citations}
        return tuple((ident, tags[ident]) for ident in self.numbers)


def cite(message: Any, messages: Sequence[dict[str, Any]]
         ) -> tuple[str, tuple[Citation, ...], tuple[tuple[str, str], ...]]:
    """A reply to `messages` as (text with [n] markers, its citations, the numbered sources:
    (search result `source`, `title`)), numbered by first citation."""
    numbering = _Numbering(result_sources(messages))
    text = "".join(block.text + numbering.markers(block.citations or ())
                   for block in message.content if block.type == "text")
    return text, tuple(numbering.citations), numbering.sources()


def _build(question: str, passages: Assembly, body: dict[str, Any], message: Any) -> Answer:
    if getattr(message, "stop_reason", None) == "max_tokens":
        warnings.warn(RagkitWarning(f"the answer stopped at max_tokens ({body['max_tokens']}): "
                                    f"it is cut off"), stacklevel=3)
    text, citations, sources = cite(message, body["messages"])
    return Answer(question, text, citations, sources, passages, Usage.of(message.usage),
                  is_decline(text), message.model)


def is_decline(text: str) -> bool:
    """True for a reply that opens with "I don't know" (straight or curly apostrophe)."""
    return text.strip().replace("\u2019", "'").startswith(DECLINE.split(":")[0])


def _prepare(question: str, hits: Ranking, chunks: Mapping[str, Chunk] | Sequence[Chunk],
             parents: Mapping[str, Chunk] | None, budget_tokens: int, model: str,
             max_tokens: int) -> tuple[Assembly, dict[str, Any]]:
    if parents:
        hits, lifted = lift(hits, parents)
        by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks}
        chunks = {**by_id, **lifted}
    passages = assemble(hits, chunks, budget_tokens)
    return passages, request(question, passages, model, max_tokens)


def answer(question: str, hits: Ranking, chunks: Mapping[str, Chunk] | Sequence[Chunk],
           parents: Mapping[str, Chunk] | None = None, *, llm=None,
           model: str = DEFAULT_MODEL, budget_tokens: int = DEFAULT_BUDGET,
           max_tokens: int = MAX_TOKENS, embedder=None) -> Answer:
    """A cited answer to `question` from `hits` (chunk id, score; best first). Offline with
    an `embedder` (the index's), the offline extractive answerer's."""
    passages, body = _prepare(question, hits, chunks, parents, budget_tokens, model, max_tokens)
    if not passages:
        return _nothing_found(question, passages, model)
    llm = llm or LLM()
    if embedder is not None and llm.offline:
        return paged(extracted(question, passages, body, embedder), chunks, parents)
    return paged(_build(question, passages, body, llm.create(**body)), chunks, parents)


@dataclass(frozen=True)
class _Text:
    """A text block of a reply, as `cite` reads it."""

    text: str
    citations: tuple[dict[str, Any], ...]
    type: str = "text"


@dataclass(frozen=True)
class _Reply:
    content: tuple[_Text, ...]


def quote_location(results: Sequence[dict[str, Any]], result: int, block: int,
                   text: str, end: int | None = None) -> dict[str, Any]:
    """The `search_result_location` citation of blocks `block` … `end` − 1 (default: block
    `block` alone; text `text`) of search result `result`: what an offline answerer's quote
    cites, as Claude's citations do."""
    source = results[result]
    return {"type": "search_result_location", "source": str(source.get("source", "")),
            "title": source.get("title"), "cited_text": text, "search_result_index": result,
            "start_block_index": block, "end_block_index": block + 1 if end is None else end}


def extracted(question: str, passages: Assembly, body: dict[str, Any], embedder) -> Answer:
    """The offline extractive answerer's `Answer` over the assembled `passages` (whose
    request is `body`): each quote a text block citing exactly its block; no call, no usage."""
    found = extract(question, list(passages), embedder)
    if found.declined:
        return Answer(question, DECLINE, (), (), passages, Usage(), True, EXTRACTIVE_MODEL,
                      found.why)
    results, read = result_sources(body["messages"]), list(passages)
    reply = _Reply(tuple(_Text((" " if n else "") + shown(q.label or q.text, q.clause, q.titled,
                                                           is_code_name(read[q.result].doc_id)),
                               (quote_location(results, q.result, q.block, q.text, q.stop),))
                         for n, q in enumerate(found.quotes)))
    text, citations, sources = cite(reply, body["messages"])
    return Answer(question, text, citations, sources, passages, Usage(), False,
                  EXTRACTIVE_MODEL)


def _nothing_found(question: str, passages: Assembly, model: str) -> Answer:
    """No passage retrieved: the decline, without asking a model."""
    return Answer(question, DECLINE, (), (), passages, Usage(), True, model)


def answer_stream(question: str, hits: Ranking, chunks: Mapping[str, Chunk] | Sequence[Chunk],
                  parents: Mapping[str, Chunk] | None = None, *, llm=None,
                  model: str = DEFAULT_MODEL, budget_tokens: int = DEFAULT_BUDGET,
                  max_tokens: int = MAX_TOKENS, embedder=None) -> Iterator[str | Answer]:
    """`answer` through `messages.stream`: yields text pieces as they arrive (with the `[n]`
    markers at the end of each cited block), then the `Answer`; the pieces join to its text.
    A reply served from the call cache comes as one piece."""
    passages, body = _prepare(question, hits, chunks, parents, budget_tokens, model, max_tokens)
    if not passages:
        yield DECLINE
        yield _nothing_found(question, passages, model)
        return
    llm = llm or LLM()
    if embedder is not None and llm.offline:  # no call to stream: the whole answer at once
        final = paged(extracted(question, passages, body, embedder), chunks, parents)
        yield final.text
        yield final
        return
    numbering, streamed = _Numbering(result_sources(body["messages"])), []
    events = llm.stream(**body)
    while True:
        try:
            event = next(events)
        except StopIteration as stop:
            message = stop.value
            break
        if event.type == "text":
            streamed.append(event.text)
            yield event.text
        elif event.type == "content_block_stop" and event.content_block.type == "text":
            marks = numbering.markers(event.content_block.citations or ())
            if marks:
                streamed.append(marks)
                yield marks
    final = paged(_build(question, passages, body, message), chunks, parents)
    if not streamed:
        yield final.text
    yield final
