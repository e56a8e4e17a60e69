"""Which passages the questions are written about: a seeded sample of chunks per kind.

What it is:
- `quotas(n, kinds)`: how many questions of each kind, from `--kinds` (`lexical,contextual`
  shares equally; `lexical=3,contextual=1` by weight), by largest remainder so they sum to n;
- `sample(documents, chunks, quotas, seed)`: `Item`s — a kind, a document and its chunk (two
  for multi-chunk) — drawn with `random.Random(seed)`, the documents taking turns (a big file
  gets no more questions than a small one until every document has had one), each chunk
  used at most once, so two questions never come from one passage. The kinds are filled most constrained first:
  `contextual` takes chunks that do not name their document (`names_document`), then
  `multi-chunk` takes two chunks of one document, then the other kinds share what is left.
  A chunk is usable when it holds at least `MIN_WORDS` words outside Markdown headings:
  shorter ones (a heading, a signature) have nothing to ask about. A corpus with fewer
  usable chunks than the quotas need gets every quota scaled down alike (`fit_quotas`), and
  what `contextual` or `multi-chunk` cannot find goes to the other kinds by their shares —
  so a small folder still gets paraphrase and unanswerable questions, not only the kind
  filled first.

What it is not: a chunker. The chunks are the index's (`ragkit.chunking.chunk_document` with
the index's chunk size and overlap), so a span maps onto what `ragkit index` holds.
"""
from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ragkit.documents import Chunk, Document, RagkitError
from ragkit.questions.defaults import DEFAULT_SHARES, KINDS

MIN_WORDS = 20
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_NAME_KEYS = ("title", "company", "product", "name", "organisation", "organization")

MAX_WEIGHT = 1e6  # a kind's share; a larger weight only overflows the quotas


@dataclass(frozen=True)
class Item:
    """One question to write: its kind, its document and the chunk(s) it is about."""

    kind: str
    document: Document
    chunks: tuple[Chunk, ...]


def parse_kinds(text: str | None) -> dict[str, float]:
    """`--kinds`: None → `DEFAULT_SHARES`; `a,b` → equal shares; `a=3,b=1` → weights."""
    if not text:
        return dict(DEFAULT_SHARES)
    shares: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, weight = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise RagkitError(f"--kinds: unknown kind '{name}' (known: {', '.join(KINDS)})")
        if name in shares:  # the last weight was kept, silently
            raise RagkitError(f"--kinds: '{name}' is given twice")
        try:
            value = float(weight) if weight else 1.0
        except ValueError:
            value = -1.0
        if not 0 < value <= MAX_WEIGHT:  # "inf" and "1e308" made the quotas NaN
            raise RagkitError(f"--kinds: the weight of '{name}' must be a number > 0 and "
                              f"at most {MAX_WEIGHT:g}, "
                              f"got '{weight}'")
        shares[name] = value
    if not shares:
        raise RagkitError("--kinds: no kind given")
    return shares


def quotas(n: int, shares: dict[str, float]) -> dict[str, int]:
    """n split by the shares (largest remainder; ties in `KINDS` order)."""
    total = sum(shares.values())
    exact = {k: n * w / total for k, w in shares.items()}
    out = {k: int(v) for k, v in exact.items()}
    rest = sorted(shares, key=lambda k: (-(exact[k] - out[k]), KINDS.index(k)))
    for k in rest[:n - sum(out.values())]:
        out[k] += 1
    return out


def _cost(wanted: dict[str, int]) -> int:
    """Chunks the quotas use: two per multi-chunk question, one per other."""
    return sum(count * (2 if kind == "multi-chunk" else 1) for kind, count in wanted.items())


def fit_quotas(wanted: dict[str, int], chunks: int) -> dict[str, int]:
    """`wanted` as is when its questions fit in `chunks` usable chunks; else the largest
    total whose quotas, split by the same shares, fit. The search starts at `chunks` (every
    question uses a chunk), not at the total asked: from `--n 100000000` it stepped down one
    question at a time for 45 minutes over 6 usable chunks."""
    if _cost(wanted) <= chunks:
        return dict(wanted)
    shares = {kind: count for kind, count in wanted.items() if count}
    total = min(sum(shares.values()), chunks)
    while total > 0 and _cost(quotas(total, shares)) > chunks:
        total -= 1
    scaled = quotas(total, shares) if total else {}
    return {kind: scaled.get(kind, 0) for kind in wanted}


