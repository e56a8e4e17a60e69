"""BM25 built straight from token ids: the same index as before, bit for bit.

`reference_index` is the way `BM25` was built before (a Python list of every token, a dict
vocabulary, a COO matrix); the shipped corpus's chunks and BM25 arrays are also pinned by
digests taken from that code, so a faster build cannot drift.
"""
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import rank_bm25
from scipy import sparse

from ragkit.datasets import load_dataset
from ragkit.dense import top_k
from ragkit.lexical import BM25, get_tokenizer
from ragkit.lexical.bm25 import okapi_idf, okapi_tf
from ragkit.pipeline import IndexConfig, Pipeline

DATA = Path(__file__).resolve().parent.parent / "data"
MIXED = ["The HTTPServer starts get_user_name", "a client calls the server.", "청약철회는 7일 이내",
         "東京都の天気 naïveBayes Größe", "", "os.path.join a/b/c.py std::vector", "the the THE"]


def reference_index(corpus, k1=1.5, b=0.75, epsilon=0.25):
    """The previous build: vocabulary by dict.fromkeys over all tokens, tf through COO."""
    flat = [t for doc in corpus for t in doc]
    vocab = {term: i for i, term in enumerate(dict.fromkeys(flat))}
    rows = np.array([vocab[t] for t in flat], dtype=np.int64)
    doc_len = np.array([len(d) for d in corpus], dtype=np.int64)
    cols = np.repeat(np.arange(len(corpus)), doc_len)
    tf = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(vocab), len(corpus)))
    tf.sum_duplicates()
    avgdl = float(doc_len.sum() / len(corpus))
    df = np.diff(tf.indptr)
    idf = okapi_idf(df, len(corpus), epsilon)
    tf.data = np.repeat(idf, df) * okapi_tf(tf.data, doc_len[tf.indices], avgdl, k1, b)
    return vocab, idf, tf


def assert_same_index(ours: BM25, corpus):
    vocab, idf, weights = reference_index(corpus)
    assert list(ours.vocabulary) == list(vocab)
    assert np.array_equal(ours.idf, idf) and np.array_equal(ours.doc_len, [len(d) for d in corpus])
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(ours.weights, name), getattr(weights, name)), name


def _texts() -> list[str]:
    """The shipped corpus's ASCII chunk texts (the fast path's input; Korean text goes
    through the tokenizer itself, slowly) and the mixed-script examples."""
    return [c.indexed_text for c in _shipped().chunks if c.indexed_text.isascii()] + MIXED


@pytest.mark.parametrize("tokenizer", ["auto", "code", "words", "english"])
def test_fit_from_texts_is_the_previous_index(tokenizer):
    tokenize = get_tokenizer(tokenizer)
    assert_same_index(BM25.fit(_texts(), tokenizer=tokenizer), [tokenize(t) for t in _texts()])


def test_fit_tokens_is_the_previous_index_and_reads_an_iterator():
    corpus = [get_tokenizer("auto")(t) for t in MIXED]
    assert_same_index(BM25.fit_tokens(iter(corpus)), corpus)
    assert_same_index(BM25.fit(iter(MIXED), tokenizer="auto"), corpus)


@lru_cache(maxsize=1)
def _shipped() -> Pipeline:
    data = load_dataset(DATA)
    return Pipeline.build(data.documents, IndexConfig(embedder=None), progress=False)


def test_shipped_corpus_chunks_contexts_and_bm25_arrays_are_unchanged():
    pipeline = _shipped()
    w, bm25 = pipeline.bm25.weights, pipeline.bm25
    digest = hashlib.sha256()
    for array in (w.data, w.indices.astype(np.int64), w.indptr.astype(np.int64), bm25.idf,
                  bm25.doc_len.astype(np.int64)):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(json.dumps(list(bm25.vocabulary), ensure_ascii=False).encode())
    rows = [[c.id, c.doc_id, c.text, c.context, c.start, c.end, c.metadata]
            for c in pipeline.chunks]
    chunks = hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode())
    assert (len(pipeline.chunks), w.shape, w.nnz) == (490, (5387, 490), 74760)
    assert digest.hexdigest() == "e8f2339285464afb4b694bed618097a04a7cc56d7f273746836ddb894d02ff2f"
    assert chunks.hexdigest() == "525fb16bada1fff8a66303a5c53fd1d49877fd9f86450e58686ed22c1c2d3c4c"


