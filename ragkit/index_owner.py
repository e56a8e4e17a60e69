"""Which files in an index folder are ragkit's: what re-indexing may replace, and what not.

What it is:
- `is_index(path)`: the folder holds an index.json saying `"format": "ragkit-index"`.
- `owns_index(path)`: the recognizer `ragkit.atomic` is given for an index folder. True for
  an index whose every file ragkit wrote — the files its index.json lists under `"files"`
  (and ragkit's own names: a hand-made list cannot claim `notes.txt`), or, for an index
  written before that list, ragkit's known file names (`_ours`). Anything else in the
  folder — a user's notes, a sub-folder, the input file — is refused with a RagkitError
  naming the first such file (in name order), before any work and without touching it.
- `files_of(folder)`: the list a new index.json records.
- `refuse_special_files(folder)`: an index file that is a FIFO, socket or device, refused
  before a reader opens one (a FIFO would block it).
- `refuse_inputs_inside(out, inputs)`: an input that lives inside `--out` (which is replaced
  whole) is refused before anything is read.
- `refuse_output_in_index(path, option)`: an output (a run, a per-query CSV, a golden file,
  another index, …) that would be written inside an index folder is refused before any work:
  the next re-index of that folder refused it as a file ragkit did not write there.

Why refuse rather than keep strangers: an index folder is swapped in whole (crash-safe,
`ragkit.atomic.replace_folder`); carrying a user's files across the swap would move them
around behind their back. A one-line refusal keeps them where they are.

What it is not: a check of an index's content (`ragkit.index_folder` reads and checks that).
"""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.jsonl import read_json
from ragkit.loaders.text import not_regular

FORMAT = "ragkit-index"
WHAT = "a ragkit index"
TOP = {"index.json", "chunks.jsonl", "chunks.offsets.npy", "parents.jsonl", "dense_vectors.npy",
       "dense_owners.npy"}
BM25 = {"bm25.json", "data.npy", "indices.npy", "indptr.npy", "idf.npy", "doc_len.npy",
        "bm25.npz", "terms.bin", "terms.npy", "terms_hash.npy"}
_OLD_BM25 = re.compile(r"impact\w*\.npy")  # written by earlier versions, ignored when read
_BM25_DIR = re.compile(r"bm25(-\w+)?")  # bm25/ of the memory store, bm25-KEY/ of Milvus
# Milvus Lite's database (a folder; a file in older versions) and its lock, in a Milvus index
# only: a memory index's re-index deleted a user's `milvus.db.bak` and `milvus.db/` unasked
_MILVUS = re.compile(r"\.?milvus\.db(\.lock)?")
# a Milvus build's bm25-KEY/ being written (`ragkit.stale_temp` names), left by a kill -9
_BM25_TEMP = re.compile(r"\.bm25-\w+\.(new|old)-\d+\.[0-9a-f]{6}-\w+")


def is_index(path: Path | str) -> bool:
    """True when `path` holds an `index.json` that parses with `"format": "ragkit-index"`."""
    return manifest_of(Path(path)) is not None


def manifest_of(folder: Path) -> dict | None:
    """`folder`'s index.json as a dict when it parses as a ragkit index's, else None (no
    check beyond its format: `ragkit.index_folder.read_manifest` checks it whole)."""
    try:
        manifest = read_json(folder / "index.json")
    except (OSError, ValueError):  # RagkitError too: not JSON, or too deep to read
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == FORMAT else None


def files_of(folder: Path) -> list[str]:
    """The regular files under `folder` as sorted POSIX paths relative to it, with
    `index.json` (written after this list is made)."""
    found = {"index.json"}
    for root, _, names in os.walk(folder):
        for name in names:
            found.add(Path(root, name).relative_to(folder).as_posix())
    return sorted(found)


def owns_index(path: Path | str) -> bool:
    """True for an index folder holding only files ragkit wrote; False for a folder that is
    not an index. Raises RagkitError naming the first file ragkit did not write in an index
    folder (so the refusal says what to move)."""
    folder = Path(path)
    manifest = manifest_of(folder)
    if manifest is None:
        return False
    listed = manifest.get("files")
    listed = set(listed) if isinstance(listed, list) else None
    store = manifest.get("store")
    milvus = isinstance(store, dict) and store.get("kind") == "milvus"
    stranger = _stranger(folder, listed, milvus)
    if stranger is not None:
        raise RagkitError(f"{folder / stranger}: not written by ragkit, but inside the index "
                          f"folder {folder}, which re-indexing replaces whole; move it out "
                          f"first (or write the index to another folder)")
    return True


