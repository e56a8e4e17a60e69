"""Prompt assembly for answers: which passages go in, in which order, with which label.

What it is: the rules of the 2026 RAG best-practice notes (premai.io's production-RAG guide):
- most relevant passage **last** (recency: models attend to the end of a long context more
  than to its middle);
- each passage labelled `[Source: <document title or id> | Section: <heading path>]`;
- the assembled context kept within a token budget, 8K by default (answers got worse with
  longer contexts).
`assemble(hits, chunks, budget_tokens)` applies them to a ranking; `blocks(passage)` cuts a
passage into the text blocks of its `search_result` block (a block is the smallest unit a
citation can point at, so one block per sentence or line lets citations quote sentences).
A sentence or line longer than a quote may be (`MAX_QUOTE_CHARS`, 1,000 characters: a line
without a full stop, a one-line list of readings) is cut further after each clause — a
", " or "; " or " - " — so the clause that answers is a block of its own and can be quoted
and cited; `clause_blocks(passage)` says which blocks are such clauses, and
`clause_shown(block)` is such a block as an answer shows it (no separator at its end).
The tag a citation shows (`ragkit.citation_tags.cited_tag`) follows the headings of the
passage's text before the cited block. `lift(hits, parents)` turns hits on child chunks
(parent–child indexes) into hits on their parents, each parent once at its best rank, before
assembly.

Budget rule: passages are taken best first while the running total fits; the first that does
not fit and every less relevant one are dropped (listed in `Assembly.dropped`), never cut
mid-way. The best passage is always kept, even alone over the budget (`over_budget` says so):
an answer needs evidence, and the caller can see it. Tokens are estimated as one per 4 UTF-8
bytes of the label and the text (`ragkit.text_stats.estimate_tokens`, the usual English rule
of thumb; it undercounts code and Korean somewhat).

What it is not: a retriever or a reranker — it keeps the order it is given.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ragkit.citation_tags import NO_SECTION, place
from ragkit.documents import Chunk, RagkitError
from ragkit.fusion import Ranking
from ragkit.markdown_tables import ROW
from ragkit.markdown_tables import table_head as markdown_head
from ragkit.text_stats import MAX_QUOTE_CHARS, estimate_tokens

DEFAULT_BUDGET = 8000
# A block ends after a sentence end (full-width "．！？" too) followed by spaces, or after a
# line break (with the white space after it), so the blocks of a passage join back to its
# exact text. A sentence end closed by up to two emphasis marks, quotes or brackets ends one
# too where a sentence starts after it (a capital, a digit, Hangul): an FAQ's "**When do I get
# my laptop?** Your laptop is …" was one block, question and answer; 'He said "No." and left'
# and 'Fruit (apples, etc.) are' are not cut.
_END = "[.!?。．！？]"
_CLOSE = "[*_\"'”’)]"
_BLOCK_END = re.compile(rf"(?<={_END})[ \t]+|(?:(?<={_END}{_CLOSE})|(?<={_END}{_CLOSE}{_CLOSE}))"
                        r"[ \t]+(?=[*_\"'“‘(]*[A-Z0-9\uac00-\ud7a3])|\n\s*")
# A sentence over MAX_QUOTE_CHARS is cut after each clause: after ", " or "; " or a dash set
# off by spaces (" - ", " – ", " — "); a number's comma ("1,000") is no clause end. A dash's
# spaces are tried from the first of a run only: from each, a run of 60,000 took 80 s.
_CLAUSE_END = re.compile(r"(?<=[,;])[ \t]+|(?<![ \t])[ \t]+[-–—][ \t]+")
# What a clause block ends with, white space stripped: its clause end, or a comma or
# semicolon left before the line break that ends its sentence.
_CLAUSE_TAIL = re.compile(r"[ \t]*(?:[,;]|[ \t][-–—])$")


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk as the answerer sees it."""

    chunk_id: str
    doc_id: str
    title: str  # the document's title, else its id
    section: str  # heading path (or code symbols) joined by " > ", else NO_SECTION
    text: str
    score: float
    rank: int  # 1 = most relevant
    head: str = ""  # the header and rule of a table it opens inside (`table_head`)

    @property
    def tag(self) -> str:
        return f"[Source: {self.title} | Section: {self.section}]"

    @property
    def place(self) -> str:
        """`title / section` for people (see `place`). The prompt keeps the full `tag`."""
        return place(self.title, self.section)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.tag) + estimate_tokens(self.text)


@dataclass(frozen=True)
class Assembly:
    """Passages in prompt order (most relevant last) and what the budget left out."""

    passages: tuple[Passage, ...]
    dropped: tuple[str, ...]
    budget: int

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.passages)

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget

    def __iter__(self) -> Iterator[Passage]:
        return iter(self.passages)

    def __len__(self) -> int:
        return len(self.passages)

    def __getitem__(self, index: int) -> Passage:
        return self.passages[index]

    def text(self) -> str:
        """The passages as plain prompt text: each tag on its own line above its text."""
        return "\n\n".join(f"{p.tag}\n{p.text}" for p in self.passages)


def label(chunk: Chunk) -> tuple[str, str]:
    """(title, section) of a chunk: recorded by the chunker in `metadata` ("title",
    "section"); chunks without them (older indexes, chunks a data set brought) get their
    document id and NO_SECTION."""
    title = str(chunk.metadata.get("title") or chunk.doc_id)
    section = chunk.metadata.get("section") or []
    text = " > ".join(map(str, section)) if isinstance(section, list) else str(section)
    return title, text or NO_SECTION


