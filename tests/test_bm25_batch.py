"""BM25.search_many and search (whole-batch passes, `ragkit.lexical.bm25_batch`) against the
per-query paths (`bm25_search.search`) and rank-bm25 0.2.2: the same documents, the same
scores bit for bit, the same tie order.

The corpus has what the batch must get right: query terms repeated and unknown, a term in
more than half of the documents (negative raw idf, floored), one in exactly half (idf 0:
its documents are candidates scoring 0), identical documents (tied scores at the cut),
empty documents, and queries sharing no term. Chunks are forced small so one call crosses
many chunk boundaries (the accumulator must be left clean between them).
"""
from __future__ import annotations

import numpy as np
import pytest
import rank_bm25
from scipy import sparse

from ragkit.lexical import BM25, bm25_batch, bm25_search


def corpus_and_queries() -> tuple[list[list[str]], list[list[str]]]:
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 121) ** 1.1
    p /= p.sum()
    vocab = [f"t{i}" for i in range(120)]
    corpus = [[vocab[i] for i in rng.choice(120, size=rng.integers(1, 30), p=p)]
              for _ in range(60)]
    for i, doc in enumerate(corpus):
        doc.append("common")  # in every document: negative raw idf, floored to epsilon·mean
        if i % 2:
            doc.append("half")  # with the six below: in exactly half of the 72 documents
    corpus += [["twin", "t7", "half"]] * 5 + [[]] * 2 + [["t7", "t8"]] * 4 + [["t7", "t8", "half"]]
    assert sum("half" in d for d in corpus) * 2 == len(corpus)
    queries = [[vocab[i] for i in rng.choice(120, size=rng.integers(1, 6), p=p)]
               for _ in range(40)]
    queries += [["twin"], ["t7", "t7", "twin"], ["half"], ["common"], ["half", "common"],
                ["unseen"], [], ["unseen", "t3", "t3", "t3"], ["common", "t0", "twin"],
                ["t8", "t7"], ["twin", "half", "half"]]
    return corpus, queries


@pytest.fixture(scope="module")
def fitted():
    corpus, queries = corpus_and_queries()
    return corpus, queries, BM25.fit_tokens(corpus), rank_bm25.BM25Okapi(corpus)


@pytest.fixture(params=[1 << 20, 150], ids=["one-chunk", "two-queries-a-chunk"])
def chunks(request, monkeypatch):
    monkeypatch.setattr(bm25_batch, "CHUNK_ENTRIES", request.param)


@pytest.mark.parametrize("k", [1, 3, 10, 500])
@pytest.mark.parametrize("ties", [False, True])
def test_search_many_equals_search_bit_for_bit(fitted, chunks, k, ties):
    _, queries, bm25, _ = fitted
    many = bm25.search_many(queries, k, ties=ties)
    assert len(many) == len(queries)
    for query, (idx, vals) in zip(queries, many):
        one = bm25.search(query, k, ties)
        want_idx, want_vals = bm25_search.search(bm25, bm25._query_ids(query), k, ties)
        for got_idx, got_vals in ((idx, vals), one):
            assert got_idx.dtype == np.int64 and got_vals.dtype == np.float64, query
            assert got_idx.tolist() == want_idx.tolist(), query
            assert np.array_equal(got_vals, want_vals), query


def test_search_many_scores_are_rank_bm25s_and_ranks_every_shared_document(fitted, chunks):
    corpus, queries, bm25, ref = fitted
    assert (bm25.idf == 0).any() and (bm25.idf[bm25.vocabulary["common"]]
                                      == ref.epsilon * ref.average_idf)
    for query, (idx, vals) in zip(queries, bm25.search_many(queries, 1000)):
        expected = ref.get_scores(query)
        sharing = sorted(i for i, doc in enumerate(corpus) if set(doc) & set(query))
        assert sorted(idx.tolist()) == sharing, query  # zero-score matches included
        assert np.array_equal(vals, expected[idx]), query  # bit for bit
        order = sorted(sharing, key=lambda i: (-expected[i], i))  # ties to the lower index
        assert idx.tolist() == order, query


def test_ties_at_the_cut_go_to_lower_documents_and_ties_flag_adds_them(fitted, chunks):
    _, _, bm25, _ = fitted
    idx, vals = bm25.search_many([["twin"]], 2)[0]
    assert idx.tolist() == [60, 61] and vals[0] == vals[1]
    idx, vals = bm25.search_many([["twin"]], 2, ties=True)[0]
    assert idx.tolist() == [60, 61, 62, 63, 64]


