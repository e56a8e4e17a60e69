"""The chunks of an index read by position: chunks.jsonl memory-mapped, rows parsed on demand.

What it is: `ChunkTable`, a read-only sequence of `Chunk`s over an index folder's
chunks.jsonl and `chunks.offsets.npy` (N + 1 int64 byte offsets, written beside it by
`chunk_rows.RowWriter`): row i is one slice of the mapped file, parsed and checked when it is
asked for. A search reads only the rows of its hits (`ids_at`), so a million-chunk index
opens in milliseconds and holds a few MB, where reading every row took 10 s and 2 GB.
Iterating the whole table (an update, `--level doc`, a consumer building a map of every
chunk) reads every row once, checked, and keeps the list, as a loaded index always did.

What is checked, and when: at open (`open_table`) the offsets file's shape and type, that
it holds index.json's chunk count + 1 entries, starts at 0 and rises strictly (one
vectorised pass over 8 MB at 1M chunks) — a damaged offsets file is a RagkitError naming
it — then that it ends at chunks.jsonl's size and that the first and last rows lie where
it says and are valid in full. A chunks.jsonl that fails those (cut short, or edited by
hand since it was written) is read whole, every row checked, as an index from before the
offsets was (`chunk_table`, with a warning that says so): its first bad line is then the
error, as it always was, and a valid edit is loaded as it always was. When a row is read:
that it lies between two newlines and is a valid row (every field); a damaged row is one
RagkitError naming the file, line and field.

A re-index of the folder while a table is open (the folder is replaced atomically) leaves
the table on the file it mapped: every row it gives, read whole or one at a time, is the
one its BM25 and vectors were opened with; pickled for a worker process, it carries its rows
when the path names another file by then, and a worker that would map a replaced file is
refused in one line.

What it is not: a database, a cache of parsed rows (parsing one is about 5 µs), or a
writer (rows are written by `ragkit.chunk_rows`).
"""
from __future__ import annotations

import mmap
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ragkit.chunk_rows import gc_paused, parse_chunk, read_chunks, row_ok
from ragkit.documents import Chunk, RagkitError, RagkitWarning, where

OFFSETS = "chunks.offsets.npy"  # beside chunks.jsonl


class Changed(RagkitError):
    """chunks.jsonl does not match its offsets (cut short, or edited since written)."""


class ChunkTable(Sequence):
    """chunks.jsonl by position; see the module docstring. Use `open_table` to make one."""

    def __init__(self, path: Path, offsets: np.ndarray, offsets_path: Path) -> None:
        # a plain view of the mapped file: numpy's memmap wrapper costs per element read
        self.path, self.offsets, self.offsets_path = path, np.asarray(offsets), offsets_path
        self._all: list[Chunk] | None = None  # every row, once the table was iterated
        self._docs: list[str] | None = None  # every row's doc id, once asked for
        self._seen: dict[str, int] = {}  # chunk id -> position, of the ids `ids_at` gave
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            size = stat.st_size
            # which file is mapped: a re-index replaces the folder, the path then names another
            self._identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
            self._map: Any = (mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                              if size else b"")

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __getitem__(self, index):  # int -> Chunk, slice -> list[Chunk]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = self._position(index)
        if self._all is not None:
            return self._all[position]
        return parse_chunk(self.path, position + 1, self._text(position))

    def __iter__(self) -> Iterator[Chunk]:
        if self._all is None:  # every row, checked, kept: whoever iterates once does again
            # from the mapped file, never its path: after a re-index the path names the new
            # folder's rows, which the BM25 and vectors this table was opened with do not match
            with gc_paused():
                self._all = [parse_chunk(self.path, i + 1, self._text(i))
                             for i in range(len(self))]
        return iter(self._all)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, ChunkTable)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by content

    def __repr__(self) -> str:
        return f"ChunkTable({str(self.path)!r}, {len(self)} chunks)"

    def __getstate__(self) -> dict:
        """By path (a worker process maps the same file), or with every row when the path
        no longer names the mapped file (the folder was re-indexed since it was opened)."""
        state = {"path": self.path, "offsets_path": self.offsets_path,
                 "identity": self._identity}
        if _identity(self.path) != self._identity:
            state["rows"] = list(self)
        return state

    def __setstate__(self, state: dict) -> None:
        rows = state.get("rows")
        if rows is not None:
            self.__dict__.update(path=state["path"], offsets_path=state["offsets_path"],
                                 offsets=np.zeros(len(rows) + 1, np.int64), _all=rows,
                                 _map=b"", _identity=state["identity"], _docs=None, _seen={})
            return
        table = open_table(state["path"], state["offsets_path"], None)
        if state.get("identity", table._identity) != table._identity:
            raise RagkitError(f"{state['path']}: replaced since this index was opened (it was "
                              f"re-indexed); load the index again")
        self.__dict__.update(table.__dict__)

    def doc_ids(self) -> list[str]:
        """Each row's document id, by position, once: only that field is read (`search
        --level doc` at a million chunks built every Chunk first, 40 s against ~2 s)."""
        if self._docs is None:
            if self._all is not None:
                self._docs = [c.doc_id for c in self._all]
            else:
                with gc_paused():
                    self._docs = [self._doc_at(i) for i in range(len(self))]
        return self._docs

    def _doc_at(self, position: int) -> str:
        try:
            row = orjson.loads(self._raw(position))
        except orjson.JSONDecodeError:
            row = None
        doc = row.get("doc_id") if type(row) is dict else None
        return doc if type(doc) is str else self[position].doc_id

    def doc_of(self, ident: str) -> str:
        """The document id of chunk `ident`, one `ids_at` returned (a search's hit)."""
        return self.doc_ids()[self._seen[ident]]

    def ids_at(self, positions: np.ndarray) -> list[str]:
        """The chunk ids at `positions` (integers), in that order: only those rows are read.
        A row orjson reads whose fields are all there and of their types (`row_ok`) gives its
        id at once; any other row is parsed in full, so a damaged one — a "doc_id" renamed by
        hand — is the same error `self[i]` gives (a BM25 search returned it unchecked)."""
        if self._all is not None:
            out = [self._all[i].id for i in positions.tolist()]
        else:
            out = []
            n = len(self)
            for position in positions.tolist():
                position = position if 0 <= position < n else self._position(position)
                try:  # orjson checks the bytes are UTF-8 itself
                    row = orjson.loads(self._raw(position))
                except orjson.JSONDecodeError:
                    row = None
                ident = row.get("id") if type(row) is dict and row_ok(row) else None
                out.append(ident if type(ident) is str
                           else parse_chunk(self.path, position + 1, self._text(position)).id)
        self._seen.update(zip(out, positions.tolist()))  # for `doc_of`
        return out

    def _position(self, index: int) -> int:
        n = len(self)
        position = index + n if index < 0 else index
        if not 0 <= position < n:
            raise IndexError(f"chunk position {index} outside 0..{n - 1}")
        return position

    def _raw(self, position: int) -> bytes:
        """Row `position`'s bytes, its bounds checked against the newlines around it."""
        lo, hi = int(self.offsets[position]), int(self.offsets[position + 1])
        raw = self._map[lo:hi]
        if raw.find(b"\n") != len(raw) - 1 or (lo and self._map[lo - 1] != 10):
            # the offsets were checked at open: it is chunks.jsonl that changed (an edit by
            # hand that kept its size, first and last rows)
            raise RagkitError(f"{self.path}: row {position + 1} does not lie where "
                              f"{self.offsets_path.name} says (bytes {lo}..{hi}): "
                              f"{self.path.name} was changed since the index was written; "
                              f"rebuild it with `ragkit index`")
        return raw

    def _text(self, position: int) -> str:
        """Row `position` as text (`_raw`, decoded)."""
        raw = self._raw(position)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RagkitError(f"{where(self.path, position + 1)}: not UTF-8 text") from None


