"""A folder of documents: the shipped corpus's layout, and any user's.

What it is: `load_folder(root)` — every Markdown, text or source file (`TEXT_SUFFIXES`) and
every PDF, HTML or Word file (`ragkit.loaders.LOADERS`) under `root` becomes a `Document`
whose id is its posix path relative to `root`. A Markdown or text file may open with front
matter (`ragkit.loaders.front_matter`), which becomes metadata (and the title), not text; a
source or data file's `---` is text (a YAML stream's first document, an SQL banner). A PDF,
HTML or Word file's headings become `#` lines of its text, so every format's heading path
feeds the chunker, the structural contextualizer and the `[Source | Section]` tags alike.

A file that cannot be read (not UTF-8, empty, binary; a PDF with no text layer, encrypted or
damaged; a page with no body text; a damaged Word file; one removed since the folder was
listed, said so) stops the load with one line naming it — or, with `skip_bad=True`, is left
out with a warning and listed in `Loaded.skipped` (marked `unreadable` when it is there but
cannot be opened now: `ragkit.loaded_folder`). So does an entry of a stranger's folder
that must not be read (`ragkit.loaders.folder`): a symbolic link leading out of the folder,
nowhere or round in a loop, a FIFO, socket or device, a name that is not UTF-8 or holds a
control character. A folder ragkit wrote inside the folder — an index, a `ragkit cookbook`
results folder — is not read and is listed in `Loaded.outputs` (an index written into the
folder it indexes would be read on the next run, a report would become chunks).
A file of a type ragkit does not read is left out and listed in `Loaded.unread`
(`unread_note` says it in one line; `ragkit.folder_summary.file_summary` tabulates a load),
a symbolic link to a folder (not followed) in `Loaded.linked` (`linked_note`; not one to a
folder inside, read under its own path), one of such a name to nothing or in a loop in
`Loaded.broken` (`broken_note`).
A folder with a megabyte or more of PDF, HTML and Word files is read by one worker per core
(pdfminer is pure Python: 1,000 pages take about 28 CPU seconds, `benchmarks/bench_loaders.py`).

What it is not: a crawler (no links followed), OCR, nor a watcher: re-read the folder (or
`ragkit index --update`) after files change.
"""
from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ragkit.jobs
from ragkit.file_kinds import PROSE_SUFFIXES, is_recipe_name
from ragkit.documents import Document, RagkitError, RagkitWarning, check_text
from ragkit.fences import unfenced
from ragkit.jobs import spawnable, usable_cores, worker_pool
from ragkit.loaded_folder import (Loaded, Skipped,  # noqa: F401 (importable here, as before)
                                  ragkit_output, removed_while_read, unreadable_now)
from ragkit.loaders import LOAD_NOTE, LOADERS, load_file
from ragkit.loaders.folder import broken_note, linked_note, pinned, recheck, scan, shown
from ragkit.loaders.front_matter import UNPRINTABLE, split_front_matter
from ragkit.loaders.pages import composed
from ragkit.loaders.text import read_text
from ragkit.loaders.underlined import atx_headings
from ragkit.outline import one_line
from ragkit.progress import progress_bar
from ragkit.text_stats import counted

TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ".rst", ".py", ".ts", ".js", ".java",
                 ".go", ".rs", ".c", ".h", ".cpp", ".hpp", ".json", ".yaml", ".yml", ".toml",
                 ".sql", ".sh"}
PROGRESS_DELAY = 2.0  # seconds: a load that takes longer shows a progress bar on stderr
PARALLEL_BYTES = 2**20  # PDF/HTML/Word bytes from which worker processes read them (~300 pages)


