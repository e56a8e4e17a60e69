"""A term → id mapping read from disk by lookup, not rebuilt as a dict when an index opens.

What it is: `write_terms(folder, terms)` saves a vocabulary (terms in id order) as three
files — `terms.bin` (the terms' UTF-8 bytes, concatenated), `terms.npy` (N + 1 int64 byte
offsets into it) and `terms_hash.npy` (2 × N uint64: each term's 64-bit hash, sorted, and
the term's id beside it) — and `TermTable`, the read-only `Mapping[str, int]` over them,
memory-mapped. A lookup hashes the term, binary-searches the sorted hashes and compares
the bytes of each term with that hash, so the answer is exact (a hash collision only costs
one more comparison).

Why: a BM25 index of a million generated chunks has two million terms (each chunk's
document id among them); building their dict at open took 0.85 s of an idle machine and
120 MB, for a query that looks up four terms. The hash is a polynomial over the bytes
modulo 2⁶⁴, computed for all terms at once with numpy when saving (0.1 s for two million).

What it is not: a dict (no insertion), or a check that the files agree with bm25.json's
"vocabulary" (their count is checked against the BM25 arrays when the index opens).
"""
from __future__ import annotations

import mmap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.documents import RagkitError

FILES = ("terms.bin", "terms.npy", "terms_hash.npy")
CACHE = 1 << 16  # terms whose lookup a TermTable remembers
_P = 0x100000001B3  # FNV's 64-bit prime as the polynomial's base
_MASK = (1 << 64) - 1


