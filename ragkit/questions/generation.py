"""A synthetic golden set from a folder of documents: write, check, filter, report.

What it is: `generate(documents, n, kinds, model, seed)` → (questions, `Report`).
1. The documents are chunked as `ragkit index` chunks them (same chunker, chunk size and
   overlap), so a span maps onto what an index of the same folder holds.
2. `n` chunks are sampled per kind quota with `seed` (`ragkit.questions.sample`).
3. Claude writes one question per sample (`prompts.WRITE_PROMPT`), the document sent once
   per question in a block marked for the prompt cache (of a document past the context
   window, the part around the passage: `ragkit.questions.excerpt`); per document text the
   first request is answered before the rest are sent (so the cache entry exists when they
   arrive), the rest go through `workers` threads — as the claude contextualizer does.
4. The filters drop, in this order, and the report counts per kind: a reply that is not the
   JSON asked for; a span not found in its passage (one found is widened to the sentences
   the offline answerer quotes, `filters.whole_units`); a span that another document holds
   too (for a contextual question, which names its document: another of its title); a
   failed round trip (the question asked against its passage(s) alone does not come back
   to the span); a question answerable from itself (the lexical rule, else a closed-book
   call); a near-duplicate of an earlier question (cosine of the local embedder,
   `filters.DUP_THRESHOLD`). Rules: `ragkit.questions.filters`.
Every call goes through the paid-call cache (`ragkit.llm.LLM`), so a second run with the
same documents, seed and options sends nothing. The cost is projected before the first call
and measured after (`ragkit.questions.report`). Without ANTHROPIC_API_KEY the offline
stand-in answers every request by its documented rule (`ragkit.standin.questions`): the
whole path runs, deterministically, and the records say `"generator": "offline stand-in
rule"`, never a model's name.

The records are the shipped golden sets' (`data/README.md`): `id`, `question`, `kind`,
`split` ("test"), `lang` ("ko" when the question reads as Korean by
`ragkit.text_stats.reads_korean`, most of its words, not any Hangul in it: an English question
may quote a Korean word), `answer`, `golden` [{`doc_id`, `span`}] ([] when unanswerable),
plus `source` (document, chunk ids, title, the heading path or code definitions in force at
the span, its page when the document has a page map — `metadata["pages"]`, as PDFs are
loaded — and the passage text, which `accept` checks an edited span against) and
`generator`. `ragkit eval` reads them as they are.

What it is not: a substitute for questions from domain experts and from production — the
RAG practice notes' golden set mixes all three; review the output (`ragkit questions review`).
"""
from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.cache import CacheUnusable
from ragkit.chunking import ChunkerConfig, chunk_documents, section_of
from ragkit.config import DEFAULT_EMBEDDER
from ragkit.datasets import load_dataset
from ragkit.documents import Chunk, Document, RagkitError, RagkitWarning
from ragkit.embed import get_embedder
from ragkit.file_kinds import is_code
from ragkit.llm import LLM, UsageLog, price
from ragkit.loaders.pages import page_at
from ragkit.money import dollars
from ragkit.progress import progress_bar
from ragkit.questions import filters, prompts
from ragkit.questions.excerpt import excerpts
from ragkit.questions.report import NO_QUESTION, Report, project_cost
from ragkit.questions.sample import MIN_WORDS, Item, parse_kinds, quotas, sample
from ragkit.text_stats import reads_korean

DEFAULT_MODEL = "claude-haiku-4-5"
OFFLINE_GENERATOR = "offline stand-in rule"
_KEPT = "replies obtained so far are kept in the call cache, rerun to continue"
Ask = Callable[[dict[str, Any], str], Any]  # one call: (request, what it is for) -> reply


@dataclass
class Candidate:
    """One written question on its way through the filters."""

    item: Item
    question: str = ""
    spans: list[str] = field(default_factory=list)
    answer: str = ""
    dropped: str | None = None  # the stage that dropped it


def _shares(kinds: str | Sequence[str] | dict[str, float] | None) -> dict[str, float]:
    if kinds is None or isinstance(kinds, str):
        return parse_kinds(kinds)
    if isinstance(kinds, dict):
        return parse_kinds(",".join(f"{k}={v}" for k, v in kinds.items()))
    return parse_kinds(",".join(kinds))


