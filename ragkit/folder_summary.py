"""What a folder load gave, for a person to check: one row per file, and a chunk to show.

What it is: `file_summary(docs)` — one row per file (format, pages, headings, characters,
chunks, and why a file was skipped or not read at all) for a notebook's table —,
`example_chunk(chunks)`, a chunk worth showing from whatever formats a folder has, and
`chunk_label(chunk)`, its id and the pages it spans ("…pdf#0, p. 1") as a reader reads them.
What it is not: the loading (`ragkit.document_folder.load_folder`).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragkit.file_kinds import CODE_NAMES, is_code, is_recipe_name
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.fences import unfenced
from ragkit.loaded_folder import Skipped
from ragkit.loaders import LOADERS
from ragkit.loaders.folder import escaped

UNREAD = "not a type of file ragkit reads"
LINKED = "a symbolic link to a folder, not followed"
BROKEN = "a broken symbolic link (to nothing, or in a loop)"
_HEADING_LINE = re.compile(r"^#{1,6}[ \t]+\S", re.M)


def file_summary(docs: list[Document], skipped: list[Skipped] | None = None,
                 chunks: Sequence[Chunk] | None = None) -> list[dict[str, Any]]:
    """One row per file of a load, for a table: `file`, `format` (`file_format`), `pages`
    (PDF), `headings`
    (`#` lines the heading path is read from; 0 for source files, `ragkit.file_kinds.is_code`),
    `chars`, `chunks` (only when the index's `chunks` are given) and `skipped` (why, without
    the file's name, which is the row's; else ''). `skipped` defaults to `docs.skipped` when
    `docs` is a `Loaded`, whose `unread` files (a type ragkit does not read), `linked`
    folders (symbolic links, not followed), `broken` links and `outputs` (folders ragkit
    wrote, an index or cookbook results, not read) are rows too."""
    if skipped is None:
        skipped = getattr(docs, "skipped", [])
    skipped = [*skipped, *(Skipped(name, f"{name}: {UNREAD}")
                           for name in getattr(docs, "unread", [])),
               *(Skipped(name, f"{name}: {LINKED}") for name in getattr(docs, "linked", [])),
               *(Skipped(name, f"{name}: {BROKEN}") for name in getattr(docs, "broken", [])),
               *getattr(docs, "outputs", [])]
    counts = Counter(c.doc_id for c in chunks) if chunks is not None else None
    rows = []
    for doc in docs:
        pages = doc.metadata.get("pages")
        rows.append({"file": doc.id, "format": file_format(doc.id),
                     "pages": len(pages) if pages else None,
                     "headings": 0 if is_code(doc) else len(  # no fenced `# comment`
                         _HEADING_LINE.findall(unfenced(doc.text))),
                     "chars": len(doc.text), "skipped": ""})
        if counts is not None:
            rows[-1]["chunks"] = counts.get(doc.id, 0)
    for s in skipped:
        _, named, reason = s.reason.partition(f"{s.path}: ")
        rows.append({"file": s.path, "format": file_format(s.path),
                     "pages": None, "headings": 0, "chars": 0,
                     **({"chunks": 0} if counts is not None else {}),
                     "skipped": reason if named else s.reason})
    return sorted(rows, key=lambda row: row["file"])


def file_format(name: str) -> str:
    """The format a file named `name` is read as: its loader's ("html" for `.htm`, "docx" for
    a Word template), else its suffix ("md", "py"), else a build recipe's name in lower case
    ("dockerfile"), else "(no suffix)" (a skipped `LICENSE` or `gzip-news` showed its own
    name as its format).
    Not the document's `format` metadata: a Markdown file's front matter may hold a `format:`
    key of its own (`format: slides`), which stays in the metadata under that name but named
    the file's format in the table. A recipe's variant is the recipe: `Dockerfile.dev` is a
    "dockerfile" (`ragkit.file_kinds.is_recipe_name`), not a "dev"."""
    base = Path(name).name
    if is_recipe_name(base):
        return base.lower().partition(".")[0]
    suffix = Path(name).suffix.lower()
    return LOADERS.get(suffix) or suffix.lstrip(".") or (
        base.lower() if base.lower() in CODE_NAMES else "(no suffix)")


def example_chunk(chunks: Sequence[Chunk], formats: Sequence[str] = (".pdf", ".docx", ".html")
                  ) -> Chunk:
    """A chunk to show as an example: the first with a context from a file of the first of
    `formats` the chunks have (a PDF's, when there is one), else the first with a context,
    else the first chunk. For a notebook reading any folder: a folder without PDFs is not an
    error. Raises RagkitError for no chunks at all."""
    if not chunks:
        raise RagkitError("no chunks: the folder gave no text to show")
    for suffix in formats:
        for chunk in chunks:
            if chunk.context and chunk.doc_id.lower().endswith(suffix):
                return chunk
    return next((c for c in chunks if c.context), chunks[0])



def chunk_label(chunk: Chunk) -> str:
    """A chunk's id and, for a PDF's, the pages its text spans as a citation names them —
    "manuals/guide.pdf#0, p. 1", "…#3, pp. 4–5" — from its page map (`metadata["pages"]`,
    `[[page, offset], ...]`); notebook 08 printed that map as it is, "(pages [[1, 0]])".
    Control characters of the id are escaped (`\\x1b`), as every name a notebook prints."""
    pages = sorted({int(page) for page, _ in chunk.metadata.get("pages") or ()})
    if not pages:
        return escaped(chunk.id)
    span = f"p. {pages[0]}" if len(pages) == 1 else f"pp. {pages[0]}–{pages[-1]}"
    return f"{escaped(chunk.id)}, {span}"