def _stranger(folder: Path, listed: set[str] | None, milvus: bool) -> str | None:
    """The first entry (in name order, depth first) that is not ragkit's, or None. Milvus
    Lite's files and the bm25-KEY/ folders are ragkit's only in a Milvus index (`milvus`);
    a memory index's BM25 folder is bm25/."""
    def ours(relative: str, known: bool) -> bool:
        return known and (listed is None or relative in listed)

    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name = entry.name
        if milvus and _MILVUS.fullmatch(name):  # the store's own files, whatever is inside
            continue
        if milvus and _BM25_TEMP.fullmatch(name) and entry.is_dir(follow_symlinks=False):
            continue
        if entry.is_dir(follow_symlinks=False):
            if not (_BM25_DIR.fullmatch(name) if milvus else name == "bm25"):
                return name
            for inner in sorted(os.scandir(entry.path), key=lambda e: e.name):
                relative = f"{name}/{inner.name}"
                known = (not inner.is_dir(follow_symlinks=False)
                         and (inner.name in BM25 or bool(_OLD_BM25.fullmatch(inner.name))))
                if not ours(relative, known):
                    return relative
        elif not ours(name, name in TOP):
            return name
    return None


def refuse_special_files(folder: Path) -> None:
    """Refuse an index file that is a FIFO, socket or device (through a link too), before
    any is opened: `idx/chunks.offsets.npy: not a regular file (a FIFO); …`.

    Why: opening a FIFO for reading waits for a writer, so a FIFO in place of
    chunks.offsets.npy hung `search` and `ask`; in place of index.json or chunks.jsonl it was
    called missing, in place of bm25/terms.npy silently passed over. The files are opened in
    many places (JSON, offsets, BM25 arrays, term table, vectors; numpy memory-maps a path,
    not a descriptor opened non-blocking), so every reader checks them here first
    (`ragkit.index_folder.read_manifest`). What: ragkit's names at the top (`TOP`) and
    everything in its BM25 folders; a Milvus database is Milvus's to open, and an absent
    name is the reader's to call missing. Not race-free: a FIFO made after this check still
    blocks, but only a process writing into the index while it is read can make one, and
    `ragkit index` replaces the folder whole, with regular files only."""
    paths = [folder / name for name in sorted(TOP)]
    with os.scandir(folder) as entries:
        lexical = [e.path for e in entries if _BM25_DIR.fullmatch(e.name) and e.is_dir()]
    for inner in sorted(lexical):
        try:
            paths += sorted(Path(inner).iterdir())
        except OSError:  # a folder that may not be read: its reader names it
            continue
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:  # absent, a link to nothing: the reader names it
            continue
        why = None if stat.S_ISDIR(mode) else not_regular(mode)
        if why is not None:
            raise RagkitError(f"{path}: {why}")


def refuse_inputs_inside(out: Path | str, inputs: Iterable[Path | str | None]) -> None:
    """Refuse an input that is the folder `out` or lies inside it: indexing into `out`
    replaces that folder whole, so the input would be deleted with the old index. (No
    folder at `out`: nothing lies inside it; a file there is `check_target`'s refusal.)"""
    if not os.path.isdir(out):
        return
    root = os.path.realpath(out)
    for given in inputs:
        if given is None:
            continue
        real = os.path.realpath(given)
        if real == root:
            raise RagkitError(f"{given}: is --out {out} itself, which indexing replaces; "
                              f"choose another --out")
        if real.startswith(root.rstrip(os.sep) + os.sep):
            raise RagkitError(f"{given}: is inside --out {out}, which indexing replaces "
                              f"whole; move it out of {out} first, or choose another --out")


def refuse_output_in_index(path: Path | str, option: str) -> None:
    """Refuse writing `path` (given as `option`, e.g. "--out") inside an index folder — an
    ancestor holding a ragkit index.json, through links too. Accepted, it made the next
    `ragkit index` of that folder refuse ("not written by ragkit, but inside the index
    folder"), as the folder is replaced whole. Creates and changes nothing."""
    start = Path(os.path.realpath(os.path.dirname(os.path.abspath(path))))
    for folder in (start, *start.parents):
        if manifest_of(folder) is not None:
            shown = os.path.relpath(folder) if folder.is_relative_to(os.getcwd()) else folder
            raise RagkitError(f"{path}: is inside the index folder {shown}, which re-indexing "
                              f"replaces whole (and refuses what it did not write); give "
                              f"{option} a path outside it")
