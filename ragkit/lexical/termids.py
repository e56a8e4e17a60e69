"""Texts to BM25 term ids in one pass, with the vocabulary in first-seen order.

What it is: the tokenizing half of `BM25.fit`, built for a million short texts. Each text's
tokens become integer ids appended to one int32 buffer (no list of strings per text is kept),
and for the `code` and `auto` tokenizers on ASCII text each distinct unit (a compound such
as `getUserName`, `a/b.py` or a plain word, possibly with joiners at its edges: see
`tokenizers.ascii_units`) is tokenized once and remembered as its tuple of term ids, so a
repeated word costs a dictionary look-up instead of the identifier splitter.

What it is not: another tokenizer. The ids are exactly those of the named tokenizer's
tokens in text order, and term ids are numbered in first-seen order over the whole token
stream — rank-bm25's vocabulary order, which its IDF mean follows (see `BM25`).

Limits: the unit memo grows with the number of distinct units (about the vocabulary size),
not with the corpus.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import islice

import numpy as np

from ragkit.lexical.tokenizers import UNIT_TOKENIZERS, ascii_units, compound_tokens


_BLOCK = 1 << 20  # unit occurrences expanded at a time


class _Vocabulary(dict):
    """term -> id; an unseen term gets the next id on first look-up."""

    def __missing__(self, term: str) -> int:
        ident = self[term] = len(self)
        return ident


class _Units(dict):
    """unit -> unit id, a unit being a compound (`expand` gives its tokens) or one token
    (`expand` None); a unit seen first registers its terms, in order, in `vocabulary`."""

    def __init__(self, table: "_Table", expand: Callable[[str], list[str]] | None) -> None:
        super().__init__()
        self.table, self.expand = table, expand

    def __missing__(self, unit: str) -> int:
        ident = self[unit] = self.table.add([unit] if self.expand is None else self.expand(unit))
        return ident


class _Table:
    """The term ids of every unit, flat (`terms`) with each unit's end offset (`ends`)."""

    def __init__(self) -> None:
        self.vocabulary = _Vocabulary()
        self.terms, self.ends = array("i"), array("q")

    def add(self, tokens: list[str]) -> int:
        self.terms.extend(map(self.vocabulary.__getitem__, tokens))
        self.ends.append(len(self.terms))
        return len(self.ends) - 1


class TermIds:
    """Accumulates the units and lengths of documents given as texts or token lists; the
    term ids come out, expanded in numpy, from `arrays`."""

    def __init__(self, tokenize: Callable[[str], list[str]] | None = None,
                 name: str | None = None,
                 expand: Callable[[str], list[str]] = compound_tokens) -> None:
        self.tokenize, self._table = tokenize, _Table()
        self.vocabulary = self._table.vocabulary
        self._tokens = _Units(self._table, None)
        self._compounds = (_Units(self._table, expand) if name in UNIT_TOKENIZERS
                           else None)
        self._units, self._counts = array("i"), array("q")  # unit ids; units per document
        self._taken = 0  # terms handed out by `take`

    def add_texts(self, texts: Iterable[str]) -> None:
        """Tokenize and append each text (one document each), in order."""
        units, counts = self._units, self._counts
        compounds, tokens, tokenize = self._compounds, self._tokens, self.tokenize
        for text in texts:
            before = len(units)
            found = ascii_units(text) if compounds is not None else None
            if found is None:
                units.extend(map(tokens.__getitem__, tokenize(text)))
            else:
                units.extend(map(compounds.__getitem__, found))
            counts.append(len(units) - before)

    def add_tokens(self, corpus: Iterable[Sequence[str]]) -> None:
        """Append documents that are already token lists."""
        units, counts, tokens = self._units, self._counts, self._tokens
        for doc in corpus:
            units.extend(map(tokens.__getitem__, doc))
            counts.append(len(doc))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(term id of every token in order, int32; tokens of every document, int64)."""
        units = _int_array(self._units, np.int32)
        counts = _int_array(self._counts, np.int64)
        ends = _int_array(self._table.ends, np.int64)
        terms = _int_array(self._table.terms, np.int32)
        starts = np.concatenate([[0], ends[:-1]]) if ends.size else ends
        if (ends - starts == 1).all():  # every unit one token (pre-split lists, `words`):
            return terms[units], counts.copy()  # a look-up; the expansion took 1.3 s at 10M
        sizes = (ends - starts).astype(np.int32)[units]  # tokens of each unit occurrence
        ids = np.empty(int(sizes.sum(dtype=np.int64)), dtype=np.int32)
        done = 0
        for lo in range(0, units.size, _BLOCK):  # blocks keep the int64 temporaries small
            block, size = units[lo:lo + _BLOCK], sizes[lo:lo + _BLOCK]
            n = int(size.sum(dtype=np.int64))
            # token i of unit occurrence j reads terms[starts[unit_j] + i]
            offset = np.concatenate([[0], np.cumsum(size[:-1], dtype=np.int64)])
            ids[done:done + n] = terms[np.repeat(starts[block] - offset, size) + np.arange(n)]
            done += n
        per_unit = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        unit_bounds = np.concatenate([[0], np.cumsum(counts)])
        return ids, per_unit[unit_bounds[1:]] - per_unit[unit_bounds[:-1]]

    def take(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """`arrays` of the documents added since the last `take`, and the terms first seen
        since then, in id order. The vocabulary and the units stay: a worker that keeps
        one `TermIds` over many blocks splits each distinct compound once."""
        ids, lengths = self.arrays()
        self._units, self._counts = array("i"), array("q")
        new = list(islice(self.vocabulary, self._taken, None))
        self._taken = len(self.vocabulary)
        return ids, lengths, new

    def terms(self) -> dict[str, int]:
        """The vocabulary as a plain dict, ids in first-seen order."""
        return dict(self.vocabulary)


def _int_array(values: array, dtype) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.empty(0, dtype)