def _identity(path: Path) -> tuple[int, ...] | None:
    """(device, inode, size, mtime) of the file at `path`, None when it is gone."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def open_table(path: Path, offsets_path: Path, expected: int | None) -> ChunkTable:
    """A `ChunkTable` over `path` (chunks.jsonl) and `offsets_path`, checked as the module
    docstring says; `expected` is index.json's chunk count (None: not checked)."""
    if not path.is_file():
        raise RagkitError(f"{path}: missing; the index folder is incomplete")
    try:
        offsets = np.load(offsets_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise RagkitError(f"{offsets_path}: cannot read ({exc}); the index folder is damaged, "
                          f"rebuild it") from None
    if offsets.ndim != 1 or offsets.dtype != np.int64 or offsets.shape[0] < 1:
        raise RagkitError(f"{offsets_path}: expected a 1-d int64 array, got a "
                          f"{offsets.ndim}-d {offsets.dtype} one; rebuild the index")
    if expected is not None and offsets.shape[0] != expected + 1:
        raise Changed(f"{offsets_path.name} has {offsets.shape[0] - 1} rows, but index.json "
                      f"field 'chunks' says {expected}")
    if int(offsets[0]) != 0 or (offsets.shape[0] > 1 and not (np.diff(offsets) > 0).all()):
        raise RagkitError(f"{offsets_path}: offsets do not rise from 0 row by row; the index "
                          f"folder is damaged, rebuild it")
    size = path.stat().st_size
    if int(offsets[-1]) != size:
        raise Changed(f"{size} bytes, but {offsets_path.name} ends at byte {int(offsets[-1])}")
    table = ChunkTable(path, offsets, offsets_path)
    try:
        if len(table):
            table[0], table[-1]  # parsed and checked: a mismatched file fails here
    except RagkitError as exc:
        raise Changed(str(exc)) from None
    return table


def chunk_table(folder: Path, expected: int) -> Sequence[Chunk]:
    """The chunks of index `folder`: a `ChunkTable` when it has chunks.offsets.npy, else
    (an index written before the offsets existed) every row read into a list, as then —
    a load never writes into the folder it reads."""
    path, offsets = folder / "chunks.jsonl", folder / OFFSETS
    if not offsets.exists():
        return read_chunks(path, expected)
    try:
        return open_table(path, offsets, expected)
    except Changed as exc:
        chunks = read_chunks(path, expected)  # its first bad line, if any, is the error
        warnings.warn(f"{path}: changed since the index was written ({exc}); every row was "
                      f"read and checked, slow for a large index: rebuild it with `ragkit "
                      f"index` to open it fast again", RagkitWarning, stacklevel=2)
        return chunks
