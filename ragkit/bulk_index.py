"""`ragkit index FILE.jsonl --embedder none`: the index folder built block by block.

What it is: `index_jsonl`, the text-only build of a documents JSONL file without a list of
every document and chunk in memory. Blocks of `BLOCK` lines go through the whole
per-document path — parse and check each line, chunk, contextualize, encode the
chunks.jsonl rows, tokenize into term ids — in worker processes (`workers`, default 2), or
in this process for a small file. The parent writes each block's rows to chunks.jsonl as
they come, in file order, and renumbers the workers' term ids into the file's first-seen
order (`_Renumber`), so the folder is byte for byte the one `Pipeline.build` +
`save` write (tests/test_bulk_index.py compares them).

What it is not: every build. Vectors, parent–child chunks, the Claude contextualizer and
other data set layouts take `Pipeline.build` (`applies` says which). Nor a validator of its
own: on any bad line, or a document id that may repeat across blocks, it raises
`Sequential` and the caller runs the one-process build, which names the first error in
file order exactly as before (or, for an id hash that merely collided, builds the index).

Workers end with the parent, even when it is killed (`jobs.die_with_parent`); a killed
build's temporary folder is removed by the next build of the same folder
(`ragkit.stale_temp`). $RAGKIT_WORKER_BLOCK sets the lines per task (and the threshold to
twice it), so tests can make a small file use workers.
"""
from __future__ import annotations

import gc
import hashlib
import os
from array import array
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import asdict
from itertools import islice
from pathlib import Path

import numpy as np

from ragkit.atomic import replace_folder
from ragkit.chunk_rows import RowWriter, chunk_line, gc_paused
from ragkit.chunk_table import OFFSETS
from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.config import IndexConfig
from ragkit.contextualize import CONTEXTUALIZERS, get_contextualizer
from ragkit.documents import Ids, RagkitError, document_of, parse_line
from ragkit.jsonl import JSONL_SUFFIXES
from ragkit.index_folder import WHAT, owns_index, write_manifest
from ragkit.jobs import die_with_parent, worker_block, worker_pool
from ragkit.lexical import BM25, get_tokenizer
from ragkit.lexical.parallel import Merge, default_workers
from ragkit.lexical.termids import TermIds
from ragkit.progress import progress_bar

BLOCK = 25_000  # lines per task
THRESHOLD = 2 * BLOCK  # a file of fewer lines than this stays in this process


class Sequential(Exception):
    """This file needs the one-process build (a bad line, or ids that may repeat)."""


def applies(config: IndexConfig, docs: Path, vectors: object, store: object) -> bool:
    """True when `index_jsonl` builds what `Pipeline.build` + `save` would: a documents JSONL
    file (named so; another file goes the one-process way, which says what it is), no vectors
    or embedder, the memory store, no parent–child, a built-in
    contextualizer."""
    return (docs.is_file() and docs.suffix.lower() in JSONL_SUFFIXES  # else: what is it
            and vectors is None and not config.embedder
            and store.kind == "memory" and not config.parent_child
            and config.contextualizer in CONTEXTUALIZERS)


def index_jsonl(path: Path, config: IndexConfig, out: Path, workers: int | None = None,
                progress: bool = True) -> tuple[int, int]:
    """Build the BM25-only index of the documents JSONL file `path` into folder `out`
    (replaced atomically); (documents, chunks) indexed. Raises `Sequential` (nothing
    written) when the one-process build must run instead."""
    workers = default_workers() if workers is None else workers
    with gc_paused(), replace_folder(out, owns_index, WHAT) as tmp:
        with path.open("rb") as handle, (tmp / "chunks.jsonl").open("wb") as out:
            rows = RowWriter(out)  # records each row's offset for chunks.offsets.npy
            (ids, lengths, vocab), keys, n_docs, n_chunks = _run(path, config, handle, rows,
                                                                 workers, progress)
        rows.save(tmp / OFFSETS)
        if n_docs == 0 or np.unique(keys).size != n_docs:  # no documents, or maybe a repeat
            raise Sequential(path)
        bm25 = BM25.from_term_ids(ids, lengths, vocab, tokenizer=config.tokenizer)
        del ids, lengths
        bm25.save(tmp / "bm25")
        write_manifest(tmp, {"config": asdict(config), "embedder": None}, n_chunks)
    return n_docs, n_chunks


def _run(path: Path, config: IndexConfig, handle, rows, workers: int, progress: bool):
    """Every block chunked, written to `rows` and tokenized, in file order: (the merged
    (term ids, tokens per chunk, vocabulary), each document id's hash, documents, chunks)."""
    with progress_bar(desc="index", unit=" docs", disable=not progress, leave=False) as bar:
        return _run_blocks(path, config, handle, rows, workers, bar)  # bar closed on Ctrl-C


