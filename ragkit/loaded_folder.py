"""What a folder load gave beside its documents: what it left out, and why.

What it is:
- `Skipped(path, reason, unreadable)`: a file (or a folder that could not be listed) that
  `load_folder(..., skip_bad=True)` left out. `unreadable` marks one that is there but could
  not be opened now (`unreadable_now`: its permissions, say): what it holds is unknown, not
  bad, so `ragkit index --update` keeps the version the index holds (`kept_in_index`,
  `kept_note`, in its place: `in_folder_order`) where it dropped the document as if the file
  had been deleted.
- `Loaded`: the documents, a list, with `skipped`, `unread`, `linked`, `broken` and
  `outputs` (the folders ragkit wrote — an index, a results folder of `ragkit cookbook` —
  which are not read as documents).
- `ragkit_output(folder)`: what such a folder is, from its marker: an index's `index.json`,
  a results folder's `.ragkit-results` (`ragkit.notebook_runner.mark` writes it last, listing
  the report, results.json, summary.md, the executed notebooks and their records, and any
  sweep's output). Read back as documents, a report became chunks, and notebook 08 asked
  questions about its own earlier report.
- `removed_while_read(path)`: the line for a file that went away between the listing and
  its reading ("cannot read (No such file or directory)" read as a fault of the file), or
  whose path is too long to open.
- `without_skipped(queries, documents, source)`: labelled questions without those about a
  file the load left out, with one warning naming the files (`ragkit eval --skip-bad`, for a
  data set's golden/ and for `--questions` alike).
- `warn_beside(root, read, suffixes)`: one warning naming the documents a data set folder
  holds beside the `corpus/` (or `documents.jsonl`) it reads.

What it is not: the reading (`ragkit.document_folder`), nor the table of a load
(`ragkit.folder_summary`).
"""
from __future__ import annotations

import errno
import heapq
import os
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragkit.documents import Document, Query, RagkitWarning
from ragkit.index_owner import is_index
from ragkit.jsonl import read_json
from ragkit.loaders.folder import shown
from ragkit.text_stats import counted

RESULTS_MARKER = ".ragkit-results"  # written by `ragkit.notebook_runner.mark` (run and sweep)
_GONE = (errno.ENOENT, errno.ENOTDIR)


@dataclass(frozen=True)
class Skipped:
    """A file `load_folder(..., skip_bad=True)` left out, and why (its error line);
    `unreadable`: it is there, but could not be opened now (see the module docstring)."""

    path: str  # relative to the folder
    reason: str
    unreadable: bool = False


class Loaded(list):
    """The documents of a folder, in path order — a list, as `load_folder` always returned
    — `skipped`: the files left out under `skip_bad`, each with its reason, `unread`: the
    files of a type ragkit does not read (`.tex`, `.csv`, images), `linked`: the symbolic
    links to folders, not followed, `broken`: those to nothing or in a loop, and `outputs`:
    the folders ragkit wrote, not read (each a `Skipped` saying what it is); relative
    paths."""

    def __init__(self, documents: list[Document], skipped: list[Skipped],
                 unread: list[str] | None = None, linked: list[str] | None = None,
                 broken: list[str] | None = None, outputs: list[Skipped] | None = None
                 ) -> None:
        super().__init__(documents)
        self.skipped, self.unread = skipped, unread or []
        self.linked, self.broken, self.outputs = linked or [], broken or [], outputs or []


def ragkit_output(folder: Path) -> str | None:
    """What ragkit wrote `folder` as — "a ragkit index folder", "a ragkit results folder
    (ragkit cookbook run)" — or None for a folder ragkit did not mark as its own."""
    if is_index(folder):
        return "a ragkit index folder"
    try:
        marker = read_json(folder / RESULTS_MARKER)
    except (OSError, ValueError):  # RagkitError too: not JSON, or too deep to read
        return None
    if not isinstance(marker, dict) or not isinstance(marker.get("files"), list):
        return None
    by = marker.get("written_by")
    known = isinstance(by, str) and by.startswith("ragkit cookbook ") and by.isprintable()
    return "a ragkit results folder" + (f" ({by[:40]})" if known else "")


def removed_while_read(path: Path) -> str | None:
    """The error line for a listed file (or folder) the load cannot reach by its path, not a
    fault of the file: no longer there — deleted or moved after the folder was listed — or
    a path longer than the system opens (ENAMETOOLONG: 2,100 nested folders, which
    `os.path.lexists` called absent, so "removed"); None when it is there (or another error
    stopped the look: the load's own line then stands)."""
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return (f"{shown(path)}: path too long ({len(os.fsencode(path)):,} bytes, more "
                    f"than the system opens); shorten its folders' names or move it nearer the top")
        if exc.errno in _GONE:
            return f"{shown(path)}: removed while the folder was read"
    return None