def names_of(doc: Document) -> set[str]:
    """What names a document: its title and name-like metadata (the file name's stem when
    it has no title of its own), lower-cased, every run of white space one space, each at
    least 3 characters. A list's items name it each (front matter's `product: [EG-400,
    EG-500]`): the list's Python text, `['EG-400', 'EG-500']`, was taken for a name no
    passage holds. A title wrapped over two lines (a PDF's) is one name, not "…\\n…"."""
    values = [doc.metadata.get(k, "") for k in _NAME_KEYS]
    names = {str(item) for value in values
             for item in (value if isinstance(value, list) else [value])}
    if doc.title and doc.title != doc.id:
        names.add(doc.title)
    else:
        names.add(PurePosixPath(doc.id).stem.replace("_", " ").replace("-", " "))
    folded = (_SPACE.sub(" ", n).strip().lower() for n in names)
    return {n for n in folded if len(n) >= 3}


def names_document(chunk: Chunk, doc: Document) -> bool:
    """True when the chunk's text names its document (any of `names_of`, ignoring case and
    white space: "the Kestrel\\nEG-400" of a hard-wrapped passage names "Kestrel EG-400", so
    its chunk is no contextual question's, whose passage must not name its document)."""
    text = _SPACE.sub(" ", chunk.text.lower())
    return any(name in text for name in names_of(doc))


def usable(chunk: Chunk) -> bool:
    """At least `MIN_WORDS` words outside Markdown heading lines."""
    body = "\n".join(line for line in chunk.text.splitlines()
                     if not line.lstrip().startswith("#"))
    return len(_WORD.findall(body)) >= MIN_WORDS


def sample(documents: Sequence[Document], chunks: Sequence[Chunk], wanted: dict[str, int],
           seed: int = 0) -> list[Item]:
    """The items to write (see the module docstring); fewer than asked when the corpus runs
    out of usable chunks of a kind (the caller reports the shortfall)."""
    rng = random.Random(seed)
    docs = {d.id: d for d in documents}
    pool = _interleaved([c for c in chunks if c.doc_id in docs and usable(c)], rng)
    wanted = fit_quotas(wanted, len(pool))
    used: set[str] = set()
    items: list[Item] = []

    def take(kind: str, count: int, fits=lambda c: True) -> None:
        for chunk in pool:
            if count <= 0:
                return
            if chunk.id not in used and fits(chunk):
                used.add(chunk.id)
                items.append(Item(kind, docs[chunk.doc_id], (chunk,)))
                count -= 1

    take("contextual", wanted.get("contextual", 0),
         lambda c: not names_document(c, docs[c.doc_id]))
    _pairs(pool, docs, used, items, wanted.get("multi-chunk", 0))
    rest = {k: wanted[k] for k in ("lexical", "paraphrase", "unanswerable") if wanted.get(k)}
    short = len(items) - wanted.get("contextual", 0) - wanted.get("multi-chunk", 0)
    extra = quotas(-short, rest) if rest and short < 0 else {}
    for kind in rest:  # the constrained kinds' shortfall, shared by the others
        take(kind, rest[kind] + extra.get(kind, 0))
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(items, key=lambda it: (order[it.kind], pool.index(it.chunks[0])))


def _interleaved(pool: list[Chunk], rng: random.Random) -> list[Chunk]:
    """`pool` shuffled so the documents take turns: each document's chunks in a random
    order, the documents in a random order, then one chunk of each in turn. Shuffled as one
    list, a 23 MB log among 27 notes gave 24 of 45 questions (and its template questions
    half the failures); now a document gets a second question only once every document with
    a usable chunk has one."""
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in pool:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    lists = list(by_doc.values())
    for chunks in lists:
        rng.shuffle(chunks)
    rng.shuffle(lists)
    return [chunks[i] for i in range(max(map(len, lists), default=0))
            for chunks in lists if i < len(chunks)]


def _pairs(pool: list[Chunk], docs: dict[str, Document], used: set[str], items: list[Item],
           count: int) -> None:
    """Multi-chunk items: the next unused chunk in the shuffled pool and the next unused,
    non-adjacent chunk of the same document (two separate places of it)."""
    for first in pool:
        if count <= 0:
            return
        if first.id in used:
            continue
        second = next((c for c in pool if c.doc_id == first.doc_id and c.id not in used
                       and c.id != first.id and (c.end < first.start or c.start > first.end)),
                      None)
        if second is None:
            continue
        pair = tuple(sorted((first, second), key=lambda c: c.start))
        used.update(c.id for c in pair)
        items.append(Item("multi-chunk", docs[first.doc_id], pair))
        count -= 1