def _run_blocks(path: Path, config: IndexConfig, handle, rows, workers: int, bar):
    """`_run`'s work, `bar` updated with the documents done."""
    block = worker_block(BLOCK)
    threshold = THRESHOLD if block == BLOCK else 2 * block
    head = list(islice(handle, threshold))
    merged, keys, n_docs, n_chunks = _Renumber(), [], 0, 0
    if workers < 2 or len(head) < threshold:
        terms = TermIds(get_tokenizer(config.tokenizer), config.tokenizer)
        for first, lines in _blocks(head, handle, block):
            found = _call(_chunk_block, path, first, lines, config)
            rows.write(found[0])
            terms.add_texts(found[1])
            keys.append(found[2])
            n_docs, n_chunks = n_docs + found[3], n_chunks + len(found[1])
            bar.update(found[3])
        found = (*terms.arrays(), terms.terms())
    else:
        with worker_pool(workers, initializer=_fresh_worker) as pool:
            pending: deque[Future] = deque()
            for first, lines in _blocks(head, handle, block):
                pending.append(pool.submit(_worker_block, path, first, lines, config))
                while pending and (len(pending) > 2 * workers or pending[0].done()):
                    n = _take(pending.popleft(), rows, merged, keys)
                    n_docs, n_chunks = n_docs + n[0], n_chunks + n[1]
                    bar.update(n[0])
            while pending:
                n = _take(pending.popleft(), rows, merged, keys)
                n_docs, n_chunks = n_docs + n[0], n_chunks + n[1]
                bar.update(n[0])
        found = merged.result()
    return found, np.concatenate(keys) if keys else np.empty(0, np.uint64), n_docs, n_chunks


def _take(future: Future, rows, merged: _Renumber, keys: list) -> tuple[int, int]:
    """One worker block's result written and merged: (documents, chunks) in it."""
    block_rows, block_keys, n_docs, worker, ids, lengths, new = _call(future.result)
    rows.write(block_rows)
    keys.append(block_keys)
    merged.add_from(worker, ids, lengths, new)
    return n_docs, lengths.size


def _call(function, *args):
    """`function(*args)`, a bad line (RagkitError) turned into `Sequential`."""
    try:
        return function(*args)
    except RagkitError as exc:
        raise Sequential(str(exc)) from None


def _blocks(head: list[bytes], handle, size: int) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, the lines joined) of each block of `size` lines."""
    first = 1
    for lo in range(0, len(head), size):
        yield first, b"".join(head[lo:lo + size])
        first += len(head[lo:lo + size])
    while block := list(islice(handle, size)):
        yield first, b"".join(block)
        first += len(block)


def _chunk_block(path: Path, first: int, lines: bytes, config: IndexConfig
                 ) -> tuple[bytes, list[str], np.ndarray, int]:
    """One block of lines: (its chunks.jsonl rows, each chunk's indexed text, an 8-byte
    hash of each document id, documents). Raises RagkitError at a bad line."""
    chunker = ChunkerConfig(config.chunk_size, config.overlap)
    contextualize = get_contextualizer(config.contextualizer)
    rows, texts, keys, ids = [], [], [], Ids("document")
    raws = lines.split(b"\n")
    if raws and not raws[-1]:
        raws.pop()  # the newline ending the last line
    for number, raw in enumerate(raws, start=first):
        obj = parse_line(raw, path, number)
        if obj is None:
            continue
        doc = document_of(obj, path, number, ids)
        keys.append(hashlib.blake2b(doc.id.encode("utf-8", "surrogatepass"),
                                    digest_size=8).digest())
        for chunk in contextualize(doc, chunk_document(doc, chunker)):
            rows.append(chunk_line(chunk))
            texts.append(chunk.indexed_text)
    return b"".join(rows), texts, np.frombuffer(b"".join(keys), np.uint64), len(keys)


_TERMS: dict[str, TermIds] = {}  # in a worker: its term ids so far, by tokenizer


def _fresh_worker(parent: int) -> None:
    """A new worker numbers terms from 0 (whatever the parent held when it forked), and
    ends when its parent ends (`jobs.die_with_parent`)."""
    die_with_parent(parent)
    _TERMS.clear()


def _worker_block(path: Path, first: int, lines: bytes, config: IndexConfig):
    """In a worker: `_chunk_block`, its texts tokenized into this worker's term ids, and the
    terms it had not seen before (`TermIds.take`). The cyclic GC is off meanwhile: many
    small objects, no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        rows, texts, keys, n_docs = _chunk_block(path, first, lines, config)
        name = config.tokenizer
        terms = _TERMS.setdefault(name, TermIds(get_tokenizer(name), name))
        terms.add_texts(texts)
        del texts
        return (rows, keys, n_docs, os.getpid(), *terms.take())
    finally:
        if enabled:
            gc.enable()


class _Renumber(Merge):
    """Workers' term ids renumbered into one vocabulary, in file order.

    Each worker numbers terms in its own first-seen order and reports, with each block, the
    terms new to it. A worker takes its blocks in file order and they are merged in file
    order, so a term new to the whole file is new to the worker that meets it first: adding
    each block's new terms not yet known, in order, gives the first-seen order of the file,
    the ids one process gives (tests/test_bulk_index.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.maps: dict[int, array] = {}  # worker -> its term id -> global id

    def add_from(self, worker: int, ids: np.ndarray, lengths: np.ndarray, new: list[str]
                 ) -> None:
        """A block from `worker`: its ids in the worker's numbering, `new` its new terms."""
        self.intern(new)
        mapping = self.maps.setdefault(worker, array("i"))
        mapping.extend(map(self.vocabulary.__getitem__, new))
        self.append(np.frombuffer(mapping, np.int32), ids, lengths)