def unread_note(unread: Sequence[str]) -> str:
    """One line on the files of types ragkit does not read, by suffix, most common first:
    "left out 6 files of types ragkit does not read: .csv 2, .tex 1, … (it reads …)"; ""
    for none. Six text files a user expected to be indexed went without a word."""
    if not unread:
        return ""
    kinds = Counter(Path(name).suffix.lower() or "(no suffix)" for name in unread)
    bare = sorted({Path(name).name for name in unread if not Path(name).suffix})
    named = {"(no suffix)": f" ({', '.join(bare[:3])}{', …' if len(bare) > 3 else ''})"}
    shown_kinds = ", ".join(f"{suffix} {n}{named.get(suffix, '')}"
                            for suffix, n in kinds.most_common(8))
    more = ", …" if len(kinds) > 8 else ""
    what = "files of types" if len(unread) != 1 else "file of a type"
    return (f"left out {len(unread)} {what} ragkit does not read: {shown_kinds}{more} (it "
            f"reads {readable_types()})")


def readable_types(text: Iterable[str] = TEXT_SUFFIXES) -> str:
    """The suffixes files are read by — a folder's text ones (`text`) and every loader's — as
    text."""
    return " ".join(sorted({*text, *LOADERS}))


def _title_of(meta: dict[str, str], text: str, rel: str) -> str:
    """The front matter's title, else a prose file's first `#` heading, else `rel`. In a
    plain-text file a `#` line that ends as a sentence does, or has no text after it, is no
    title: the last line of a Debian changelog, "# Older entries have been removed from this
    changelog.", titled the whole file."""
    if meta.get("title"):  # one line: a TOML or YAML string may hold line breaks
        return one_line(str(meta["title"]))
    plain = rel.lower().endswith((".txt", ".text"))
    prose = rel.lower().endswith(PROSE_SUFFIXES)
    for heading in re.finditer(r"^#\s+(.+)$", unfenced(text) if prose else "", re.M):
        title = heading.group(1).strip()  # (unfenced: no fenced `# comment`)
        if not plain or not (title.endswith((".", "!", "?")) or not text[heading.end():].strip()):
            return title
    return rel


def _text_file(path: Path, rel: str) -> Document:
    text = read_text(path)  # front matter tops prose; a YAML or SQL file's `---` is its text
    meta, text = split_front_matter(text) if rel.lower().endswith(PROSE_SUFFIXES) else ({}, text)
    text = atx_headings(text, rel)  # underlined Markdown and reStructuredText headings
    check_text(text, path, None, key="")  # a file has no field: "x.txt: looks binary"
    # `pages` is a PDF's page map to the chunker: front matter's (`pages: 320`) stopped it
    meta = {**{key: value for key, value in meta.items() if key != "pages"}, "path": rel}
    return Document(rel, text, _title_of(meta, text, rel), meta)


def _printable(doc: Document) -> Document:
    """`doc` in NFC (macOS writes Hangul decomposed), each control character of its text,
    title and string metadata but tab, newline and form feed a space: a file's `\\x1b[2J`
    would be obeyed by the terminal `ragkit ask` prints on. One for one: page offsets hold.
    A loader's note of what it lost (`LOAD_NOTE`: a PDF cut short) is taken out and warned of
    here, in the process that loads the folder: a worker's warnings are not seen."""
    if said := doc.metadata.pop(LOAD_NOTE, None):
        warnings.warn(f"{shown(doc.id)}: {said}", RagkitWarning, stacklevel=3)
    doc = composed(doc)
    def clean(value: Any) -> Any:
        return UNPRINTABLE.sub(" ", value) if isinstance(value, str) else value
    if not (UNPRINTABLE.search(doc.text) or UNPRINTABLE.search(doc.title)
            or any(UNPRINTABLE.search(v) for v in doc.metadata.values() if isinstance(v, str))):
        return doc
    return Document(doc.id, clean(doc.text), clean(doc.title),
                    {key: clean(value) for key, value in doc.metadata.items()})


