"""Recursive and code-aware chunkers with a token budget.

What it is: the 2026 RAG best-practice default — recursive splitting at ~512 tokens with
10–20 % overlap, headings first, then paragraphs, lines, sentences and finally words; short
documents are kept whole. Source files are split at top-level definitions instead of
headings.

Its token counting and splitting (`Tokens`, `split_pieces`, `trim`) also cut a chunk into
the dense embedder's windows (`ragkit.windows`).

What it is not: a model tokenizer. A "token" here is a match of `\\w{1,128}|[^\\w\\s]` (a word
or one punctuation mark), close to an LLM's token count for English prose; a Hangul word is one
token, so Korean chunks hold more characters than English ones (3.9 MiniLM word-pieces per
token on the shipped Korean documents, 1.06 on the others), and a Chinese or Japanese run
between two punctuation marks is a single token up to 128 characters. Why the cap: a run with
no break at all (a hex dump, a base64 blob) was one token whatever its length, so 1 MB of it
became one chunk of a million characters and a 200,000-token prompt; no word of the shipped,
scikit-learn or code sets is that long (the longest is 98 characters), so no chunk moved.
Chunk offsets are exact: a chunk's text is `document.text[start:end]`, and its id
`<doc_id>#<n>` is stable for the same settings.
"""
from __future__ import annotations

import re
import string
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ragkit.config_keys import is_config_name, key_path, line_start
from ragkit.document_checks import check_documents
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.file_kinds import doc_name, is_code
from ragkit.loaders.pages import chunk_pages
from ragkit.outline import label, outline

LONGEST = 128  # characters of one token: a longer run of word characters counts as several
TOKEN = re.compile(rf"\w{{1,{LONGEST}}}|[^\w\s]")
_ASCII_WORD_OR_SPACE = str.maketrans("", "", string.ascii_letters + string.digits + "_"
                                     + string.whitespace)
Measure = Callable[[Sequence[str]], list[int]]  # texts -> their lengths in a model's tokens
_HEADING_LINE = re.compile(r"[ \t]*#{1,6}[ \t][^\n]*\n?\s*")
_ROW_LINE = re.compile(r" {0,3}\|")  # a line opening a Markdown table row
OPENING_HEADINGS = 64  # heading lines a chunk may open with before its section is read

# Split points, coarsest first. Each regex marks where a new piece may begin.
PROSE_SEPARATORS = (
    re.compile(r"^#{1,6}\s", re.M),               # a Markdown heading line
    re.compile(r"\n[ \t]*\n"),                     # a blank line (paragraph)
    re.compile(r"\n"),                             # a line
    re.compile(r"(?<=[.!?。])\s+"),                # a sentence end
)
CODE_SEPARATORS = (
    re.compile(r"^(?:async\s+def|def|class|@|fn|pub|impl|struct|enum|trait|func|function|"
               r"export|public|private|protected|static|template|typedef|#define)\b", re.M),
    re.compile(r"\n[ \t]*\n"),
    re.compile(r"\n"),
)
def count_tokens(text: str) -> int:
    """Number of chunker tokens in `text`."""
    return len(TOKEN.findall(text))