def generate(documents: Sequence[Document], n: int = 100,
             kinds: str | Sequence[str] | dict[str, float] | None = None,
             model: str = DEFAULT_MODEL, seed: int = 0, *, chunk_size: int = 512,
             overlap: int = 64, chunks: Sequence[Chunk] | None = None, llm: LLM | None = None,
             embedder: Any = DEFAULT_EMBEDDER, dup_threshold: float = filters.DUP_THRESHOLD,
             workers: int = 4, log: Callable[[str], None] | None = None,
             progress: bool = False) -> tuple[list[dict[str, Any]], Report]:
    """Questions in the shipped golden format and the run's report (module docstring).

    `kinds`: None (the default shares), `"lexical,contextual"`, `"lexical=3,contextual=1"`,
    a list of kind names or a {kind: weight} dict. `embedder`: a registered name, an
    embedder object, or None to skip the near-duplicate filter. `log` receives the
    projection line before the first call; `progress` shows a bar of the calls
    (`ragkit.progress`: in a notebook, in the cell's output).
    """
    if n <= 0:
        raise RagkitError(f"n must be at least 1, got {n}")
    price(model)  # an unknown model is refused before any work
    wanted = quotas(n, _shares(kinds))
    chunks = list(chunks) if chunks is not None else chunk_documents(
        list(documents), ChunkerConfig(chunk_size, overlap))
    items = sample(documents, chunks, wanted, seed)
    if len(items) < n:
        warnings.warn(f"the documents have usable chunks for {len(items)} of the {n} questions "
                      f"asked (each chunk is used once; a chunk needs {MIN_WORDS} words outside "
                      f"headings)", RagkitWarning, stacklevel=2)
    llm = llm if llm is not None else LLM(usage=UsageLog())
    generator = OFFLINE_GENERATOR if llm.offline else model
    sent = excerpts(items, chunks, model, llm, log)
    report = Report(asked=wanted, model=model, generator=generator,
                    projected=project_cost(items, model, sent),
                    dup_threshold=dup_threshold if embedder is not None else None)
    if log is not None:
        who = (f"the offline stand-in writes them by its documented rule (no cost; {model} "
               f"would cost" if llm.offline else f"{model} writes them through {llm.source} "
               f"(projected")
        log(f"questions: {len(items)} to write; {who} {dollars(report.projected)}, estimated "
            f"tokens)")
    candidates = [Candidate(item) for item in items]
    # three calls a question (write, round trip, closed book); a question a filter drops
    # makes no more, so the total is recounted after each step (the bar stopped at 22/60)
    bar = progress_bar(total=3 * len(items), desc="questions (offline stand-in)"
                       if llm.offline else f"questions {model}", unit="call", leave=False,
                       disable=not progress)
    counting = threading.Lock()  # calls end in several threads at once

    def ask(request: dict[str, Any], what: str) -> Any:
        reply = _ask(llm, request, what)
        with counting:
            bar.update(1)
        return reply

    def left(calls_each: int) -> list[Candidate]:
        alive = [c for c in candidates if c.dropped is None]
        bar.total = bar.n + calls_each * len(alive)
        bar.refresh()
        return alive
    try:
        with ThreadPoolExecutor(workers) as pool:
            _write(ask, model, candidates, pool, sent)
            _elsewhere(candidates, documents)
            _round_trip(ask, model, left(2), pool)
            _closed_book(ask, model, left(1), pool)  # (not for unanswerable questions)
        left(0)  # every call made: the bar ends full
    finally:
        bar.close()
    if embedder is not None:
        _near_duplicates(candidates, embedder, dup_threshold)
    for c in candidates:
        report.count("generated", c.item.kind)
        report.count(c.dropped or "kept", c.item.kind)
    report.settle()
    report.measured = llm.usage.dollars(model)
    report.usage = llm.usage.summary()
    kept = [c for c in candidates if c.dropped is None]
    return [record(i, c, generator) for i, c in enumerate(kept, start=1)], report


def documents_of(path: Path | str, skip_bad: bool = False
                 ) -> tuple[list[Document], list[Chunk] | None]:
    """The documents of DOCS as `ragkit index` reads them (`ragkit.datasets.load_dataset`:
    a folder, a documents JSONL, a data set folder) and the chunks the data set ships, if
    any (Anthropic's cookbook format), to be used instead of chunking. `skip_bad` leaves a
    folder's unreadable files out as `ragkit index --skip-bad` does (the documents list
    then has their `skipped`)."""
    data = load_dataset(path, skip_bad=skip_bad, queries=False)
    return data.documents, data.chunks


def _ask(llm: LLM, request: dict[str, Any], what: str) -> Any:
    try:
        return llm.create(**request)
    except CacheUnusable:  # damaged, or read-only here: its own line says what to do
        raise
    except RagkitError as exc:
        raise RagkitError(f"{what}: {exc}; {_KEPT}") from None


def _write(ask: Ask, model: str, candidates: list[Candidate], pool: ThreadPoolExecutor,
           sent: list[str]) -> None:
    """Write every question (`sent`: the document text each sends): per document text the
    first request alone, then the rest at once."""
    futures: list[tuple[Candidate, Future]] = []
    first_done: set[str] = set()
    for c, text in zip(candidates, sent):
        doc = c.item.document
        request = prompts.write_request(model, text, doc.title or doc.id,
                                        [ch.text for ch in c.item.chunks], c.item.kind)
        what = f"{doc.id}: writing a question about {c.item.chunks[0].id}"
        if text not in first_done:
            first_done.add(text)
            _take_question(c, ask(request, what))
        else:
            futures.append((c, pool.submit(ask, request, what)))
    for c, future in futures:
        _take_question(c, future.result())