def load_listed(path: Path, rel: str, real_root: str) -> Document:
    """`load_file` of a file the folder's listing accepted, asked again (`recheck`) just
    before it is opened, then opened once (`pinned`) and read through that descriptor: a
    file swapped for a link out of the folder since is refused, however the swap is timed."""
    if why := recheck(path, real_root):
        raise RagkitError(f"{shown(path)}: {why}")
    with pinned(path, real_root) as opened:
        try:
            return _load(opened, rel, path.suffix)
        except RagkitError as exc:  # the loaders name the path they were given
            raise RagkitError(str(exc).replace(str(opened), str(path))) from None


def load_file_at(path: Path, rel: str) -> Document:
    """One file of a folder as a document: a text file, or a PDF, HTML or Word file."""
    return _printable(_load(path, rel, path.suffix))


def _load(path: Path, rel: str, suffix: str) -> Document:
    """The document of the file at `path`, read as its `suffix` says (`path` may be
    `/proc/self/fd/N`, which has none)."""
    return load_file(path, rel, suffix) if suffix.lower() in LOADERS else _text_file(path, rel)


@contextmanager
def _pool(workers: int) -> Iterator:
    """`workers` spawned processes (None for 1: load in this one), ended with the load —
    its queued files cancelled when a bad file stops it — or with this process."""
    if workers <= 1 or not spawnable():  # a script on standard input: workers cannot start
        yield None
        return
    # spawned, not forked: the caller (a notebook kernel) may hold threads
    pool = worker_pool(workers, "spawn")
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _result(future, path: Path) -> Document:
    """A worker's document; its error line as it is; a worker that died (out of memory, a
    crash in a library's C code) as an error line naming the file — unless Ctrl-C ended it,
    which the command line reports."""
    try:
        return future.result()
    except BrokenProcessPool:
        if ragkit.jobs.interrupted():
            raise
        raise RagkitError(f"{path}: the worker process reading it died (out of memory? or a "
                          f"script without `if __name__ == \"__main__\":`)") from None


def _wanted(name: str) -> bool:
    path = Path(name)
    suffix = path.suffix.lower()
    return suffix in TEXT_SUFFIXES or suffix in LOADERS or is_recipe_name(path.name)


def folder_entries(root: Path, others: list[Path] | None = None, links: list[Path] | None = None,
                   broken: list[Path] | None = None, outputs: dict[Path, str] | None = None
                   ) -> list[tuple[Path, str | None]]:
    """Every entry `load_folder` meets, in path order, with None (it is read) or why it is
    not (`ragkit.loaders.folder.scan`: a symbolic link leaving the folder, a FIFO, a name
    that is not UTF-8...). Known suffixes (in any case: a Windows folder's REPORT.PDF,
    NOTES.TXT), nothing hidden, no folder ragkit wrote (`ragkit_output`: an index, a results
    folder of `ragkit cookbook`; each put in `outputs` with what it is: read back, an index
    would be documents on the next run, a report chunks), each file once — a symlink to a
    file the folder holds (or that another symlink already gave) is left out, as its text
    would be a duplicate document that retrieval and a golden set's "in no other document"
    check would trip over."""
    what = ragkit_output(root)  # an index's chunks.jsonl, a report, read as documents
    if what is not None:
        raise RagkitError(f"{root}: {what}, not documents; give the folder (or file) of "
                          f"documents it was " + ("run on" if "results" in what else "built from"))

    def ours(folder: Path) -> bool:  # also asked of the real path a link to a folder names
        what = ragkit_output(folder)
        if what is not None and outputs is not None and folder.is_relative_to(root):
            outputs[folder] = what
        return what is not None

    entries = scan(root, _wanted, ours, others, links, broken)
    if not any(why is None and path.is_symlink() for path, why in entries):
        return entries
    seen = {p.resolve() for p, why in entries if why is None and not p.is_symlink()}
    real, kept = root.resolve(), []
    for path, why in entries:
        if why is None and path.is_symlink():
            target = path.resolve()
            if target in seen:
                continue
            seen.add(target)
            into = next((what for folder in target.parents  # skipped when walked
                         if folder.is_relative_to(real) and folder != real
                         and (what := ragkit_output(folder))), None)
            if into is not None:
                why = f"a symbolic link into {into}, whose files are not read"
        kept.append((path, why))
    return kept


