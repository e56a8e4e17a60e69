"""Okapi BM25 over a sparse weight matrix, with the scores of rank-bm25 0.2.2.

What it is: `BM25` indexes tokenized texts and scores queries with exactly the scores of
rank-bm25 0.2.2 `BM25Okapi` on the same tokens, but precomputes every (term, document)
weight into a scipy CSR matrix, so a query costs a sum of a few matrix rows instead of a
Python loop over all documents. `search` ranks the candidates, the documents sharing at
least one query term, whatever their score (rank-bm25's idf can weigh a shared term 0 or
less); a document sharing no term is never returned.

What it is not: not an inverted index on disk, not incremental (refit to add documents),
not a query language (no phrases, no boolean operators, no field weights).

Limits: the index is about 12 bytes per distinct (term, document) pair, memory-mapped
from its `.npy` files once saved; the first long query builds a float32 copy (4 bytes per
document) of every row in over 1/16 of the documents, at most 1 GiB (`bm25_scan`). Errors
users can hit (unknown tokenizer, empty corpus, bad index folder) raise RagkitError.

Method: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework:
BM25 and Beyond") with the IDF floor of rank-bm25 0.2.2 `BM25Okapi`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from scipy import sparse

from ragkit.documents import RagkitError
from ragkit.jobs import threads
from ragkit.lexical import bm25_batch, bm25_files, bm25_search
from ragkit.lexical.bm25_data import BM25Data
from ragkit.lexical.parallel import term_ids
from ragkit.lexical.termids import TermIds
from ragkit.lexical.tokenizers import Tokenizer, get_tokenizer
from ragkit.progress import progress_bar


def okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25 0.2.2 BM25Okapi IDF: log(N - n + 0.5) - log(n + 0.5), and every negative
    value replaced by `epsilon` times the mean raw IDF over the vocabulary."""
    raw = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    if raw.size == 0:
        return raw
    # A sequential sum (cumsum), as rank-bm25's loop adds them; np.mean sums pairwise and
    # can differ in the last bit.
    average_idf = np.cumsum(raw)[-1] / raw.size
    return np.where(raw < 0, epsilon * average_idf, raw)


def okapi_tf(tf: np.ndarray, doc_len: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """The BM25 term-frequency factor tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)),
    written in the same operation order as rank-bm25 so values agree to the last bit."""
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl))


def _okapi_weights(tf, doc_len, avgdl, k1, b, idf, block: int = 1 << 20) -> np.ndarray:
    """idf(t) · `okapi_tf` of every posting of `tf` (terms × documents), in the same
    operation order as `okapi_tf` (so bit for bit its values), `block` postings at a time,
    the blocks on the shared threads (numpy releases the GIL on arrays this long): the
    only posting-sized array made is the result (a million-chunk index was holding three
    more, 8 bytes a posting each)."""
    out = np.empty(tf.data.size, dtype=np.float64)
    lengths = doc_len.astype(np.float64)

    def fill(lo: int) -> None:
        hi = min(lo + block, out.size)
        norm = lengths[tf.indices[lo:hi]]  # |d| of each posting
        norm *= b
        norm /= avgdl
        norm += 1 - b
        norm *= k1
        norm += tf.data[lo:hi]  # tf + k1·(1 − b + b·|d|/avgdl)
        weights = out[lo:hi]
        weights[:] = tf.data[lo:hi]
        weights *= k1 + 1
        weights /= norm
        weights *= _posting_values(idf, tf.indptr, lo, hi)  # idf · factor

    list(threads().map(fill, range(0, out.size, block)))
    return out