def unreadable_now(path: Path) -> bool:
    """Whether `path`, a file or folder that is there, cannot be opened (or listed) now: no
    read permission, too many open files. Not a link changed to lead nowhere or loop, nor a
    file that opens (its bytes are what is wrong with it)."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            with os.scandir(path):
                return False
        fd = os.open(os.path.realpath(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return exc.errno not in (*_GONE, errno.ELOOP)
    os.close(fd)
    return False


def kept_in_index(indexed: Iterable[str], documents: Sequence[Document]) -> list[str]:
    """Of the `indexed` document ids (in index order), those a load `documents` could not
    open now (`Skipped.unreadable`): the file itself, or every file under a folder that
    could not be listed. An index update keeps them as they are indexed."""
    paths = [s.path for s in getattr(documents, "skipped", []) if s.unreadable]
    if not paths:
        return []
    files, folders = set(paths), tuple(f"{path}/" for path in paths)
    return [doc_id for doc_id in indexed if doc_id in files or doc_id.startswith(folders)]


def kept_note(kept: Sequence[str]) -> str:
    """One line on the documents an update kept as indexed, their files unreadable now."""
    names = ", ".join(shown(doc_id) for doc_id in kept[:5]) + (", …" if len(kept) > 5 else "")
    what = ("version of 1 document whose file is" if len(kept) == 1
            else f"versions of {len(kept)} documents whose files are")
    return (f"kept the indexed {what} there but cannot be read now: {names} (make "
            f"{'it' if len(kept) == 1 else 'them'} readable and update again)")


def in_folder_order(ids: Sequence[str], kept: Sequence[str]) -> list[str]:
    """The document ids of a folder load (`ids`, in its path order: `load_folder` sorts the
    entries by path, part by part) with the `kept` ids among them where a load that could
    read them would put them — so an update that keeps them leaves the index's chunks in
    the order a fresh build gives (ties rank by chunk position), not moved to its end."""
    def parts(doc_id: str) -> list[str]:
        return doc_id.split("/")
    return list(heapq.merge(ids, sorted(kept, key=parts), key=parts))


def without_skipped(queries: list[Query], documents: list[Document],
                    source: Path) -> list[Query]:
    """`queries` without those about a file `skip_bad` left out (`load_folder`'s `skipped`),
    with one `RagkitWarning` naming the files: they cannot be scored, and "no document
    'fridge.md'" did not say the file was skipped. Not a check: a question about a file that
    is not there at all is still refused by `check_golden`."""
    skipped = {unicodedata.normalize("NFC", e.path) for e in getattr(documents, "skipped", [])}
    gone = [{g.doc_id for g in query.golden if unicodedata.normalize("NFC", g.doc_id) in skipped}
            for query in queries]
    files = sorted(set().union(*gone))
    if not files:
        return queries
    kept = [query for query, left in zip(queries, gone) if not left]
    warnings.warn(f"{source}: left out {counted(len(queries) - len(kept), 'question')} about "
                  f"{counted(len(files), 'file')} --skip-bad skipped: {', '.join(files)}",
                  RagkitWarning, stacklevel=3)
    return kept


# a data set folder's files about it, not documents (the held-out sets' SOURCE.txt too)
_ABOUT = ("README", "LICENSE", "LICENCE", "SOURCE", "NOTICE", "COPYING", "AUTHORS",
          "CHANGELOG", "CHANGES", "CONTRIBUTING", "CITATION")


def warn_beside(root: Path, read: str, suffixes: set[str]) -> None:
    """Warn of the files of `suffixes` beside `read` in the data set folder `root` but those
    about it (`_ABOUT`): `expenses.md` next to `corpus/` was left out unsaid."""
    found = sorted(p.name for p in root.iterdir() if p.is_file() and p.name != "documents.jsonl"
                   and p.suffix.lower() in suffixes
                   and not p.name.upper().startswith(_ABOUT))
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    move = ": move them there to index them" if read == "corpus/" else ""
    if found:
        warnings.warn(RagkitWarning(f"{root}: not read, beside {read}: {', '.join(found[:3])}"
                                    f"{more} (a data set's documents are those of {read}{move})"),
                      stacklevel=3)