def most_tokens(text: str) -> int:
    r"""An upper bound of `count_tokens(text)` from two C-speed passes (a regex pass over a
    600-character text costs ~35 µs; at a million documents that was 6 CPU s).

    Tokens never hold white space, so each lies in one of the text's white-space-separated
    pieces; in a piece every character outside `\w` is one token, and the word runs
    between them are at most one more than those characters. So the tokens are at most
    pieces + 2 × (characters neither white space nor `\w`), plus one per `LONGEST`
    characters for the runs cut into several tokens. Only ASCII word characters and ASCII
    white space are removed before counting: any other character counts, which can only
    raise the bound."""
    return (len(text.split()) + 2 * len(text.translate(_ASCII_WORD_OR_SPACE))
            + len(text) // LONGEST)


@dataclass(frozen=True)
class ChunkerConfig:
    """Chunk size and overlap in tokens; `size` also bounds documents kept whole."""

    size: int = 512
    overlap: int = 64

    def __post_init__(self) -> None:
        if self.size < 16:
            raise RagkitError(f"chunk size must be at least 16 tokens, got {self.size}")
        if not 0 <= self.overlap <= self.size // 2:
            raise RagkitError(f"overlap must be between 0 and half the chunk size "
                              f"({self.size // 2}), got {self.overlap}")


class Tokens:
    """Token start offsets of one text, for counting tokens in any character range."""

    def __init__(self, text: str) -> None:
        self.starts = [m.start() for m in TOKEN.finditer(text)]

    def count(self, start: int, end: int) -> int:
        return bisect_left(self.starts, end) - bisect_left(self.starts, start)

    def index(self, offset: int) -> int:
        return bisect_left(self.starts, offset)


def _cut_points(text: str, start: int, end: int, separator: re.Pattern) -> list[int]:
    """Offsets inside (start, end) where `separator` lets a new piece begin; a heading
    line, never one inside a Markdown code fence (the document's outline reads it blanked,
    `ragkit.outline.Outline.marked`, kept for the sections its chunks ask for next)."""
    points = []
    read = outline(text).marked if separator is PROSE_SEPARATORS[0] else text
    for match in separator.finditer(read, start, end):
        point = match.start() if separator.pattern.startswith("^") else match.end()
        if start < point < end:
            points.append(point)
    return points


def split_pieces(text: str, start: int, end: int, tokens: Tokens, budget: int,
                 separators: tuple[re.Pattern, ...], hard: int | None = None
                 ) -> list[tuple[int, int]]:
    """Split [start, end) into ranges of at most `budget` tokens, coarsest separator first;
    with no separator left, cut every `hard` (default `budget`) tokens."""
    if tokens.count(start, end) <= budget:
        return [(start, end)]
    if not separators:
        step = hard or budget
        first = tokens.index(start)
        last = tokens.index(end)
        cuts = [tokens.starts[i] for i in range(first + step, last, step)]
        bounds = [start, *cuts, end]
        return list(zip(bounds, bounds[1:]))
    points = _cut_points(text, start, end, separators[0])
    if not points:
        return split_pieces(text, start, end, tokens, budget, separators[1:], hard)
    bounds = [start, *points, end]
    out: list[tuple[int, int]] = []
    for lo, hi in zip(bounds, bounds[1:]):
        out.extend(split_pieces(text, lo, hi, tokens, budget, separators[1:], hard))
    return out


def _pack(pieces: list[tuple[int, int]], tokens: Tokens, budget: int) -> list[tuple[int, int]]:
    """Greedily merge consecutive pieces while the merged range stays within `budget`."""
    packed: list[tuple[int, int]] = []
    for lo, hi in pieces:
        if packed and tokens.count(packed[-1][0], hi) <= budget:
            packed[-1] = (packed[-1][0], hi)
        else:
            packed.append((lo, hi))
    return packed


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a range so it neither starts nor ends with white space."""
    if start == 0 and end == len(text):  # the whole text: str.strip's white space is isspace's
        stripped = text.lstrip()
        start = len(text) - len(stripped)
        return start, start + len(stripped.rstrip())
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _ranges(text: str, tokens: Tokens, lo: int, hi: int, config: ChunkerConfig,
            kind: str) -> list[tuple[int, int]]:
    """Trimmed chunk ranges of text[lo:hi]: whole if it fits, else recursive with overlap.

    Every range after the first starts up to `config.overlap` tokens before the end of the
    previous one's new material, at a word start outside a heading line (`overlap_start`),
    so a range never exceeds `config.size` tokens.
    """
    if tokens.count(lo, hi) <= config.size:
        return [trim(text, lo, hi)]
    separators = CODE_SEPARATORS if kind == "code" else PROSE_SEPARATORS
    budget = config.size - config.overlap
    out = []
    pieces = split_pieces(text, lo, hi, tokens, budget, separators)
    for n, (start, end) in enumerate(_pack(pieces, tokens, budget)):
        if n and config.overlap:
            back = max(lo, tokens.starts[max(0, tokens.index(start) - config.overlap)])
            start = overlap_start(text, back, start)
        start, end = trim(text, start, end)
        if start < end:
            out.append((start, end))
    return out


def overlap_start(text: str, back: int, start: int) -> int:
    """Where a chunk whose new material begins at `start` starts, its overlap reaching back
    to `back`: at `back` when a word starts there, else at the next word start, and past a
    heading line or a table row it would open inside, to the line after it (a row cut in
    two was quoted as "sensor failure | Restart |"). Counted back in tokens, the
    overlap began inside "4.2" ('.2 Packaging' opened a chunk and was quoted as an answer)
    or inside a word, and its section read the heading cut there ("4. Return shipping >
    4."). At `back` still when no word starts before `start` (a run of Chinese, a hex dump):
    a text without spaces keeps its overlap."""
    word = back
    while word < start and word and not text[word - 1].isspace():
        word += 1
    if word >= start:
        return back
    line = text.rfind("\n", 0, word) + 1
    if line < word and (_HEADING_LINE.match(text, line) or _ROW_LINE.match(text, line)):
        word = text.find("\n", word) + 1 or start
    return min(word, start)


def section_of(doc: Document, start: int, kind: str) -> list[str]:
    """Where a chunk starting at `start` sits: the Markdown heading path in force after the
    heading lines it opens with (prose; at most `OPENING_HEADINGS` of them: a document of
    thousands of heading lines in a row once made every chunk walk to the end of the run,
    100,000 lines in 8.7 s), the code definitions enclosing it (code), or the keys or table
    enclosing it (a configuration file, `ragkit.config_keys.key_path`)."""
    if kind == "code":
        name = doc_name(doc)
        if is_config_name(name):
            return [label(key) for key in key_path(name, doc.text, start)]
        return outline(doc.text).symbols(start)
    return outline(doc.text).headings(past_opening_headings(doc.text, start))


def past_opening_headings(text: str, start: int) -> int:
    """Where the heading lines a chunk starting at `start` opens with end (at most
    `OPENING_HEADINGS` of them): the offset whose headings in force include the chunk's
    own. Read from here, a chunk that opens on "## Returns" is in "Returns", not in the
    section before it. A chunk starting on "# " inside a line ("C# and F#") opens on no
    heading: a heading starts its line, at most three spaces in (a one-line 9.6 MB text read
    to its end for every such chunk); a chunk may start after the first marks of one (the
    overlap counts each "#" a token)."""
    marks = start
    while marks > 0 and text[marks - 1] == "#" and start - marks < 6:
        marks -= 1
    begins = marks  # where the line would start: at most three spaces before the marks
    while begins > 0 and text[begins - 1] == " " and marks - begins < 3:
        begins -= 1
    if begins > 0 and text[begins - 1] != "\n":
        return start
    for _ in range(OPENING_HEADINGS):
        line = _HEADING_LINE.match(text, start)
        if not line or line.end() <= start:
            break
        start = line.end()
    return start


def _chunk(doc: Document, ident: str, lo: int, hi: int, kind: str, **extra: str) -> Chunk:
    if kind == "code" and is_config_name(doc_name(doc)):
        lo = line_start(doc.text, lo)  # its indentation says where the line sits
    meta = {"chunker": kind, "title": label(doc.title or doc.id),
            "section": section_of(doc, lo, kind), **extra}
    if doc.metadata.get("pages"):  # a PDF's page map, cut to the chunk: citations name pages
        meta["pages"] = chunk_pages(doc.metadata["pages"], lo, hi)
    return Chunk(ident, doc.id, doc.text[lo:hi], "", lo, hi, meta)


def chunk_document(doc: Document, config: ChunkerConfig = ChunkerConfig()) -> list[Chunk]:
    """Chunks of one document: whole if it fits `config.size`, else recursive with overlap.

    Metadata: `chunker` (prose | code), `title` (the document's title, else its id) and
    `section` (`section_of`), which label passages in answer prompts; `pages` (the chunk's
    page map, `ragkit.loaders.pages.chunk_pages`) when the document has one (a PDF's).
    """
    kind = "code" if is_code(doc) else "prose"
    if (len(doc.text) <= config.size or most_tokens(doc.text) <= config.size
            or count_tokens(doc.text) <= config.size):
        ranges = [trim(doc.text, 0, len(doc.text))]  # kept whole (a token is ≥ 1 character)
    else:
        ranges = _ranges(doc.text, Tokens(doc.text), 0, len(doc.text), config, kind)
    return [_chunk(doc, f"{doc.id}#{n}", lo, hi, kind)
            for n, (lo, hi) in enumerate(r for r in ranges if r[0] < r[1])]


def chunk_children(doc: Document, parents: list[Chunk],
                   config: ChunkerConfig = ChunkerConfig(128, 16)) -> list[Chunk]:
    """Small chunks of each parent chunk of `doc`, for parent–child retrieval (the 2026 RAG
    best-practice notes: match small chunks, answer from their parent section). Child ids are
    `<parent id>.<m>`, offsets are the document's, and metadata `parent` names the parent.
    """
    tokens, children = Tokens(doc.text), []
    for parent in parents:
        kind = str(parent.metadata.get("chunker") or ("code" if is_code(doc) else "prose"))
        ranges = _ranges(doc.text, tokens, parent.start, parent.end, config, kind)
        children.extend(_chunk(doc, f"{parent.id}.{m}", lo, hi, kind, parent=parent.id)
                        for m, (lo, hi) in enumerate(r for r in ranges if r[0] < r[1]))
    return children


def chunk_documents(docs: Iterable[Document], config: ChunkerConfig = ChunkerConfig()
                    ) -> list[Chunk]:
    """Chunks of every document, in document order (`check_documents` first; any iterable,
    read once)."""
    docs = list(docs)
    check_documents(docs)
    return [chunk for doc in docs for chunk in chunk_document(doc, config)]
