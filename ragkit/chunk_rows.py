"""chunks.jsonl rows: one chunk per JSON line, written fast and read back checked.

What it is: `chunk_line` (a chunk as one orjson line; the index folder, the block build and
the Milvus store write chunks alike), `write_chunks`, and `read_chunks`, which checks each
row's fields and types and names the file, line and field of the first bad one. Rows are
parsed by `ragkit.fastjson` (orjson), the standard library only for what orjson refuses
(NaN, big integers), with the garbage collector paused (`gc_paused`) while a million rows
pile up. `RowWriter` also records where each row starts (`chunks.offsets.npy`, N + 1 int64
byte offsets), and `ChunkTable` (ragkit.chunk_table) reads rows by position through it.

What it is not: the rest of an index folder (`ragkit.index_folder`).
"""
from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ragkit.documents import Chunk, RagkitError, where
from ragkit.fastjson import NOT_PARSED, fast_json
from ragkit.jsonl import parse_json

# chunks.jsonl field -> (type, default); a default of None marks a required field.
_CHUNK_FIELDS: dict[str, tuple[type, Any]] = {
    "id": (str, None), "doc_id": (str, None), "text": (str, None), "context": (str, ""),
    "start": (int, 0), "end": (int, 0), "metadata": (dict, {}),
}


def write_chunks(path: Path, chunks: Sequence[Chunk], block: int = 4096,
                 offsets: Path | None = None) -> None:
    """One JSON line per chunk, encoded with orjson and written `block` lines at a time;
    with `offsets`, each row's byte offset saved there too (`RowWriter`)."""
    with path.open("wb") as out:
        rows = RowWriter(out)
        for lo in range(0, len(chunks), block):
            rows.write(b"".join([chunk_line(c) for c in chunks[lo:lo + block]]))
    if offsets is not None:
        rows.save(offsets)


class RowWriter:
    """Writes blocks of whole chunks.jsonl rows to an open binary file and records where
    each row starts, so `chunks.offsets.npy` can say where row i lies without a reader
    scanning the file. A row never holds a raw newline byte (JSON escapes it), so the
    rows' ends are the newlines of each block, found by one vectorised comparison."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.ends: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        self.size = 0

    def write(self, block: bytes) -> None:
        """Write `block`: whole rows, each ending with a newline."""
        if block and not block.endswith(b"\n"):
            raise ValueError("a block of chunk rows must end with a newline")
        self.ends.append(np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
                         + (self.size + 1))
        self.handle.write(block)
        self.size += len(block)

    def offsets(self) -> np.ndarray:
        """N + 1 int64 byte offsets: row i is bytes offsets[i]:offsets[i + 1]."""
        return np.concatenate(self.ends).astype(np.int64)

    def save(self, path: Path) -> None:
        """The offsets as a .npy file (memory-mapped when read)."""
        np.save(path, self.offsets())


def chunk_line(c: Chunk) -> bytes:
    """One chunks.jsonl row (orjson, no newline): the index folder, the block build and the
    milvus store write chunks alike."""
    row = {"id": c.id, "doc_id": c.doc_id, "text": c.text, "context": c.context,
           "start": c.start, "end": c.end, "metadata": c.metadata}
    try:
        return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson refuses what json may still write (big ints, non-str keys)
        pass
    try:
        return (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise RagkitError(f"chunk {c.id!r}: field 'metadata' cannot be saved as JSON "
                          f"({exc})") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a million acyclic rows are made: it would
    rescan all of them again and again as they pile up (40 % of a 100k-chunk load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_chunks(path: Path, expected: int) -> list[Chunk]:
    """chunks.jsonl, each row checked; their number must be `expected` (from index.json)."""
    if not path.is_file():
        raise RagkitError(f"{path}: missing; the index folder is incomplete")
    chunks = []
    with path.open(encoding="utf-8", errors="strict") as handle, gc_paused():
        try:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    chunks.append(parse_chunk(path, number, line))
        except UnicodeDecodeError:
            raise RagkitError(f"{path}: not UTF-8 text") from None
    if len(chunks) != expected:
        raise RagkitError(f"{path}: {len(chunks)} chunks, but index.json field 'chunks' says "
                          f"{expected}; the index folder is damaged, rebuild it")
    return chunks


def _problem(row: dict) -> tuple[str, str] | None:
    """(field, what is wrong) for the first field of `row` a `Chunk` cannot take, or None."""
    for name, (kind, default) in _CHUNK_FIELDS.items():
        if name not in row:
            if default is None:
                return name, "missing"
        elif not isinstance(row[name], kind) or (kind is int and isinstance(row[name], bool)):
            return name, f"expected {kind.__name__}, got {type(row[name]).__name__}"
    return None


def row_ok(row: dict) -> bool:
    """True when the parsed row `row` has every field a `Chunk` needs, of its type — what
    `parse_chunk` checks, without building the Chunk (a search reading only the ids of its
    hits still refuses a damaged one)."""
    return _problem(row) is None


def parse_chunk(path: Path, number: int, line: str) -> Chunk:
    """Row `line` (line `number` of `path`) as a Chunk, every field checked."""
    row = fast_json(line)
    if row is NOT_PARSED:
        row = _stdlib_row(path, number, line)
    if not isinstance(row, dict):
        raise RagkitError(f"{where(path, number)}: expected a JSON object")
    problem = _problem(row)
    if problem is not None:
        raise RagkitError(f"{where(path, number, problem[0])}: {problem[1]}")
    return Chunk(**{name: row[name] if name in row else type(default)(default)
                    for name, (_, default) in _CHUNK_FIELDS.items()})


def _stdlib_row(path: Path, number: int, line: str) -> Any:
    """A row orjson refused, read by the standard library (NaN, big integers), or its error."""
    return parse_json(line, Path(path), number)
