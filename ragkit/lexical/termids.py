"""Texts to BM25 term ids in one pass, with the vocabulary in first-seen order.

What it is: the tokenizing half of `BM25.fit`, built for a million short texts. Each text's
tokens become integer ids appended to one int32 buffer (no list of strings per text is kept),
and for the `code` and `auto` tokenizers on ASCII text each distinct compound (`getUserName`,
`a/b.py`, a plain word) is tokenized once and remembered as its tuple of term ids, so a
repeated word costs a dictionary look-up instead of the identifier splitter.

What it is not: another tokenizer. The ids are exactly those of the named tokenizer's
tokens in text order, and term ids are numbered in first-seen order over the whole token
stream — rank-bm25's vocabulary order, which its IDF mean follows (see `BM25`).

Limits: the compound memo grows with the number of distinct compounds (about the
vocabulary size), not with the corpus.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import chain

import numpy as np

from ragkit.lexical.tokenizers import UNIT_TOKENIZERS, ascii_units, compound_tokens


class _Vocabulary(dict):
    """term -> id; an unseen term gets the next id on first look-up."""

    def __missing__(self, term: str) -> int:
        ident = self[term] = len(self)
        return ident


class _Compounds(dict):
    """compound -> its term ids, tokenized on first sight."""

    def __init__(self, vocabulary: _Vocabulary) -> None:
        super().__init__()
        self.vocabulary = vocabulary

    def __missing__(self, unit: str) -> tuple[int, ...]:
        ids = self[unit] = tuple(map(self.vocabulary.__getitem__, compound_tokens(unit)))
        return ids


class TermIds:
    """Accumulates the term ids and lengths of documents given as texts or token lists."""

    def __init__(self, tokenize: Callable[[str], list[str]] | None = None,
                 name: str | None = None) -> None:
        self.tokenize, self.vocabulary = tokenize, _Vocabulary()
        self._compounds = _Compounds(self.vocabulary) if name in UNIT_TOKENIZERS else None
        self._ids, self._lengths = array("i"), array("q")

    def add_texts(self, texts: Iterable[str]) -> None:
        """Tokenize and append each text (one document each), in order."""
        ids, lengths, vocab = self._ids, self._lengths, self.vocabulary
        compounds, tokenize = self._compounds, self.tokenize
        for text in texts:
            before = len(ids)
            units = ascii_units(text) if compounds is not None else None
            if units is None:
                ids.extend(map(vocab.__getitem__, tokenize(text)))
            else:
                ids.extend(chain.from_iterable(map(compounds.__getitem__, units)))
            lengths.append(len(ids) - before)

    def add_tokens(self, corpus: Iterable[Sequence[str]]) -> None:
        """Append documents that are already token lists."""
        ids, lengths, vocab = self._ids, self._lengths, self.vocabulary
        for tokens in corpus:
            ids.extend(map(vocab.__getitem__, tokens))
            lengths.append(len(tokens))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(term id of every token, int32; length of every document, int64)."""
        return (np.frombuffer(self._ids, dtype=np.int32) if self._ids else
                np.empty(0, np.int32), np.frombuffer(self._lengths, dtype=np.int64)
                if self._lengths else np.empty(0, np.int64))

    def terms(self) -> dict[str, int]:
        """The vocabulary as a plain dict, ids in first-seen order."""
        return dict(self.vocabulary)
