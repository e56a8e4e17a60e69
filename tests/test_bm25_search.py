"""BM25 search over long postings (the dense path) against a row-by-row reference.

The reference is the earlier implementation: each query term's row of weights added into a
score array in query order, candidates those in some row, ranked by score then index.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit.dense import top_k
from ragkit.lexical import BM25, bm25_batch
from ragkit.fusion import with_ties
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gen_corpus  # noqa: E402


@pytest.fixture(autouse=True)
def scan_long_queries(monkeypatch):
    """Long queries take the scan as `BM25.search` routes them in a large index: these
    corpora are small enough for the batched path (`bm25_batch`), which would skip it."""
    monkeypatch.setattr(bm25_batch, "LONG_POSTINGS", 0)


def reference(bm25: BM25, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    w, ids = bm25.weights, bm25._query_ids(query)
    out, matched = np.zeros(bm25.n_docs), np.zeros(bm25.n_docs, dtype=bool)
    for i in ids:
        docs = w.indices[w.indptr[i]:w.indptr[i + 1]]
        out[docs] += w.data[w.indptr[i]:w.indptr[i + 1]]
        matched[docs] = True
    docs = np.flatnonzero(matched)
    best, values = top_k(out[docs], k)
    return docs[best], values


@pytest.fixture(scope="module")
def generated() -> BM25:
    texts = [text for _, _, text in gen_corpus.documents(3000, size=2000)]
    return BM25.fit(texts, tokenizer="auto")


def test_long_postings_rank_as_the_row_by_row_reference(generated):
    names = gen_corpus.vocabulary(2000)
    top = names[0].lower()  # in nearly every document: idf floored, a long posting list
    assert np.diff(generated.weights.indptr)[generated.vocabulary[top]] > 2900
    queries = gen_corpus.queries(40, size=2000) + [top, f"{top} {top}", f"{names[1]} {top}"]
    checked = 0
    for query in queries:
        for k in (1, 10, 11, 37, 5000):
            got, want = generated.search(query, k), reference(generated, query, k)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), query
            checked += generated._long(generated._query_ids(query))
    assert checked > 50  # the long-postings path was exercised, not only the short one


def tied_cut(bm25: BM25, query: str) -> int:
    """The smallest k >= 10 whose k-th best score is tied with the next one."""
    ranked = np.sort(bm25.scores(query))[::-1]
    return int(np.flatnonzero(ranked[9:-1] == ranked[10:])[0]) + 10


def test_single_common_word_ties_at_the_cut_go_to_lower_indices(generated):
    top = gen_corpus.vocabulary(2000)[0].lower()
    scores = generated.scores(top)
    k = tied_cut(generated, top)
    assert k < 200
    idx, values = generated.search(top, k)
    kth = values[-1]
    assert np.count_nonzero(scores == kth) > np.count_nonzero(values == kth)  # a tie is cut
    assert list(idx[values == kth]) == list(np.flatnonzero(scores == kth)[:np.count_nonzero(
        values == kth)])


def test_with_ties_deeper_fetches_keep_every_tied_document(generated):
    top = gen_corpus.vocabulary(2000)[0].lower()

    def fetch(texts, depth):
        return [[(int(i), float(s)) for i, s in zip(*generated.search(t, depth))]
                for t in texts]

    k = tied_cut(generated, top)
    (ranking,) = with_ties(fetch, [top], k)
    scores = generated.scores(top)
    kth = np.sort(scores)[::-1][k - 1]
    assert len(ranking) > k
    assert [i for i, _ in ranking] == list(reference(generated, top, 10**6)[0][
        :np.count_nonzero(scores >= kth)])


def test_pipeline_bm25_mode_on_common_words_matches_reference(generated):
    docs = [{"id": f"d{i}", "text": t} for i, (_, _, t) in
            enumerate(gen_corpus.documents(300, size=200))]
    from ragkit.documents import Document
    pipeline = Pipeline.build([Document(d["id"], d["text"]) for d in docs],
                              IndexConfig(embedder=None), progress=False)
    query = " ".join(gen_corpus.vocabulary(200)[:2])
    (got,) = pipeline.search([query], 5, SearchConfig(mode="bm25"))
    idx, _ = reference(pipeline.bm25, query, 10**6)
    chosen = [pipeline.chunks[i].id for i in idx]
    assert [r[0] for r in got] == chosen[:len(got)] and len(got) >= 5