def _posting_values(values: np.ndarray, indptr: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """`values[row]` for each posting lo..hi-1 of a CSR matrix: each row's value repeated
    over its postings in the span (a binary search per posting cost 1.1 s at 35M)."""
    first, last = np.searchsorted(indptr, [lo, hi - 1], side="right") - 1
    starts = np.maximum(indptr[first:last + 1], lo)
    ends = np.minimum(indptr[first + 1:last + 2], hi)
    return np.repeat(values[first:last + 1], ends - starts)


class BM25(BM25Data):
    """Okapi BM25 with the scores of rank-bm25 0.2.2 `BM25Okapi`: a `BM25Data` that
    tokenizes, fits and searches.

    For a query q (a bag of terms, repeats counted) and a document d of |d| tokens, in a
    corpus of N documents with mean length avgdl:

        score(q, d) = Σ_{t in q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
        idf(t)      = log(N − n(t) + 0.5) − log(n(t) + 0.5)     (n(t): documents containing t)

    and an idf below zero (a term in more than half the documents) is replaced by
    epsilon · mean(raw idf over the vocabulary). Terms outside the vocabulary score 0.
    Source: Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
    Beyond", section 3; the IDF floor is rank-bm25 0.2.2 `BM25Okapi._calc_idf`.

    Inherited quirks, kept for parity: a term in exactly half of the documents has idf 0;
    in a 1- or 2-document corpus no term has a positive idf, so scores are 0 or negative.
    Where rank-bm25 fails (every document empty: division by zero) this gives all-zero
    scores. Hence `search` ranks the documents sharing a query term (`candidates`), not
    the documents with a positive score.

    Usage:
        bm25 = BM25.fit(texts, tokenizer="code")
        indices, scores = bm25.search("how is the lock released", k=10)
    """

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: str | Tokenizer = "words",
    ) -> None:
        if not k1 >= 0:
            raise RagkitError(f"BM25 k1 must be >= 0, got {k1!r}")
        if not 0 <= b <= 1:
            raise RagkitError(f"BM25 b must be in [0, 1], got {b!r}")
        if callable(tokenizer):
            name: str | None = None
            self.tokenize: Tokenizer = tokenizer
        else:
            name, self.tokenize = tokenizer, get_tokenizer(tokenizer)
        super().__init__(float(k1), float(b), float(epsilon), name)

    # ------------------------------------------------------------------ building

    @classmethod
    def fit(cls, texts: Iterable[str], *, progress: bool = False, workers: int | None = None,
            **params) -> BM25:
        """Tokenize `texts` (any iterable, read once) with the chosen tokenizer and index them.

        A large corpus is tokenized by `workers` processes (default 2, at most the cores;
        `ragkit.lexical.parallel`), with the same term ids as one process."""
        model = cls(**params)
        return model._index(*term_ids(_progress(texts, progress, "tokenize"), model.tokenize,
                                      model.tokenizer_name, workers))  # no name keeps the ids

    @classmethod
    def fit_tokens(cls, corpus: Iterable[Sequence[str]], **params) -> BM25:
        """Index documents that are already token lists (queries given as lists too)."""
        model = cls(**params)
        terms = TermIds()
        terms.add_tokens(corpus)
        return model._index(*terms.arrays(), terms.terms())

    @classmethod
    def from_term_ids(cls, ids: np.ndarray, doc_len: np.ndarray, vocab: dict[str, int],
                      **params) -> BM25:
        """Index documents already turned into term ids (`ragkit.lexical.termids`: the
        ids of every token in order, tokens per document, the first-seen vocabulary), as
        `fit` does after tokenizing; `params` must name the tokenizer that made them."""
        return cls(**params)._index(ids, doc_len, vocab)

    def _index(self, ids: np.ndarray, doc_len: np.ndarray, vocab: dict[str, int]) -> BM25:
        """Weights straight from the token ids: a documents × terms count matrix (CSR, its
        rows the token stream as it is), transposed to terms × documents, repeats summed."""
        if doc_len.size == 0:
            raise RagkitError("BM25 needs at least one document; the corpus is empty")
        n_docs = doc_len.size
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(doc_len, out=indptr[1:])
        counts = sparse.csr_matrix((np.ones(ids.size, dtype=np.int32), ids, indptr),
                                   shape=(n_docs, len(vocab)))
        del ids  # the matrix holds them; freed with it below
        # terms × documents by a counting sort: each row's documents ascending, a repeated
        # term's postings side by side, so summing them needs no sort (sorting each
        # document's terms first cost 1.3 s at a million chunks)
        tf = counts.T.tocsr()
        del counts
        tf.sum_duplicates()
        self.vocabulary, self.doc_len = vocab, doc_len
        self.avgdl = float(doc_len.sum() / n_docs)
        df = np.diff(tf.indptr)
        self.idf = okapi_idf(df, n_docs, self.epsilon)
        weights = _okapi_weights(tf, doc_len, self.avgdl, self.k1, self.b, self.idf)
        self.weights = sparse.csr_matrix((weights, tf.indices, tf.indptr), shape=tf.shape)
        return self

    # ------------------------------------------------------------------ querying

    def scores_at(self, query: str, positions: np.ndarray) -> np.ndarray:
        """`scores(query)` of only the chunks at `positions` (the rerankers' candidates),
        summed from their columns instead of scoring the whole index."""
        ids = self._query_ids(query)
        if not ids.size or not positions.size:
            return np.zeros(len(positions))
        return np.asarray(self.weights[ids][:, positions].sum(axis=0), dtype=np.float64).ravel()

    def _query_ids(self, query: str | Sequence[str]) -> np.ndarray:
        """Vocabulary ids of the query's known terms, in query order, repeats kept."""
        tokens = self.tokenize(query) if isinstance(query, str) else query
        vocab = self.vocabulary
        return np.array([vocab[t] for t in tokens if t in vocab], dtype=np.int64)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for `query` (text, or a token list), like
        rank-bm25's `get_scores`.

        Each query term adds its row of precomputed weights to the documents that contain
        it, in query order (repeats included), the order rank-bm25 adds them in, so the
        scores are bit-for-bit rank-bm25's.
        """
        return self._score(self._query_ids(query))[0]

    def candidates(self, query: str | Sequence[str]) -> np.ndarray:
        """Indices (ascending) of the documents containing at least one known query term.

        Whatever their score: with rank-bm25's idf a shared term can weigh 0 (a term in
        exactly half of the documents) or less (every term of a 1- or 2-document corpus),
        and such a document still matches the query while one sharing no term does not.
        """
        return np.flatnonzero(self._score(self._query_ids(query))[1])

    def search(self, query: str | Sequence[str], k: int, ties: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
        """The k best candidates as (indices, scores): score descending, ties to the lower
        index; with `ties`, followed by every further candidate whose score equals the k-th's
        in single precision (what the tie rule, `ragkit.fusion.ranked`, counts as a tie).

        Only `candidates` are returned, so fewer than k entries (none for a query sharing no
        term with the corpus) when fewer documents match; scores may be 0 or negative.
        Exact whichever path a query takes (`bm25_batch`, a batch of one, for short
        postings in an index of up to ONE_QUERY_DOCS documents, else `bm25_search`);
        `exhaustive = True` scores every document instead (the same results, for
        comparisons).
        """
        ids = self._query_ids(query)
        if self.n_docs > bm25_batch.ONE_QUERY_DOCS:
            return bm25_search.search(self, ids, k, ties)
        return bm25_batch.search_many(self, ids, np.array([ids.size]), k, ties)[0]

    def _long(self, ids: np.ndarray) -> bool:
        return bm25_search.is_long(self, ids)

    def _matches(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return bm25_search.matches(self, ids)

    def _score(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return bm25_search.score_all(self, ids)

    def search_many(
        self, queries: Iterable[str | Sequence[str]], k: int, progress: bool = False,
        ties: bool = False,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """`search` for each query (the same results, bit for bit), with an optional
        progress bar.

        Queries with short postings are answered a chunk at a time by whole-batch numpy
        passes (`bm25_batch`: 3-4x faster than a loop of `search` at 20,000 documents);
        the others take `search`'s path.
        """
        vocab, ids, counts = self.vocabulary, [], []
        for query in queries:  # `_query_ids` of each, into one list
            tokens = self.tokenize(query) if isinstance(query, str) else query
            before = len(ids)
            ids += [vocab[t] for t in tokens if t in vocab]
            counts.append(len(ids) - before)
        flat, sizes = np.array(ids, dtype=np.int64), np.array(counts, dtype=np.int64)
        if not progress:
            return bm25_batch.search_many(self, flat, sizes, k, ties)
        with progress_bar(total=len(counts), desc="bm25 search") as bar:
            return bm25_batch.search_many(self, flat, sizes, k, ties, done=bar.update)

    # ------------------------------------------------------------------ persistence

    def save(self, folder: str | Path) -> Path:
        """Write the index into `folder` (`ragkit.lexical.bm25_files.save`: `.npy` arrays and
        `bm25.json`, no pickle)."""
        return bm25_files.save(self, folder)

    @classmethod
    def load(cls, folder: str | Path) -> BM25:
        """Read an index written by `save`, its arrays memory-mapped
        (`ragkit.lexical.bm25_files.load`)."""
        return bm25_files.load(cls, folder)

    def __repr__(self) -> str:
        return (f"BM25(k1={self.k1}, b={self.b}, epsilon={self.epsilon}, "
                f"tokenizer={self.tokenizer_name!r}, docs={self.n_docs}, "
                f"terms={len(self.vocabulary)})")


def _progress(items, enabled: bool, desc: str):
    """`items`, wrapped in a tqdm bar when `enabled`."""
    if not enabled:
        return items
    return progress_bar(items, desc=desc)