_NTH = re.compile(r"(.*)#(\d+)")  # a chunk's id: its document's and its number there
HEAD_REACH = 8  # chunks looked back through for the header of a table a chunk opens inside


def table_head(chunk: Chunk, chunks: Mapping[str, Chunk]) -> str:
    """The header and rule rows of the Markdown table `chunk` opens inside, from the chunks
    before it in its document (`ragkit.markdown_tables.table_head`, at most `HEAD_REACH`
    back), so the offline answerer reads its rows under their columns: a 128-token chunk of
    a warranty table began "| South Korea | 1 year | 3 years |" with no column names, and
    the answer was declined. "" for a chunk that opens on no row, a table without a header,
    or a chunk with no neighbour in `chunks` (a child chunk, a data set's own chunks)."""
    if not ROW.match(chunk.text.split("\n", 1)[0].rstrip("\r")):
        return ""
    current = chunk
    for _ in range(HEAD_REACH):
        nth = _NTH.fullmatch(current.id)
        before = chunks.get(f"{nth[1]}#{int(nth[2]) - 1}") if nth else None
        if before is None or before.doc_id != chunk.doc_id or before.start >= current.start:
            return ""
        # overlapping, or cut at a line break that neither chunk holds (ranges are trimmed)
        cut = current.start - before.start
        head = markdown_head(before.text[:cut] + ("\n" if cut >= len(before.text) else ""))
        if head is not None:
            return head
        current = before
    return ""


def _by_id(chunks: Mapping[str, Chunk] | Sequence[Chunk]) -> Mapping[str, Chunk]:
    return chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks}


def assemble(hits: Ranking, chunks: Mapping[str, Chunk] | Sequence[Chunk],
             budget_tokens: int = DEFAULT_BUDGET) -> Assembly:
    """The passages of `hits` (chunk id, score; best first) in prompt order within budget."""
    if budget_tokens <= 0:
        raise RagkitError(f"the token budget must be positive, got {budget_tokens}")
    by_id = _by_id(chunks)
    kept: list[Passage] = []
    dropped: list[str] = []
    total = 0
    for rank, (ident, score) in enumerate(hits, start=1):
        if ident not in by_id:
            raise RagkitError(f"hit {rank}: no chunk '{ident}' in the index")
        chunk = by_id[ident]
        passage = Passage(ident, chunk.doc_id, *label(chunk), chunk.text, float(score), rank,
                          table_head(chunk, by_id))
        if dropped or (kept and total + passage.tokens > budget_tokens):
            dropped.append(ident)
            continue
        kept.append(passage)
        total += passage.tokens
    return Assembly(tuple(reversed(kept)), tuple(dropped), budget_tokens)


def blocks(text: str) -> list[str]:
    """`text` cut after each sentence end and line break, and a sentence over
    `MAX_QUOTE_CHARS` after each clause; the pieces join back to `text`."""
    return [piece for piece, _ in _pieces(text)]


def clause_blocks(text: str) -> frozenset[int]:
    """The indices of the blocks of `text` (`blocks`) that are clauses of a sentence or line
    over `MAX_QUOTE_CHARS`; a long sentence without a clause end is one block, not one."""
    return frozenset(i for i, (_, clause) in enumerate(_pieces(text)) if clause)


def clause_shown(text: str) -> str:
    """A clause block (`clause_blocks`) as an answer shows it: stripped, and without the
    ", ", "; " or " - " it was cut after, which read as a dangling "… is 3 bar, [1]".
    Only for clauses: a citation's `cited_text` keeps the exact block, and a sentence or
    line that is no clause keeps its last character."""
    return _CLAUSE_TAIL.sub("", text.strip())


def _pieces(text: str) -> list[tuple[str, bool]]:
    """The blocks of `text`, each with whether it is a clause of a long sentence."""
    out: list[tuple[str, bool]] = []
    for sentence in _cut(text, _BLOCK_END):
        clauses = _cut(sentence, _CLAUSE_END) if len(sentence.strip()) > MAX_QUOTE_CHARS else []
        out += [(c, True) for c in clauses] if len(clauses) > 1 else [(sentence, False)]
    return out


def _cut(text: str, end: re.Pattern[str]) -> list[str]:
    """`text` cut after each match of `end`; white space alone joins the piece before it."""
    cuts = [m.end() for m in end.finditer(text) if 0 < m.end() < len(text)]
    bounds = [0, *cuts, len(text)]
    pieces: list[str] = []
    for lo, hi in zip(bounds, bounds[1:]):
        piece = text[lo:hi]
        if pieces and not piece.strip():
            pieces[-1] += piece  # white space alone is not a block of its own
        elif piece:
            pieces.append(piece)
    return pieces or [text]


def lift(hits: Ranking, parents: Mapping[str, Chunk]) -> tuple[Ranking, dict[str, Chunk]]:
    """Hits on child chunks as hits on their parents, each parent once at its best rank;
    a hit with no parent stays as it is. Also returns the parents by id."""
    lifted: dict[str, float] = {}
    chosen: dict[str, Chunk] = {}
    for ident, score in hits:
        parent = parents.get(ident)
        key = parent.id if parent is not None else ident
        if parent is not None:
            chosen[key] = parent
        lifted.setdefault(key, score)
    return list(lifted.items()), chosen