def folder_files(root: Path) -> list[Path]:
    """The files `load_folder` reads, in path order (`folder_entries` without the refused)."""
    return [path for path, why in folder_entries(root) if why is None]


def _size(path: Path) -> int:
    """`path`'s size; 0 when it went away since the folder was listed (its load says so)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _workers(files: list[Path], jobs: int | None) -> int:
    """Worker processes for a folder's PDF, HTML and Word files: `jobs`, else (None) one per
    usable core when they hold at least `PARALLEL_BYTES` — below that, starting workers
    (about a second each) costs more than it saves."""
    binary = [p for p in files if p.suffix.lower() in LOADERS]
    if jobs is None:
        big = sum(_size(p) for p in binary) >= PARALLEL_BYTES
        jobs = usable_cores() if big else 1
    return max(1, min(jobs, len(binary)))


def load_folder(root: Path | str, skip_bad: bool = False, progress: bool = True,
                jobs: int | None = None) -> Loaded:
    """Every text, PDF, HTML or Word file under `root` is a document; its id is its posix
    path relative to root (see the module docstring). Files starting with a dot are skipped.

    A bad file raises `RagkitError` naming it, unless `skip_bad`: then it is left out with a
    `RagkitWarning` and listed in the result's `skipped`. `progress` shows a bar on stderr
    when the load takes more than `PROGRESS_DELAY` seconds (many PDFs). `jobs` worker
    processes read the PDF, HTML and Word files (`_workers`: by default one per core for a
    folder of at least `PARALLEL_BYTES` of them); the result is the same either way.
    """
    root = Path(root)
    if not root.is_dir():
        raise RagkitError(f"{root}: not a folder")
    docs, skipped, others, links, broken, outputs = [], [], [], [], [], {}
    entries = folder_entries(root, others, links, broken, outputs)
    files = [path for path, why in entries if why is None]
    with _pool(_workers(files, jobs)) as pool, \
            progress_bar(entries, desc="loading", unit="file", disable=not progress,
                         leave=False, delay=PROGRESS_DELAY) as bar:
        real_root = os.path.realpath(root)
        pending = {p: pool.submit(load_listed, p, p.relative_to(root).as_posix(), real_root)
                   for p in files if pool is not None and p.suffix.lower() in LOADERS}
        for path, why in bar:
            rel = path.relative_to(root).as_posix()
            try:
                if why is not None:
                    raise RagkitError(f"{shown(path)}: {why}")
                docs.append(_printable(_result(pending[path], path) if path in pending
                                       else load_listed(path, rel, real_root)))
            except RagkitError as exc:
                said = removed_while_read(path)  # since the listing: not the file's fault
                if not skip_bad:
                    raise exc if said is None else RagkitError(said) from None
                held = (why is None or why.startswith("cannot ")) and unreadable_now(path)
                skipped.append(Skipped(shown(rel), said or str(exc), held))
                warnings.warn(f"skipped {said or exc}", RagkitWarning, stacklevel=2)
    unread, linked, gone = (sorted(p.relative_to(root).as_posix() for p in found)
                            for found in (others, links, broken))
    if not docs:
        raise RagkitError(f"{root}: no documents" + (f" ({counted(len(skipped), 'file')} "
                                                     f"skipped)" if skipped else "")
                          + "".join(f"; {note}" for note in (unread_note(unread),
                                    linked_note(linked), broken_note(gone)) if note))
    ours = [Skipped(rel, f"{rel}: {what}, not read as documents") for rel, what in
            sorted((p.relative_to(root).as_posix(), what) for p, what in outputs.items())]
    return Loaded(docs, skipped, unread, linked, gone, ours)
