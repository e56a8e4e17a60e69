"""Texts to BM25 term ids on several cores, with exactly the ids of one process.

What it is: `term_ids`, the tokenizing stage of `BM25.fit`. Above `THRESHOLD` texts, blocks
of `BLOCK` texts go to a `concurrent.futures.ProcessPoolExecutor` (2 workers by default, never
more than the cores this process may run on, `jobs.usable_cores`); each worker numbers its
block's terms in its own first-seen order (`TermIds`), and the blocks are merged in corpus
order, each block's new terms appended to the vocabulary in that block's order. That is the
first-seen order of the whole stream, so term ids, the vocabulary and every array built
from them are those of a single process.

What it is not: a speed-up for small corpora (below the threshold everything stays in this
process: starting workers costs more than it saves) or for custom tokenizer functions (only
named tokenizers are sent to workers; a function may not survive pickling).

Limits: at most 2 blocks per worker are in flight, so the texts held at once are bounded by
the block size, not by the corpus. Workers end with this process, even when it is killed
(`jobs.die_with_parent`); $RAGKIT_WORKER_BLOCK sets the block size (and the threshold to
twice it) for tests.
"""
from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice

import numpy as np

from ragkit.jobs import die_with_parent, usable_cores, worker_block
from ragkit.lexical.termids import TermIds
from ragkit.lexical.tokenizers import compound_tokens, get_tokenizer

BLOCK = 50_000  # texts per task
THRESHOLD = 2 * BLOCK  # fewer texts than this: no workers


def default_workers() -> int:
    """2, or fewer on a machine with fewer cores."""
    return max(1, min(2, usable_cores()))


def term_ids(texts: Iterable[str], tokenize: Callable[[str], list[str]], name: str | None,
             workers: int | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """(term id of every token in order, int32; tokens per text, int64; vocabulary term ->
    id in first-seen order) of `texts`, read once, tokenized by `tokenize` (named `name`)."""
    workers = default_workers() if workers is None else workers
    block = worker_block(BLOCK)
    threshold = THRESHOLD if block == BLOCK else 2 * block
    stream = iter(texts)
    head = list(islice(stream, threshold))
    if workers < 2 or name is None or len(head) < threshold:
        terms = TermIds(tokenize, name)
        terms.add_texts(head)
        del head
        terms.add_texts(stream)
        ids, lengths = terms.arrays()
        return ids, lengths, terms.terms()
    merged = Merge()
    blocks = _blocks(head, stream, block)
    with ProcessPoolExecutor(workers, initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        pending: deque[Future] = deque()
        for block in blocks:
            pending.append(pool.submit(_tokenize_block, name, block))
            if len(pending) >= 2 * workers:
                merged.add(*pending.popleft().result())
        while pending:
            merged.add(*pending.popleft().result())
    return merged.result()


def _blocks(head: list[str], stream: Iterator[str], size: int) -> Iterator[list[str]]:
    """Blocks of `size` texts: `head` first, then the rest of `stream`."""
    for lo in range(0, len(head), size):
        yield head[lo:lo + size]
    while block := list(islice(stream, size)):
        yield block


class _Memo(dict):
    """compound -> its `code` tokens, kept by a worker across its blocks: each block numbers
    its terms afresh, but no compound is split twice in one worker."""

    def __missing__(self, compound: str) -> list[str]:
        tokens = self[compound] = compound_tokens(compound)
        return tokens


_MEMO = _Memo()


def _tokenize_block(name: str, texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """In a worker: one block's local term ids, lengths and local vocabulary (in order).
    The cyclic GC is off meanwhile: the block makes many small objects and no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        terms = TermIds(get_tokenizer(name), name, _MEMO.__getitem__)
        terms.add_texts(texts)
        ids, lengths = terms.arrays()
        return ids, lengths, list(terms.vocabulary)
    finally:
        if enabled:
            gc.enable()


class Merge:
    """Blocks' local ids renumbered into one vocabulary, in block order."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.ids: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []

    def add(self, ids: np.ndarray, lengths: np.ndarray, local: list[str]) -> None:
        """One block: its ids index `local`, its terms in the block's first-seen order."""
        self.intern(local)
        glob = np.fromiter(map(self.vocabulary.__getitem__, local), dtype=np.int32,
                           count=len(local))
        self.append(glob, ids, lengths)

    def intern(self, terms: list[str]) -> None:
        """Give each term not yet known the next global id, in order."""
        vocab = self.vocabulary
        for term in terms:
            if term not in vocab:
                vocab[term] = len(vocab)

    def append(self, glob: np.ndarray, ids: np.ndarray, lengths: np.ndarray) -> None:
        """Store a block's ids mapped through `glob` (local id -> global id)."""
        self.ids.append(glob[ids] if ids.size else ids)
        self.lengths.append(lengths)

    def result(self) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
        ids = np.concatenate(self.ids) if self.ids else np.empty(0, np.int32)
        self.ids.clear()
        lengths = np.concatenate(self.lengths) if self.lengths else np.empty(0, np.int64)
        return ids, lengths, self.vocabulary
