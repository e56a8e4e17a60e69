"""Loaders for the binary and markup formats a folder may hold: PDF, HTML and Word (DOCX).

What it is: `load_file(path, rel)` reads one such file into a `Document` whose text is
Markdown-shaped — `#` lines for its headings (PDF outline entries, `<h1>`-`<h6>`, Word's
`Heading N` styles), a blank line between paragraphs, a table row as `| cell | cell |` — so
the chunker, the structural contextualizer and the `[Source | Section]` tags read its heading
path exactly as they read a Markdown file's. Metadata: `path`, `format`, `title` and, for a
PDF, `pages` (`[[page, offset], ...]`: page `page` starts at `offset` of the text; see
`ragkit.loaders.pages`), and `load_note` when the file was read with a loss worth a warning
(a PDF cut short, glyphs it cannot map to text), which `ragkit.document_folder` takes out of
the metadata and warns of, naming the file.

What it is not: OCR (a scanned PDF with no text layer is refused), a crawler, nor a layout
engine: headers, footers and columns of a PDF come out in the order its text layer holds.

Beside them: `ragkit.loaders.text` reads a text file (byte order marks, a size bound, never
a FIFO) and `ragkit.loaders.folder` decides which entries of a folder are read at all
(nothing through a symbolic link out of the folder, no name a terminal would obey).

Each format's library is imported only when a file of that format is met (`ragkit search`
never loads pdfminer). A file that cannot be read raises one `RagkitError` line naming it;
an empty one (0 bytes: a download or a copy that did not finish) says so.
"""
from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ragkit.documents import Document, RagkitError
from ragkit.loaders.text import not_regular

# suffix -> module of ragkit.loaders whose `load(path, rel)` reads it
LOADERS = {".pdf": "pdf", ".html": "html", ".htm": "html", ".xhtml": "html", ".docx": "docx",
           ".docm": "docx", ".dotx": "docx", ".dotm": "docx"}  # Word: documents, templates
LOAD_NOTE = "load_note"  # metadata: what was lost reading the file (a warning, not kept)


def load_file(path: Path, rel: str, suffix: str | None = None) -> Document:
    """The document of one PDF, HTML or DOCX file (`LOADERS`, by `suffix`, else the path's);
    its id is `rel`."""
    check_not_empty(path)
    module = import_module(f"ragkit.loaders.{LOADERS[(suffix or path.suffix).lower()]}")
    return module.load(path, rel)


def note(notes: list[str]) -> dict[str, str]:
    """The metadata that carries `notes` (`LOAD_NOTE`), none when there are none."""
    return {LOAD_NOTE: "; ".join(notes)} if notes else {}


def check_not_empty(path: Path) -> None:
    """Refuse a 0-byte file with a line that says so (each format's parser would blame its
    syntax: "No /Root object", "not a zip archive", "no body text"), and anything but a
    regular file (a FIFO would block the parser's open)."""
    try:
        info = path.stat()
    except OSError as exc:
        raise RagkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if why := not_regular(info.st_mode):  # a FIFO would block the parser's open
        raise RagkitError(f"{path}: {why}")
    if info.st_size == 0:
        raise RagkitError(f"{path}: empty file (0 bytes)")