def _take_question(c: Candidate, message: Any) -> None:
    """Read the written question; drop it as none written, malformed or not verbatim."""
    reply = prompts.reply_json(message) or {}
    question, raw = reply.get("question"), [reply.get("answer_span"), reply.get("second_span")]
    if not isinstance(question, str) or not all(isinstance(s, (str, type(None))) for s in raw):
        c.dropped = "malformed reply"
        return
    if not question.strip():  # the JSON asked for, no question (the stand-in's: no key sentence)
        c.dropped = NO_QUESTION
        return
    c.question = " ".join(question.split())
    answer = reply.get("answer")
    c.answer = answer.strip() if isinstance(answer, str) else ""
    if c.item.kind == "unanswerable":
        return
    wanted = len(c.item.chunks)  # one span per passage
    spans = [filters.anchor(s or "", ch.text) for s, ch in zip(raw[:wanted], c.item.chunks)]
    if not all(spans):
        c.dropped = "span not verbatim"
        return
    code = is_code(c.item.document)  # as the answerer cuts it: whole sentences
    c.spans = [filters.whole_units(s, ch.text, code) for s, ch in zip(spans, c.item.chunks) if s]
    c.answer = c.answer or c.spans[0]


def _elsewhere(candidates: list[Candidate], documents: Sequence[Document]) -> None:
    """Drop a question whose span another document holds too; a contextual one names its
    document by title, so only a document of the same title counts (a copy: `handbook.md`
    and `handbook (1).md` — one copy was labelled, and which twin ranked first decided)."""
    flat = {d.id: filters.flat(d.text) for d in documents}
    for c in candidates:
        doc = c.item.document
        others = (flat if c.item.kind != "contextual"  # named as its writer was told:
                  else {d.id: flat[d.id] for d in documents
                        if (d.title or d.id) == (doc.title or doc.id)})
        if c.dropped is None and filters.found_elsewhere(c.spans, doc.id, others):
            c.dropped = "span in another document"


def _round_trip(ask: Ask, model: str, candidates: list[Candidate],
                pool: ThreadPoolExecutor) -> None:
    def check(c: Candidate) -> None:
        request = prompts.answer_request(model, [ch.text for ch in c.item.chunks], c.question)
        reply = prompts.reply_json(ask(request, f"{c.item.document.id}: round trip"))
        answered = (reply or {}).get("answer_span")
        answered = answered if isinstance(answered, str) else ""
        if not filters.round_trip_ok(c.spans, answered, c.item.kind == "unanswerable"):
            c.dropped = "round-trip failed"
    list(pool.map(check, candidates))


def _closed_book(ask: Ask, model: str, candidates: list[Candidate],
                 pool: ThreadPoolExecutor) -> None:
    def check(c: Candidate) -> None:
        if c.item.kind == "unanswerable":
            return  # nothing to give away
        if filters.gives_away(c.question, c.spans):
            c.dropped = "answerable from the question"
            return
        message = ask(prompts.closed_book_request(model, c.question),
                       f"{c.item.document.id}: closed-book check")
        if filters.closed_book_answers(prompts.reply_text(message), c.spans):
            c.dropped = "answerable from the question"
    list(pool.map(check, candidates))


def _near_duplicates(candidates: list[Candidate], embedder: Any, threshold: float) -> None:
    if isinstance(embedder, str):
        embedder = get_embedder(embedder)
    alive = [c for c in candidates if c.dropped is None]
    for c, dup in zip(alive, filters.near_duplicates([c.question for c in alive], embedder,
                                                     threshold)):
        if dup:
            c.dropped = "near-duplicate"


def record(number: int, c: Candidate, generator: str) -> dict[str, Any]:
    """One question in the shipped golden format, with its source and generator."""
    doc, first = c.item.document, c.item.chunks[0]
    at = first.start + max(first.text.find(c.spans[0]), 0) if c.spans else first.start
    kind = str(first.metadata.get("chunker") or ("code" if is_code(doc) else "prose"))
    source: dict[str, Any] = {
        "doc_id": doc.id, "chunk_ids": [ch.id for ch in c.item.chunks],
        "title": doc.title or doc.id, "section": " > ".join(section_of(doc, at, kind))}
    page = page_at(doc.metadata.get("pages") or [], at)  # a PDF's page map, where it has one
    if page is not None:
        source["page"] = page
    source["passages"] = [ch.text for ch in c.item.chunks]
    return {"id": f"gen-{number:03d}", "question": c.question, "kind": c.item.kind,
            "split": "test", "lang": "ko" if reads_korean(c.question) else "en",
            "answer": c.answer, "golden": [{"doc_id": doc.id, "span": s} for s in c.spans],
            "source": source, "generator": generator}
