"""Documents, chunks, queries and the loaders that read them (errors: `ragkit.errors`; JSON
Lines line by line: `ragkit.jsonl`).

What it is: the typed records every other module passes around, plus readers for the formats
users bring — JSONL documents and queries, a folder of Markdown/text/code files (the shipped
corpus: `ragkit.document_folder`), Anthropic's contextual-embeddings cookbook data set, and
BEIR.

What it is not: a chunker (see `ragkit.chunking`) or an index. Loaders validate as they read:
a malformed line, a missing field, a duplicate id or a binary document raises `RagkitError`
naming the file, line and field, so bad data never reaches an index.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragkit.errors import RagkitError, RagkitWarning, where  # noqa: F401 (the names' home)
from ragkit.jsonl import golden_files, parse_line, read_jsonl, require, require_page_map  # noqa
from ragkit.outline import one_line
from ragkit.text_stats import anchor


@dataclass(frozen=True)
class Document:
    """A whole source document: the unit users supply and golden labels point at."""

    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)  # no per-chunk __dict__: ~100 bytes less each
class Chunk:
    """A retrievable piece of a document; `context` is prepended before indexing."""

    id: str
    doc_id: str
    text: str
    context: str = ""
    start: int = 0
    end: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def indexed_text(self) -> str:
        """What BM25 and the embedder see: the context, a blank line, then the chunk."""
        return f"{self.context}\n\n{self.text}" if self.context else self.text


@dataclass(frozen=True)
class Golden:
    """One golden item of a query: a verbatim span of a document, or a whole chunk."""

    doc_id: str
    span: str = ""
    chunk_id: str = ""


@dataclass(frozen=True)
class Query:
    """A question, optionally with its golden items and reference answer."""

    id: str
    text: str
    answer: str = ""
    kind: str = ""
    split: str = ""
    golden: tuple[Golden, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    origin: str = field(default="", compare=False, repr=False)  # "file:line" it was read from


@dataclass
class Dataset:
    """Documents and queries that belong together; `chunks` when the source ships its own;
    `judged_by` the judgment files read for the queries (a BEIR folder's `qrels/test.tsv`, as
    the user names them), so a score can say what it scored; empty when each query carries
    its own golden items (it is not kept by `split`, which picks queries by their field)."""

    name: str
    documents: list[Document]
    queries: list[Query]
    chunks: list[Chunk] | None = None
    judged_by: tuple[str, ...] = ()

    def split(self, name: str | None) -> "Dataset":
        """The same corpus with only the queries of split `name` (all when None)."""
        if name is None:
            return self
        if not self.queries:
            raise RagkitError(f"{self.name}: no questions to score (a labelled folder needs "
                              f"golden/*.jsonl beside its documents)")
        queries = [q for q in self.queries if q.split == name]
        if not queries:
            known = sorted({q.split for q in self.queries})
            raise RagkitError(f"{self.name}: no queries in split '{name}' (splits: {known})")
        return Dataset(self.name, self.documents, queries, self.chunks)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")  # below 32, except \t \n \f \r
# shown as nothing, inside words: soft hyphen, zero-width space, word joiner, a mid-text BOM
INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff]")  # not U+200C/D: scripts need them


def composed(text: str) -> str:
    """`text` in Unicode's NFC form without `INVISIBLE` characters: macOS writes Hangul (and
    accents) decomposed, as jamo the embedders read as other words and a typed question
    never matches; "water\u00adproofing" was two words to BM25, not "waterproofing"."""
    return text if text.isascii() else unicodedata.normalize("NFC", INVISIBLE.sub("", text))


def check_text(text: str, path: Path | str, line: int | None, key: str = "text") -> str:
    """Reject empty and binary text (NUL bytes or mostly control characters)."""
    if not text.strip():
        raise RagkitError(f"{where(path, line, key)}: empty document")
    head = text[:4096]
    if "\x00" in text or (_CONTROL.search(head)
                           and len(_CONTROL.findall(head)) > len(head) * 0.1):
        raise RagkitError(f"{where(path, line, key)}: looks binary, not text")
    return text


class Ids:
    """Tracks ids seen so far to report duplicates with both locations."""

    def __init__(self, what: str) -> None:
        self.what, self.seen = what, {}

    def add(self, ident: str, path: Path | str, line: int) -> None:
        if ident in self.seen:
            first_path, first_line = self.seen[ident]
            first = f"line {first_line}" if first_path == path else where(first_path, first_line)
            raise RagkitError(f"{where(path, line, 'id')}: duplicate {self.what} id '{ident}' "
                              f"(first at {first})")
        self.seen[ident] = (path, line)


def _id_key(obj: dict) -> str:
    """`id`, or BEIR's `_id` when a line has only that (so BEIR's JSONL files read as they are)."""
    return "_id" if "id" not in obj and "_id" in obj else "id"


def document_of(obj: dict, path: Path | str, line: int, ids: Ids) -> Document:
    """The document of one parsed JSONL line, each field checked; its id added to `ids`. The
    title is put on one line (`ragkit.outline.one_line`), as a folder's front matter title
    is: its line breaks ran the `[Source: … | Section: …]` tag of every chunk over lines."""
    ident = str(require(obj, _id_key(obj), (str, int), path, line, non_empty=True))
    ids.add(ident, path, line)
    text = composed(check_text(require(obj, "text", str, path, line), path, line))
    title = one_line(composed(require(obj, "title", str, path, line, default="")))
    metadata = require(obj, "metadata", dict, path, line, default={})
    if "pages" in metadata:
        require_page_map(metadata["pages"], path, line)
    return Document(ident, text, title, metadata)



def load_documents_jsonl(path: Path | str) -> list[Document]:
    """Read documents JSONL: `{"id", "text", "title"?, "metadata"?}` per line (or BEIR's `_id`)."""
    ids = Ids("document")
    docs = [document_of(obj, path, line, ids) for line, obj in read_jsonl(path)]
    if not docs:
        raise RagkitError(f"{path}: no documents")
    return docs


GOLDEN_KEYS = ("doc_id", "span", "chunk_id")


def parse_golden(items: list, path: Path | str, line: int) -> tuple[Golden, ...]:
    """A line's `golden` list checked: each an object with a `doc_id` (text or a number) and,
    if given, a text `span` and `chunk_id`, and no other key — a misspelled "spam" would make
    a span label a whole-document one and change every score; a bad item names file, line and
    `golden[i]`."""
    golden = []
    for i, item in enumerate(items):
        label = f"golden[{i}]"
        doc = item.get("doc_id") if isinstance(item, dict) else None
        if not isinstance(doc, (str, int)) or isinstance(doc, bool):
            raise RagkitError(f"{where(path, line, label)}: expected an object with 'doc_id'"
                              + _misspelt(item, "doc_id"))
        unknown = [key for key in item if key not in GOLDEN_KEYS]
        if unknown:
            raise RagkitError(f"{where(path, line, f'{label}.{unknown[0]}')}: unknown key (a "
                              f"golden item has {', '.join(GOLDEN_KEYS)})"
                              + _misspelt({unknown[0]: 0}, *GOLDEN_KEYS))
        for key in ("span", "chunk_id"):
            if not isinstance(item.get(key, ""), str):
                raise RagkitError(f"{where(path, line, f'{label}.{key}')}: expected str, got "
                                  f"{type(item[key]).__name__}")
            if key in item and not item[key].strip():  # scored as "any chunk of the document"
                raise RagkitError(f"{where(path, line, f'{label}.{key}')}: empty (leave the "
                                  f"key out to label the whole document)")
        golden.append(Golden(str(doc), composed(item.get("span", "")), item.get("chunk_id", "")))
    return tuple(golden)


MAX_QUERY_CHARS = 100_000  # a pasted page is a query; a pasted book is a mistake


def check_query_length(text: str, place: str) -> str:
    """`text`, or RagkitError at `place` when it is over `MAX_QUERY_CHARS` (one query of
    14 MB cost the offline reranker 48 s and 3.6 GB)."""
    if len(text) > MAX_QUERY_CHARS:
        raise RagkitError(f"{place}: {len(text):,} characters, over the {MAX_QUERY_CHARS:,} a "
                          f"query may have")
    return text


def _misspelt(obj: Any, *wanted: str) -> str:
    """" (is 'gloden' a misspelling of 'golden'?)" when a key of `obj` that is not a `wanted`
    one is close to one."""
    if not isinstance(obj, dict):
        return ""
    for key in obj:
        close = difflib.get_close_matches(str(key), wanted, n=1, cutoff=0.6)
        if close and key not in wanted:
            return f" (is '{key}' a misspelling of '{close[0]}'?)"
    return ""


def load_queries_jsonl(path: Path | str, ids: Ids | None = None,
                       golden: bool = False) -> list[Query]:
    """Read queries JSONL: `{"id", "text"|"question", "golden"?, "answer"?, "kind"?, "split"?}`.

    BEIR's `_id` is read as `id` when a line has no `id` (BEIR's queries.jsonl works as is);
    `ids` holds the ids read from other files, so duplicates across files are found.
    `golden`: every line must have its `golden` list ([] for an unanswerable question): a
    missing or misspelled one would silently make a question unanswerable."""
    queries, ids = [], ids or Ids("query")
    for line, obj in read_jsonl(path):
        ident = str(require(obj, _id_key(obj), (str, int), path, line, non_empty=True))
        ids.add(ident, path, line)
        key = "question" if "question" in obj and "text" not in obj else "text"
        two = [obj.get(name) for name in ("text", "question")]
        if key not in obj or all(isinstance(t, str) for t in two) and two[0] != two[1]:
            raise RagkitError(f"{where(path, line, 'text')}: " + (
                "missing (a query needs 'text' or 'question')" if key not in obj else
                "differs from 'question' on its line (a query has one text: keep one)"))
        text = composed(check_query_length(require(obj, key, str, path, line, non_empty=True),
                                           where(path, line, key)))
        if golden and "golden" not in obj:
            raise RagkitError(f"{where(path, line, 'golden')}: missing (a golden question has "
                              f"a list, [] when unanswerable){_misspelt(obj, 'golden')}")
        items = parse_golden(require(obj, "golden", list, path, line, default=[]), path, line)
        meta = {k: v for k, v in obj.items()
                if k not in {"id", "_id", key, "golden", "answer", "kind", "split"}}
        # labels are text: `"split": 3` was shown as a split "3", `"kind": ["x"]` as "['x']"
        kind, split, _ = (require(obj, k, str, path, line, default="")
                          for k in ("kind", "split", "lang"))
        answer = require(obj, "answer", (str, int, float), path, line, default="")
        queries.append(Query(ident, text, str(answer), kind, split, items, meta,
                             where(path, line)))
    return queries


def load_golden(path: Path | str) -> list[Query]:
    """Golden queries from one JSONL file or a folder's `golden_files`, ids unique overall."""
    path = Path(path)
    files = golden_files(path) if path.is_dir() else [path]
    ids = Ids("query")
    return [query for file in files for query in load_queries_jsonl(file, ids, golden=True)]


def check_golden(queries: list[Query], documents: list[Document],
                 source: Path | str) -> list[Query]:
    """Every golden item must name an existing document and, for spans, occur in its text
    (white space aside: the text's own is kept). Returns `queries` with each golden document
    id written as the document's own: a name that differs only in its Unicode form (a file
    copied from macOS is named in NFD; a label typed elsewhere is NFC) names the same
    document — "no document '환불정책.md'" beside that very file helps no one."""
    by_id = {d.id: d for d in documents}
    by_form: dict[str, str] = {}
    for ident in by_id:
        by_form.setdefault(unicodedata.normalize("NFC", ident), ident)
    out = []
    for query in queries:
        golden = []
        for i, gold in enumerate(query.golden):
            label = f"{query.origin or source}: query '{query.id}': field 'golden[{i}]"
            if gold.doc_id not in by_id:
                gold = replace(gold, doc_id=by_form.get(unicodedata.normalize("NFC", gold.doc_id),
                                                        gold.doc_id))
            if gold.doc_id not in by_id:
                raise RagkitError(f"{label}.doc_id': no document '{gold.doc_id}'")
            if gold.span and gold.span not in by_id[gold.doc_id].text:  # white space aside?
                if (found := anchor(gold.span, by_id[gold.doc_id].text)) is None:
                    raise RagkitError(f"{label}.span': not in '{gold.doc_id}', even with its "
                                      f"white space aside: {gold.span[:80]!r}")
                gold = replace(gold, span=found)  # the document's own text of it
            golden.append(gold)
        out.append(query if tuple(golden) == query.golden
                   else replace(query, golden=tuple(golden)))
    return out
