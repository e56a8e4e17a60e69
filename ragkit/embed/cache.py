"""An on-disk cache in front of any embedder, so each text is embedded once.

What it is: `CachedEmbedder(inner, path)` has the `Embedder` interface. It keys each vector
by sha256 of (inner.name, fingerprint, max_tokens, input_type, text) — so new weights or a
new truncation rule never serve a stale vector — stores it in a sqlite file (WAL mode), sends
only the texts it has not seen to the inner model, and commits after every batch, so an
interrupted `ragkit index` resumes where it stopped. Each thread keeps one connection open.
Processes sharing the file embed one batch at a time (a lock file beside it), and each looks
its batch up again once it holds the lock: two notebooks run side by side that need the same
texts embed them once, and an embedding batch already uses every core.

What it is not: a semantic cache (no near-duplicate matching) nor a cache of paid calls in
general (that is `ragkit.cache`).

Limits: entries never expire; `ragkit cache clear --embeddings` (`remove_cache`) deletes the
file to reclaim space (a process embedding meanwhile keeps its next vectors in the new file,
`_connect`). One writer at a time (sqlite locking and the lock file); readers may run alongside
it. A damaged file (a failing disk, a copy cut short) is one `DamagedCache` line naming it and
that command, in whatever reads it; vectors are never half-read from it. A cache that cannot be
written (`cannot_write`: one prepared on another machine and mounted read-only, an immutable
file) is read as it is — as it is now, while the machine that owns it writes it (`ReadOnlyFile`)
— and the vectors it lacks are embedded and used but not kept, with one warning naming it; a
damaged one there is said to be read-only too (`ragkit cache clear --embeddings` cannot delete
it there). So is a cache on a disk found full, from then on (`_unless_full`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from typing import NoReturn, TypeVar
from pathlib import Path

import numpy as np
from filelock import FileLock

from ragkit.embed.base import Embedder, fingerprint_of
from ragkit.errors import Interrupted, PartialResults, RagkitError, RagkitWarning
# their home is ragkit.embed.cache_file; `ragkit cache clear` and tests import them from here
from ragkit.embed.cache_file import default_cache_path, remove_cache  # noqa: F401
from ragkit.embed.cache_file import file_id, holding
from ragkit.progress import progress_bar
from ragkit.sqlite_files import DamagedCache, ReadOnlyFile, cannot_write, no_room, resolved
from ragkit.sqlite_files import read_only_errors, sqlite_errors, use_wal

BATCH = 256  # texts per inner call and per commit
CLEAR = ("ragkit cache clear --embeddings", "vectors are embedded again when next needed")
_SCHEMA = "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
T = TypeVar("T")
_NOT_KEPT: set[Path] = set()  # read-only caches this process has warned about: once each


def cache_key(name: str, fingerprint: str, max_tokens: int, input_type: str, text: str) -> str:
    """sha256 of the JSON list [name, fingerprint, max_tokens, input_type, text]."""
    payload = json.dumps([name, fingerprint, max_tokens, input_type, text])
    return hashlib.sha256(payload.encode()).hexdigest()


def prepare(inner: Embedder) -> None:
    """`inner.prepare()` when it has one (see `ragkit.embed.base`): before texts are sent."""
    ready = getattr(inner, "prepare", None)
    if ready is not None:
        ready()


class CachedEmbedder:
    """Wrap `inner` with a sqlite cache at `path` (see module docstring)."""

    def __init__(self, inner: Embedder, path: Path | None = None, batch_size: int = BATCH) -> None:
        self.inner = inner
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.fingerprint = fingerprint_of(inner)
        self.truncates = getattr(inner, "truncates", True)
        self.path = Path(path) if path is not None else default_cache_path()
        self.batch_size = batch_size
        self._local = threading.local()  # one connection per thread, kept open
        resolved(self.path, "embedding cache")  # a link loop: one line, not a traceback
        self.read_only = cannot_write(self.path)  # then nothing is stored, nor locked
        self._lock: AbstractContextManager = (  # one embedding batch at a time
            nullcontext() if self.read_only else FileLock(str(self.path) + ".lock"))
        self.full = False  # `read_only` as its disk is full (`_unless_full`), not its medium
        if not self.read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._unless_full(self._create)

    def _create(self) -> None:
        if self.read_only:  # found so by `_unless_full`
            return
        with self._guard(), closing(sqlite3.connect(self.path, timeout=60)) as db, db:
            use_wal(db)  # stored in the file: set once
            db.execute(_SCHEMA)

    def _unless_full(self, work: Callable[[], T]) -> T:
        """`work()`; when it fails on a disk with no room left (sqlite's "database or disk
        is full", or any error while no byte is free: the write-ahead log's "disk I/O error"),
        the cache is read as it is from then on (`read_only`, `full`: vectors embedded and
        used, not kept, one warning) and `work` runs again; a search had stopped there."""
        try:
            return work()
        except DamagedCache:
            raise
        except RagkitError as exc:
            if self.read_only or not no_room(self.path, str(exc)):
                raise
        self.read_only, self.full, self._lock = True, True, nullcontext()
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        return work()

    def _guard(self):
        """Around every use of the file: a sqlite error is one line naming it (on read-only
        media `read_only_errors`: `CLEAR` cannot run there, but on a full disk it can)."""
        errors = read_only_errors if self.read_only and not self.full else sqlite_errors
        return errors(self.path, "embedding cache", CLEAR)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return self.inner.token_lengths(texts)

    def prepare(self) -> None:
        """The inner embedder's `prepare`, asked for by a build before it pays for contexts."""
        prepare(self.inner)

    def prepare_for(self, texts: Sequence[str]) -> None:
        """`prepare` unless the cache holds every one of `texts` (as documents): a build asks
        with its first chunk's windows before it measures the rest (`ragkit.dense`), so a new
        build without Voyage's key stops at once, and a rebuild the cache serves needs none."""
        keys = {cache_key(self.name, self.fingerprint, self.max_tokens, "document", t)
                for t in texts}
        if len(self._unless_full(lambda: self._found(keys))) < len(keys):
            self.prepare()

    def _found(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        with self._guard():
            return self._lookup(self._connect(), keys)

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """Vectors for `texts` in input order; only unseen texts reach the inner embedder."""
        keys = [cache_key(self.name, self.fingerprint, self.max_tokens, input_type, t)
                for t in texts]
        found: dict[str, np.ndarray] = {}  # kept across a retry: nothing embedded twice
        self._unless_full(lambda: self._embed(keys, texts, input_type, progress, found))
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _embed(self, keys: list[str], texts: Sequence[str], input_type: str, progress: bool,
               found: dict[str, np.ndarray]) -> None:
        """Fill `found` with the vectors of `keys`: from the file, else embedded."""
        with self._guard():
            found.update(self._lookup(self._connect(), set(keys) - found.keys()))
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}  # dedupes
            self._fill(todo, input_type, progress, found)

    def _fill(self, todo: dict[str, str], input_type: str, progress: bool,
              found: dict[str, np.ndarray]) -> None:
        """Embed `todo` in batches of similar length, committing after each batch.

        Each batch is embedded holding the lock file, after looking its keys up again: a
        process that waited finds what the other one just stored and skips it, and a cache
        cleared meanwhile is started again, not written deleted (`_connect`)."""
        items = list(todo.items())
        if items:
            prepare(self.inner)
        size = getattr(self.inner, "texts_per_call", None) or self.batch_size  # batch APIs: all
        with progress_bar(total=len(items), desc=f"embed {self.name}", unit="text",
                          disable=not (progress and items)) as bar:  # closed on Ctrl-C too
            # measured under the bar: 300,000 windows take about 40 s to measure
            lengths = self.inner.token_lengths([t for _, t in items]) if items else []
            items = [items[i] for i in np.argsort(lengths, kind="stable")]
            said: list[bool] = []  # a wait for another process said once (`holding`)
            for start in range(0, len(items), size):
                batch = items[start:start + size]
                with self._held(said):  # `remove_cache` deletes the file only while holding it
                    db = self._connect()
                    stored = self._lookup(db, (k for k, _ in batch))
                    found.update(stored)
                    batch = [(k, t) for k, t in batch if k not in stored]
                    if batch:
                        self._store(db, batch, input_type, found)
                bar.update(min(size, len(items) - start))

    def _held(self, said: list[bool]) -> AbstractContextManager:
        """The lock file held for one batch (`holding`); nothing where nothing is stored."""
        lock = self._lock
        return lock if isinstance(lock, nullcontext) else holding(lock, self.path, said, True)

    def _store(self, db: sqlite3.Connection | None, batch: list[tuple[str, str]], input_type: str,
               found: dict[str, np.ndarray]) -> None:
        """Embed one batch of (key, text) and commit it in one transaction."""
        try:
            vectors = self.inner.embed([t for _, t in batch], input_type=input_type)
        except (PartialResults, Interrupted) as exc:
            self._keep_then_raise(db, [(batch[i][0], v) for i, v in exc.kept.items()], found,
                                  exc, f"the {len(exc.kept)} others")
        self._keep(db, [(k, v) for (k, _), v in zip(batch, vectors, strict=True)], found)

    def _keep_then_raise(self, db: sqlite3.Connection | None, rows: list[tuple[str, np.ndarray]],
                         found: dict[str, np.ndarray], exc: PartialResults | Interrupted,
                         which: str) -> NoReturn:
        """Store what was paid for before `exc`, then raise it on: Ctrl-C as ever, an error
        saying `which` vectors are kept (a re-run sends only the rest)."""
        self._keep(db, rows, found)
        if isinstance(exc, Interrupted):
            raise KeyboardInterrupt from None
        if self.read_only:
            raise RagkitError(str(exc)) from None
        raise RagkitError(f"{exc}; {which} are kept in the embedding cache") from None

    def _keep(self, db: sqlite3.Connection | None, rows: list[tuple[str, np.ndarray]],
              found: dict[str, np.ndarray]) -> None:
        """Store (key, vector) rows in one committed transaction; a read-only cache keeps
        them for this call only, and says so once."""
        rows = [(k, np.asarray(v, dtype=np.float32)) for k, v in rows]
        found.update(rows)  # first: a disk found full below does not embed them again
        if db is not None and not self.read_only:
            with db:
                db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)",
                               [(k, v.tobytes()) for k, v in rows])
        elif rows and self.path not in _NOT_KEPT:
            _NOT_KEPT.add(self.path)
            warnings.warn(RagkitWarning(f"the embedding cache at {self.path} is "
                                        f"{'on a full disk' if self.full else 'read-only'}, so "
                                        f"new vectors are not kept (they are embedded again "
                                        f"each time they are needed)"), stacklevel=2)

    def _lookup(self, db: sqlite3.Connection | None,
                keys: Iterable[str]) -> dict[str, np.ndarray]:
        if db is None:  # read only: the file as it is now (`ReadOnlyFile`), if there is one
            keys = list(keys)
            return self._reader().read(lambda read: self._rows(read, keys, table=True), {})
        return self._rows(db, keys)

    def _rows(self, db: sqlite3.Connection, keys: Iterable[str],
              table: bool = False) -> dict[str, np.ndarray]:
        """The usable vectors of `keys` in the file `db` reads (`table`: none when it has no
        table yet, as a file read where it cannot be written may not)."""
        if table and not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'"
                                    ).fetchone():
            return {}
        keys, found = list(keys), {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = db.execute(f"SELECT key, vector FROM embeddings WHERE key IN "
                              f"({','.join('?' * len(part))})", part)
            for key, blob in rows:
                # a damaged row is a miss, embedded again and overwritten: of another length
                # (a 10-byte blob raised ValueError), NaN/infinite (the index built from it
                # was "damaged, rebuild it" forever) or all zero (every dense score 0)
                if not isinstance(blob, bytes) or len(blob) != 4 * self.dim:
                    continue
                vector = np.frombuffer(blob, dtype=np.float32)
                if np.isfinite(vector).all() and vector.any():
                    found[key] = vector
        return found

    def _connect(self) -> sqlite3.Connection | None:
        """This thread's connection, opened on first use and then kept: opening one per call
        cost ~3 ms, paid thousands of times by callers that embed one text at a time (CRAG's
        evaluator, the offline judge). None where the cache cannot be written: it is read
        through `_reader`.

        A kept connection to a file deleted or replaced since (`ragkit cache clear
        --embeddings` while a notebook embeds) is closed and the file at `path` opened: the
        old one went on taking every later vector, so the next run embedded them again."""
        if self.read_only:
            return None
        db = getattr(self._local, "db", None)
        if db is not None and self._local.file != file_id(self.path):
            db.close()
            db = self._local.db = None
        if db is None:
            db = self._local.db = sqlite3.connect(self.path, timeout=60)
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: no flush per commit (ragkit.cache)
            # `cache clear --embeddings` may have deleted the file since __init__: a search
            # then failed "no such table: embeddings" instead of starting a new cache
            use_wal(db)
            with db:
                db.execute(_SCHEMA)
            self._local.file = file_id(self.path)
        return db

    def _reader(self) -> ReadOnlyFile:
        """This thread's reader of a cache that cannot be written, kept as `_connect` keeps
        a connection; it reads the file again when another process changed it."""
        reader = getattr(self._local, "reader", None)
        if reader is None:
            reader = self._local.reader = ReadOnlyFile(self.path)
        return reader
