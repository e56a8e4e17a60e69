"""What a BM25 index is, as data: its parameters, vocabulary, idf, lengths and weights.

What it is: `BM25Data`, a plain data class. The file format (`bm25_files`: `save`, `load`)
and the search paths (`bm25_search`) are functions over it, and `BM25` (`bm25.py`) is a
`BM25Data` that also tokenizes, fits and scores, so the three modules import this leaf and
never each other's classes. `dense_rows` caches the float32 copies of the longest rows the
two-pass scan reads (`bm25_scan`), rebuilt when `weights` is replaced.

What it is not: a way to build an index (`BM25.fit` computes the weights) nor a tokenizer;
`tokenizer_name` is only the name the index was built with (None for a custom function,
which `save` refuses).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ragkit.lexical.bm25_scan import DenseRows


@dataclass(eq=False)  # compared and hashed by identity, as an index object always was
class BM25Data:
    """An Okapi BM25 index's numbers (see the module docstring and `BM25` for the formula).

    `weights` is terms × documents (CSR): idf(t) times the term-frequency factor of each
    (term, document) posting. `exhaustive` True makes search score every document (the
    reference path the tests and benchmarks compare with).
    """

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    tokenizer_name: str | None = "words"
    vocabulary: dict[str, int] = field(default_factory=dict)
    idf: np.ndarray = field(default_factory=lambda: np.empty(0))
    doc_len: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    avgdl: float = 0.0
    weights: sparse.csr_matrix = field(default_factory=lambda: sparse.csr_matrix((0, 0)))
    exhaustive: bool = False
    _dense: DenseRows | None = field(default=None, init=False, repr=False)

    @property
    def n_docs(self) -> int:
        return int(self.doc_len.size)

    @property
    def dense_rows(self) -> DenseRows:
        """Dense copies of the longest rows, built on first use (`bm25_scan`)."""
        if self._dense is None or self._dense.weights is not self.weights:
            self._dense = DenseRows(self.weights)
        return self._dense