def test_shipped_corpus_scores_match_rank_bm25():
    corpus = [get_tokenizer("auto")(t) for t in _texts()]
    ours, ref = BM25.fit(_texts(), tokenizer="auto"), rank_bm25.BM25Okapi(corpus)
    for query in ["refund policy days", "HTTPServer start", "청약 철회", "the quarterly revenue"]:
        tokens = get_tokenizer("auto")(query)
        assert np.array_equal(ours.scores(query), ref.get_scores(tokens)), query


def _mapped(array) -> bool:
    """True when `array` is a memory-mapped file or a view of one (not a copy in memory)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = array.base
    return False


def test_saved_arrays_are_memory_mapped_and_an_npz_index_still_loads(tmp_path):
    bm25 = BM25.fit(MIXED, tokenizer="auto")
    bm25.save(tmp_path / "new")
    loaded = BM25.load(tmp_path / "new")
    w = loaded.weights
    assert all(_mapped(a) for a in (w.data, w.indices, w.indptr, loaded.idf, loaded.doc_len))
    w = bm25.weights
    (tmp_path / "old").mkdir()
    np.savez(tmp_path / "old" / "bm25.npz", data=w.data, indices=w.indices, indptr=w.indptr,
             idf=bm25.idf, doc_len=bm25.doc_len)
    (tmp_path / "old" / "bm25.json").write_bytes((tmp_path / "new" / "bm25.json").read_bytes())
    old = BM25.load(tmp_path / "old")
    for query in ["server", "청약 철회", "client http", "東京"]:
        assert np.array_equal(loaded.scores(query), bm25.scores(query))
        assert np.array_equal(old.scores(query), bm25.scores(query))


def test_search_from_short_postings_is_the_full_score_ranking():
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 301) ** 1.1
    corpus = [[f"t{i}" for i in rng.choice(300, size=rng.integers(0, 30), p=p / p.sum())]
              for _ in range(400)]
    bm25 = BM25.fit_tokens(corpus)
    queries = [["t299"], ["t250", "t250", "t120"], ["t0", "t1"], ["unseen"], [], ["t40", "t0"]]
    short = 0
    for query in queries:
        scores, docs = bm25.scores(query), bm25.candidates(query)
        best = top_k(scores[docs], 5)[0]
        idx, values = bm25.search(query, 5)
        assert idx.tolist() == docs[best].tolist() and np.array_equal(values, scores[idx])
        ids = [bm25.vocabulary[t] for t in query if t in bm25.vocabulary]
        short += sum(np.diff(bm25.weights.indptr)[ids]) * 8 <= bm25.n_docs
    assert 0 < short < len(queries)  # both ways of scoring were taken


def test_weights_computed_in_small_blocks_are_the_same_bits():
    from ragkit.lexical.bm25 import _okapi_weights
    tokens = [get_tokenizer("auto")(t) for t in _texts()]
    vocab, idf, weights = reference_index(tokens)
    rows = np.array([vocab[t] for doc in tokens for t in doc])
    cols = np.repeat(np.arange(len(tokens)), [len(doc) for doc in tokens])
    counts = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=weights.shape)
    counts.sum_duplicates()
    doc_len = np.array([len(doc) for doc in tokens])
    avgdl = float(doc_len.sum() / len(tokens))
    for block in (7, 1000, 1 << 20):  # block edges inside terms' rows and between them
        got = _okapi_weights(counts, doc_len, avgdl, 1.5, 0.75, idf, block)
        assert np.array_equal(got, weights.data), block