def term_hashes(blob: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each term's hash: sum of byte_j · P^(j+1) mod 2⁶⁴ over its bytes (0 for "")."""
    lengths, starts = np.diff(offsets), offsets[:-1]
    out = np.zeros(lengths.size, dtype=np.uint64)
    active, power, j = np.flatnonzero(lengths), 1, 0
    while active.size:  # byte j of every term longer than j at once (terms are short)
        power = (power * _P) & _MASK
        out[active] += blob[starts[active] + j].astype(np.uint64) * np.uint64(power)
        j += 1
        active = active[lengths[active] > j]
    return out


def term_hash(raw: bytes) -> int:
    """`term_hashes` of one term's bytes."""
    value, total = 1, 0
    for byte in raw:
        value = (value * _P) & _MASK
        total = (total + byte * value) & _MASK
    return total


def write_terms(folder: Path, terms: list[str]) -> None:
    """Save `terms` (in id order) as the three files of a `TermTable` in `folder`."""
    blob = "".join(terms).encode("utf-8", "surrogatepass")
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    if len(blob) == sum(map(len, terms)):  # ASCII: a term's bytes are its characters
        np.cumsum(np.fromiter(map(len, terms), np.int64, len(terms)), out=offsets[1:])
    else:
        np.cumsum([len(t.encode("utf-8", "surrogatepass")) for t in terms], out=offsets[1:])
    (folder / "terms.bin").write_bytes(blob)
    np.save(folder / "terms.npy", offsets)
    hashes = term_hashes(np.frombuffer(blob, dtype=np.uint8), offsets)
    order = np.argsort(hashes, kind="stable")
    np.save(folder / "terms_hash.npy", np.stack([hashes[order], order.astype(np.uint64)]))


def has_terms(folder: Path) -> bool:
    """True when `folder` holds the three files `write_terms` writes."""
    return all((folder / name).is_file() for name in FILES)


class TermTable(Mapping):
    """term → id, read from the files `write_terms` wrote (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        try:
            self.offsets = np.load(folder / "terms.npy", mmap_mode="r", allow_pickle=False)
            table = np.load(folder / "terms_hash.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise RagkitError(f"{folder}: damaged BM25 terms ({exc}); rebuild the index") \
                from None
        blob = folder / "terms.bin"
        n = self.offsets.shape[0] - 1 if self.offsets.ndim == 1 else -1
        if (n < 0 or self.offsets.dtype != np.int64 or table.shape != (2, n)
                or table.dtype != np.uint64 or int(self.offsets[0]) != 0
                or int(self.offsets[-1]) != blob.stat().st_size):
            raise RagkitError(f"{folder / 'terms.npy'}: does not match terms.bin and "
                              f"terms_hash.npy; damaged BM25 index, rebuild it")
        # plain views of the mapped files: numpy's memmap wrapper costs per element read
        self.hashes, self.ids = np.asarray(table[0]), np.asarray(table[1])
        # ids in range and hashes in order: else a damaged file is an IndexError at the first
        # query, or a search that silently finds no term at all
        if n and not _in_order(table, n):
            raise RagkitError(f"{folder / 'terms_hash.npy'}: term ids or hash order damaged; "
                              f"damaged BM25 index, rebuild it")
        self.offsets = np.asarray(self.offsets)
        self._seen: dict[str, int] = {}
        self.folder = folder
        with blob.open("rb") as handle:
            self.blob: Any = (mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                              if blob.stat().st_size else b"")

    def _find(self, term: object) -> int:
        """The id of `term`, or -1; answers are remembered (a query asks `in`, then `[]`,
        and queries share words), up to CACHE terms."""
        found = self._seen.get(term) if isinstance(term, str) else -1
        if found is None:
            if len(self._seen) >= CACHE:
                self._seen.clear()
            found = self._seen[term] = self._lookup(term.encode("utf-8", "surrogatepass"))
        return found

    def _lookup(self, raw: bytes) -> int:
        """The id of the term whose bytes are `raw`, or -1. A term stored under `raw`'s hash
        whose own bytes hash otherwise was changed after it was written (a renamed term in
        terms.bin dropped out of every query silently): that is a RagkitError."""
        key = np.uint64(term_hash(raw))
        at = int(self.hashes.searchsorted(key))
        while at < self.hashes.shape[0] and self.hashes[at] == key:
            ident = int(self.ids[at])
            stored = self.blob[int(self.offsets[ident]):int(self.offsets[ident + 1])]
            if stored == raw:
                return ident
            if term_hash(stored) != key:
                raise RagkitError(f"{self.folder / 'terms.bin'}: term {ident} does not match "
                                  "its hash in terms_hash.npy; damaged BM25 index, rebuild it")
            at += 1
        return -1

    def __getitem__(self, term: str) -> int:
        ident = self._find(term)
        if ident < 0:
            raise KeyError(term)
        return ident

    def __contains__(self, term: object) -> bool:
        return self._find(term) >= 0

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __iter__(self) -> Iterator[str]:
        offsets = self.offsets.tolist()
        for lo, hi in zip(offsets, offsets[1:]):
            yield self.blob[lo:hi].decode("utf-8", "surrogatepass")

    def __reduce__(self):  # another process gets the same mapping as a plain dict
        return _as_dict, (list(self),)


def _in_order(table: np.ndarray, n: int, block: int = 1 << 17) -> bool:
    """True when terms_hash.npy's hashes (row 0) rise and its ids (row 1) lie in 0..n-1.
    Read from the file into one 1 MB buffer, not through the mapping, so the check leaves
    none of its pages resident (32 MB at two million terms; a query reads a few)."""
    if not isinstance(table, np.memmap) or table.filename is None:
        return bool((table[0, 1:] >= table[0, :-1]).all() and table[1].max() < n)
    buffer, previous = np.empty(min(block, n), dtype=np.uint64), np.uint64(0)
    with open(table.filename, "rb") as handle:
        handle.seek(table.offset)
        for row in (0, 1):
            for start in range(0, n, block):
                part = buffer[:min(block, n - start)]
                if handle.readinto(memoryview(part).cast("B")) != part.nbytes:
                    return False
                if row == 1 and part.max() >= n:
                    return False
                if row == 0 and (part[0] < previous or (part[1:] < part[:-1]).any()):
                    return False
                previous = part[-1]
    return True


def _as_dict(terms: list[str]) -> dict[str, int]:
    return {term: i for i, term in enumerate(terms)}
