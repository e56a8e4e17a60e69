"""Features of (query, candidate chunk) pairs for the offline learned reranker.

What it is: a few cheap, hand-checkable numbers per candidate, computed from the index the
candidates came from, every one scaled to [0, 1] within the query's candidate list:
- `dense`: the query's best-window cosine (MaxP over the chunk's 96-token windows, Dai &
  Callan, SIGIR 2019), computed for *every* candidate, min-max over the candidates;
- `bm25`: the chunk's BM25 score, also for every candidate, min-max over the candidates;
- `doc_max`: the best first-stage score of any candidate from the same document, min-max
  (document-level evidence: a chunk whose neighbours match is likelier to answer);
- `phrase`: the share of the query's adjacent word pairs (lowercase `\\w+`; pairs of two
  stopwords skipped) that occur, adjacent, in the chunk's context + text;
- `second_maxp`: the best-window cosine under a second model over the same windows
  (`ragkit.rerank.second_view`: MiniLM/USE for an e5-small index, e5-small for a MiniLM one),
  min-max over the candidates.

Why "every candidate": the first stage only knows a retriever's score for the chunks in that
retriever's own top list and gives the others its floor, so a chunk just outside the dense
top 100 loses its whole dense evidence. Rescoring the fused top 150 with both retrievers is
the largest single gain measured (see `ragkit.rerank.offline`).

What it is not: a neural reranker; nothing here reads a model other than the index's own
embedder and the second view's model. Cost: two query embeddings (the index's, cached when
the first stage embedded it, and the second view's, a few ms), products with the candidates'
window vectors (a candidate's second-view windows embedded once, when it is first seen), a
few sparse rows, and set look-ups of the query's word pairs in each candidate's (cached)
pairs — under the 50 ms budget at 150 candidates once the windows are held
(`benchmarks/bench_rerank.py`).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragkit.lexical import ENGLISH_STOPWORDS
from ragkit.rerank.second_view import SecondView

FEATURES = ("dense", "bm25", "doc_max", "phrase", "second_maxp")
_WORD = re.compile(r"\w+")


def normalize(scores: np.ndarray) -> np.ndarray:
    """Plain min-max to [0, 1] within one query's candidates (a constant list → all ones).

    A feature scaling, not fusion: unlike `ragkit.fusion.normalize`, the lowest candidate
    gets 0 — every candidate is present, so there is no "absent" to stay below.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    span = scores.max() - scores.min()
    return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)


def word_pairs(text: str) -> list[tuple[str, str]]:
    """Adjacent lowercase `\\w+` pairs of `text`, in order, unique, without stopword pairs."""
    words = _WORD.findall(text.lower())
    pairs = [(a, b) for a, b in zip(words, words[1:])
             if not (a in ENGLISH_STOPWORDS and b in ENGLISH_STOPWORDS)]
    return list(dict.fromkeys(pairs))


def text_pairs(text: str) -> frozenset[tuple[str, str]]:
    """Every adjacent lowercase `\\w+` pair of `text`."""
    words = _WORD.findall(text.lower())
    return frozenset(zip(words, words[1:]))


def phrase_share(pairs: Sequence[tuple[str, str]], text: str | frozenset) -> float:
    """Share of `pairs` found as adjacent words in `text` (or in its `text_pairs`),
    case-insensitive; 0 for no pairs."""
    if not pairs:
        return 0.0
    present = text_pairs(text) if isinstance(text, str) else text
    return sum(1 for pair in pairs if pair in present) / len(pairs)


def bm25_scores(bm25, query: str, positions: np.ndarray) -> np.ndarray:
    """BM25 scores of the chunks at `positions` (`BM25.scores_at`)."""
    return bm25.scores_at(query, positions)


def maxp_scores(dense, query_vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Best-window cosine of each chunk at `positions` with `query_vector`
    (`DenseIndex.maxp_at`)."""
    return dense.maxp_at(query_vector, positions)


def doc_max(doc_ids: Sequence[str], scores: Sequence[float]) -> np.ndarray:
    """For each candidate, the best score among the candidates of its document."""
    best: dict[str, float] = {}
    for doc, score in zip(doc_ids, scores):
        best[doc] = max(best.get(doc, float("-inf")), float(score))
    return np.array([best[doc] for doc in doc_ids], dtype=np.float64)


def from_signals(candidates: Sequence[Any], name: str) -> np.ndarray:
    """Raw `name` scores from the candidates' first-stage signals; a candidate the retriever
    did not return gets the lowest score it gave (what the first stage's fusion assumes)."""
    given = [c.signals.get(name) for c in candidates]
    floor = min((g for g in given if g is not None), default=0.0)
    return np.array([floor if g is None else g for g in given], dtype=np.float64)


def feature_matrix(query: str, candidates: Sequence[Any], dense: np.ndarray | None,
                   bm25: np.ndarray, pairs_of=None, second: np.ndarray | None = None
                   ) -> np.ndarray:
    """(len(candidates), len(FEATURES)) features, columns in `FEATURES` order.

    `dense` and `bm25` are each candidate's raw retriever scores (from `maxp_scores` and
    `bm25_scores`, or `from_signals`), `second` its second-view MaxP (`SecondView.scores`); `dense`
    or `second` None (a BM25-only index; candidates without an index) gives a 0 column,
    which shifts every score alike and so leaves the order to the other features.
    """
    n = len(candidates)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    pairs = word_pairs(query)
    columns = {
        "dense": normalize(dense) if dense is not None else np.zeros(n),
        "bm25": normalize(bm25),
        "doc_max": normalize(doc_max([c.chunk.doc_id for c in candidates],
                                     [c.score for c in candidates])),
        "phrase": np.array([phrase_share(pairs, pairs_of(c) if pairs_of else
                                         c.chunk.indexed_text) for c in candidates]),
        "second_maxp": normalize(second) if second is not None else np.zeros(n),
    }
    return np.column_stack([columns[name] for name in FEATURES])


class IndexFeatures:
    """`feature_matrix` for candidates of one index, every candidate scored by both retrievers.

    Both scores are read from the index's store (`ragkit.stores`: the in-memory arrays, or
    the candidates' rows in Milvus). The query is embedded through the index's embedder; a
    cached embedder (the default) answers from the vector the first stage just stored. Each
    chunk's word pairs and its second view's window vectors are computed the first time it
    is a candidate and kept (memory grows with the chunks seen).
    """

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self.position = {chunk.id: n for n, chunk in enumerate(pipeline.chunks)}
        self._pairs: dict[str, frozenset[tuple[str, str]]] = {}
        self.second_view = SecondView(pipeline)

    def pairs_of(self, candidate) -> frozenset[tuple[str, str]]:
        """The candidate chunk's `text_pairs`, cached by chunk id."""
        found = self._pairs.get(candidate.chunk.id)
        if found is None:
            found = self._pairs[candidate.chunk.id] = text_pairs(candidate.chunk.indexed_text)
        return found

    def __call__(self, query: str, candidates: Sequence[Any]) -> np.ndarray:
        pipeline = self.pipeline
        positions = np.array([self.position[c.chunk.id] for c in candidates], dtype=np.int64)
        dense = second = None
        if pipeline.has_dense and len(candidates):
            vector = pipeline.embedder.embed([query], input_type="query")[0]
            dense = pipeline.store.maxp_scores(vector, positions)
            second = self.second_view.scores(query, positions)
        return feature_matrix(query, candidates, dense,
                              pipeline.store.bm25_scores(query, positions), self.pairs_of,
                              second)
