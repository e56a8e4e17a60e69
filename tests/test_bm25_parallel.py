"""BM25 tokenized by a process pool: the same term ids, vocabulary and arrays as one process.

The blocks are made tiny (a few texts each) so a small corpus crosses many block boundaries,
each block numbering its terms locally before the merge.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit.lexical import BM25, parallel
import test_bm25_build
from test_bm25_build import MIXED, _shipped

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gen_corpus  # noqa: E402


@pytest.fixture
def tiny_blocks(monkeypatch):
    monkeypatch.setattr(parallel, "BLOCK", 7)
    monkeypatch.setattr(parallel, "THRESHOLD", 14)


def assert_same(a: BM25, b: BM25) -> None:
    assert list(a.vocabulary.items()) == list(b.vocabulary.items())
    for x, y in ((a.weights.data, b.weights.data), (a.weights.indices, b.weights.indices),
                 (a.weights.indptr, b.weights.indptr), (a.idf, b.idf), (a.doc_len, b.doc_len)):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_pool_build_of_the_shipped_corpus_is_the_one_process_build(monkeypatch):
    monkeypatch.setattr(parallel, "BLOCK", 100)  # 5 blocks of the 490 chunks
    monkeypatch.setattr(parallel, "THRESHOLD", 200)
    texts = [c.indexed_text for c in _shipped().chunks]
    pooled = BM25.fit(iter(texts), tokenizer="auto", workers=2)
    assert_same(pooled, _shipped().bm25)


def test_pool_build_with_mixed_scripts_and_empty_texts(tiny_blocks):
    no_hangul = [t for t in MIXED if "청" not in t]  # Kiwi would load in each worker (~2 s)
    texts = no_hangul * 5 + [text for _, _, text in gen_corpus.documents(60, size=300)]
    for name in ("auto", "words"):
        assert_same(BM25.fit(texts, tokenizer=name, workers=2),
                    BM25.fit(texts, tokenizer=name, workers=1))


def test_small_corpora_and_custom_tokenizers_stay_in_process(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", refuse)
    MIXED = [t for t in test_bm25_build.MIXED if "청" not in t]
    assert BM25.fit(MIXED, tokenizer="auto", workers=2).n_docs == len(MIXED)
    monkeypatch.setattr(parallel, "THRESHOLD", 2)
    assert BM25.fit(MIXED, tokenizer=str.split, workers=2).n_docs == len(MIXED)
    assert BM25.fit(MIXED, tokenizer="auto", workers=1).n_docs == len(MIXED)


def test_default_workers_is_two_at_most_the_cores(monkeypatch):
    monkeypatch.setattr(parallel, "usable_cores", lambda: 1)  # e.g. taskset to one core
    assert parallel.default_workers() == 1
    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    assert parallel.default_workers() == 2