def test_ties_flag_adds_scores_a_single_precision_step_below_the_kth():
    """Scores that differ in float64 but not in float32 are ties for `ties`: the batch's
    cut must reach below the k-th score to find them, as `search` does."""
    bm25 = BM25.fit_tokens([["a"], ["a"], ["a"], ["a"], ["b"], ["b"], ["b"], ["b"], ["c"]])
    near = 1.0 - 2.0 ** -40  # float32(near) == float32(1.0)
    bm25.weights = sparse.csr_matrix(
        (np.array([0.5, 1.0, near, near, 0.25]), np.array([0, 1, 2, 3, 4]),
         np.array([0, 4, 5, 5])), shape=(3, 9))
    for k, want in ((1, [1, 2, 3]), (2, [1, 2, 3]), (4, [1, 2, 3, 0])):
        idx, vals = bm25.search_many([["a"]], k, ties=True)[0]
        assert idx.tolist() == want == bm25.search(["a"], k, ties=True)[0].tolist()
        ids = bm25._query_ids(["a"])
        assert bm25_search.search(bm25, ids, k, ties=True)[0].tolist() == want
    assert bm25.search_many([["a"]], 1)[0][0].tolist() == [1]


def test_long_queries_keep_their_place_in_the_batch(fitted, monkeypatch):
    """Queries routed to `search`'s scan path and batched ones come back in query order."""
    _, queries, bm25, _ = fitted
    want = bm25.search_many(queries, 5)
    monkeypatch.setattr(bm25_batch, "LONG_POSTINGS", 0)
    scanned = []
    search = bm25_batch.bm25_search.search
    monkeypatch.setattr(bm25_batch.bm25_search, "search",
                        lambda *args: scanned.append(1) or search(*args))
    got = bm25.search_many(queries, 5, progress=True)
    assert 5 < len(scanned) < len(queries) - 5  # both paths taken, interleaved
    for (a, b), (c, d) in zip(want, got):
        assert a.tolist() == c.tolist() and np.array_equal(b, d)


def test_an_index_too_large_for_a_chunk_searches_query_by_query(fitted, monkeypatch):
    _, queries, bm25, _ = fitted
    want = bm25.search_many(queries, 5)
    monkeypatch.setattr(bm25_batch, "MAX_ENTRIES", 7 * bm25.n_docs)  # not MIN_CHUNK (8)
    monkeypatch.setattr(bm25_batch, "CHUNK_ENTRIES", 0)
    scanned = []
    search = bm25_batch.bm25_search.search
    monkeypatch.setattr(bm25_batch.bm25_search, "search",
                        lambda *args: scanned.append(1) or search(*args))
    got = bm25.search_many(queries, 5)
    assert len(scanned) == len(queries)
    for (a, b), (c, d) in zip(want, got):
        assert a.tolist() == c.tolist() and np.array_equal(b, d)


def test_k_zero_and_no_queries(fitted):
    _, _, bm25, _ = fitted
    assert bm25.search_many([], 5) == []
    idx, vals = bm25.search_many([["twin"]], 0)[0]
    assert idx.size == 0 and vals.size == 0


def test_random_corpora_batch_as_the_per_query_path(monkeypatch):
    """Seeded small corpora over tiny vocabularies (many ties, idf ≤ 0 terms, repeats),
    random k, ties and chunk sizes: the batch equals `bm25_search.search` query by query."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        vocab = [f"v{i}" for i in range(int(rng.integers(2, 12)))]
        corpus = [list(rng.choice(vocab, size=int(rng.integers(0, 6))))
                  for _ in range(int(rng.integers(1, 40)))]
        bm25 = BM25.fit_tokens(corpus)
        queries = [list(rng.choice(vocab + ["zz"], size=int(rng.integers(0, 5))))
                   for _ in range(int(rng.integers(1, 25)))]
        k, ties = int(rng.integers(1, 12)), bool(rng.integers(0, 2))
        monkeypatch.setattr(bm25_batch, "CHUNK_ENTRIES", int(rng.integers(1, 400)))
        monkeypatch.setattr(bm25_batch, "MIN_CHUNK", 1)  # chunks of 1 query and up
        for query, (idx, vals) in zip(queries, bm25.search_many(queries, k, ties=ties)):
            want_idx, want_vals = bm25_search.search(bm25, bm25._query_ids(query), k, ties)
            assert idx.tolist() == want_idx.tolist(), (corpus, query, k, ties)
            assert np.array_equal(vals, want_vals), (corpus, query, k, ties)


def test_one_query_in_a_larger_index_takes_the_per_query_path(fitted, monkeypatch):
    _, queries, bm25, _ = fitted
    want = [bm25.search(q, 5) for q in queries]  # batches of one (72 documents)
    monkeypatch.setattr(bm25_batch, "ONE_QUERY_DOCS", bm25.n_docs - 1)
    scanned = []
    search = bm25_search.search
    monkeypatch.setattr(bm25_search, "search", lambda *args: scanned.append(1) or search(*args))
    got = [bm25.search(q, 5) for q in queries]
    assert len(scanned) == len(queries)
    for (a, b), (c, d) in zip(want, got):
        assert a.tolist() == c.tolist() and np.array_equal(b, d)
