"""Exact dense top-k: the vectorized `top_k_rows` and `DenseIndex.search` (MaxP) give the same
answers as the simple per-row `top_k` and as a plain Python sort by (-score, position), ties
included.

Scores are rounded to one decimal (or are dot products of small integer vectors) so that most
rows have ties at the top-k cut, where a partition-based selection could go wrong.
"""
from __future__ import annotations

import numpy as np
import pytest

from ragkit.dense import DenseIndex, top_k, top_k_rows

SHAPES = [(1, 1), (1, 7), (6, 1), (9, 13), (40, 50), (3, 257)]


def _sorted_top_k(row: np.ndarray, k: int) -> list[int]:
    """The definition: positions by score descending, then position ascending, first k."""
    return sorted(range(len(row)), key=lambda i: (-float(row[i]), i))[:k]


def _tied_scores(rng: np.random.Generator, shape: tuple[int, int], dtype) -> np.ndarray:
    return np.round(rng.uniform(-1, 1, size=shape), 1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_top_k_rows_equals_per_row_top_k_and_plain_sort(shape, dtype) -> None:
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    scores = _tied_scores(rng, shape, dtype)
    n = shape[1]
    for k in sorted({1, 2, n // 2, n - 1, n, n + 3} - {0}):
        best, values = top_k_rows(scores, k)
        assert best.shape == values.shape == (shape[0], min(k, n))
        assert best.dtype == np.int64 and values.dtype == dtype
        for row, got, got_values in zip(scores, best, values, strict=True):
            simple, simple_values = top_k(row, k)
            assert got.tolist() == simple.tolist() == _sorted_top_k(row, k)
            np.testing.assert_array_equal(got_values, simple_values)
            np.testing.assert_array_equal(got_values, row[got])


def test_top_k_rows_ties_straddling_the_cut_go_to_lower_positions() -> None:
    scores = np.array([[0.5, 0.9, 0.5, 0.9, 0.5],   # 0.5 tied three ways at the cut
                       [0.2, 0.2, 0.2, 0.2, 0.2],   # everything tied
                       [0.1, 0.3, 0.3, 0.3, 0.9]])  # 0.3 tied three ways, two places
    best, values = top_k_rows(scores, 3)
    assert best.tolist() == [[1, 3, 0], [0, 1, 2], [4, 1, 2]]
    assert values.tolist() == [[0.9, 0.9, 0.5], [0.2, 0.2, 0.2], [0.9, 0.3, 0.3]]


def test_top_k_rows_of_nothing() -> None:
    best, values = top_k_rows(np.zeros((2, 4)), 0)
    assert best.shape == values.shape == (2, 0)
    best, values = top_k_rows(np.zeros((0, 4)), 3)
    assert best.shape == values.shape == (0, 3)


def _maxp_brute_force(queries: np.ndarray, vectors: np.ndarray, owners: np.ndarray, k: int
                      ) -> list[tuple[list[int], list[float]]]:
    """Per query: each chunk's best window score, sorted by (-score, chunk), first k."""
    out = []
    for q in queries:
        best: dict[int, float] = {}
        for v, chunk in zip(vectors.tolist(), owners.tolist(), strict=True):
            s = sum(a * b for a, b in zip(q.tolist(), v, strict=True))
            best[chunk] = max(best.get(chunk, -np.inf), s)
        ranked = sorted(best, key=lambda c: (-best[c], c))[:k]
        out.append((ranked, [best[c] for c in ranked]))
    return out


@pytest.mark.parametrize("n_chunks, max_windows, k",
                         [(1, 1, 1), (1, 4, 3), (12, 1, 5), (12, 3, 12), (30, 4, 7), (30, 4, 40)])
def test_dense_search_with_maxp_owners_equals_brute_force(n_chunks, max_windows, k) -> None:
    # Small integer vectors: dot products are exact in float32, so ties are real ties.
    rng = np.random.default_rng(n_chunks * 10 + max_windows)
    owners = np.repeat(np.arange(n_chunks), rng.integers(1, max_windows + 1, size=n_chunks))
    vectors = rng.integers(-2, 3, size=(len(owners), 6)).astype(np.float32)
    queries = rng.integers(-2, 3, size=(7, 6)).astype(np.float32)
    index = DenseIndex(vectors, owners)
    assert index.n_chunks == n_chunks
    expected = _maxp_brute_force(queries, vectors, owners, k)
    for block in (256, 3):  # one block, and blocks that do not divide the queries
        got = index.search(queries, k, block=block)
        assert len(got) == len(queries)
        for (positions, scores), (want, want_scores) in zip(got, expected, strict=True):
            assert positions.tolist() == want
            assert scores.tolist() == want_scores


def test_dense_search_maxp_on_unit_vectors_equals_brute_force() -> None:
    rng = np.random.default_rng(7)
    owners = np.repeat(np.arange(25), rng.integers(1, 5, size=25))
    vectors = rng.normal(size=(len(owners), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[[0, 5, 17]] + np.float32(0.1) * rng.normal(size=(3, 16)).astype(np.float32)
    expected = _maxp_brute_force(queries.astype(np.float64), vectors.astype(np.float64),
                                 owners, 10)
    for (positions, scores), (want, want_scores) in zip(
            DenseIndex(vectors, owners).search(queries, 10), expected, strict=True):
        assert positions.tolist() == want
        np.testing.assert_allclose(scores, want_scores, atol=1e-5)
    assert expected[0][0][0] == 0  # a query near chunk 0's window finds chunk 0 first


def test_owners_must_run_without_gaps():
    # chunk 1 owning no vector would shift every later chunk's column
    with pytest.raises(ValueError, match="no gaps"):
        DenseIndex(np.eye(2, dtype=np.float32), np.array([0, 2]))
    with pytest.raises(ValueError, match="no gaps"):
        DenseIndex(np.eye(2, dtype=np.float32), np.array([1, 1]))


def test_an_empty_index_returns_empty_results():
    index = DenseIndex(np.empty((0, 4), dtype=np.float32), np.array([], dtype=np.int64))
    (ids, scores), = index.search(np.ones((1, 4), dtype=np.float32), k=3)
    assert ids.tolist() == [] and scores.tolist() == []


@pytest.mark.parametrize("block", [1 << 16, 700])  # one product; blocks run on threads
def test_similarities_do_not_depend_on_the_blas_thread_count(block, monkeypatch) -> None:
    # A multi-threaded BLAS splits the product by its core count and the parts round
    # differently, so a near tie could rank one way on 2 cores and the other on 8.
    from threadpoolctl import threadpool_limits

    from ragkit import dense
    monkeypatch.setattr(dense, "VECTOR_BLOCK", block)
    rng = np.random.default_rng(3)
    queries = rng.standard_normal((300, 384), dtype=np.float32)
    vectors = rng.standard_normal((5000, 384), dtype=np.float32)
    with threadpool_limits(1):
        one = dense.similarities(queries, vectors)
    with threadpool_limits(8):
        many = dense.similarities(queries, vectors)
    assert np.array_equal(one, many)
    np.testing.assert_allclose(one, queries @ vectors.T, rtol=0, atol=1e-4)


def test_one_document_making_most_of_a_long_embedding_run_is_named_before_it(monkeypatch):
    """A 23 MB log in a folder of notes made 85 % of 94,908 windows (about 45 minutes) and
    nothing said so until the bar's estimate; it is named up front now, once."""
    import warnings

    from ragkit import dense
    from ragkit.documents import Chunk, RagkitWarning
    monkeypatch.setattr(dense, "DOMINANT_WINDOWS", 10)
    chunks = [Chunk("log.txt#0", "log.txt", "x"), Chunk("notes.md#0", "notes.md", "y"),
              Chunk("faq.md#0", "faq.md", "z")]
    with pytest.warns(RagkitWarning) as caught:
        dense._note_dominant_document(chunks, [0] * 9 + [1] * 3)
    assert [str(w.message) for w in caught] == [
        "log.txt makes 9 of the 12 windows to embed (75 %); leave it out of the folder if it "
        "is not meant to be searched"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no share above half, or too few windows: silent
        dense._note_dominant_document(chunks, [0] * 5 + [1] * 5 + [2] * 2)
        dense._note_dominant_document(chunks, [0] * 9)
        dense._note_dominant_document(chunks, [0] * 30)  # `ragkit index book.pdf`: asked for


def test_measuring_the_windows_of_many_chunks_shows_a_bar(
        monkeypatch, capsys) -> None:
    """Cutting 100,000 chunks into windows the model can read (each measured in its tokens)
    took about a minute between the `loading` bar and the `embed` bar, with nothing on the
    screen; a `windows` bar counts the chunks now (shown once it lasts `BAR_DELAY`)."""
    from ragkit import dense
    from ragkit.documents import Chunk
    from ragkit.embed import get_embedder
    monkeypatch.setattr(dense, "BAR_DELAY", 0)
    chunks = [Chunk(f"d{i}.md#0", f"d{i}.md", f"Sentence number {i} about windows.")
              for i in range(3)]
    index = dense.embed_chunks(get_embedder("minilm"), chunks, 96, progress=True)
    assert list(index.owners) == [0, 1, 2]
    err = capsys.readouterr().err
    assert "windows:   0%|          | 0/3 [00:00<?, ?chunk/s]" in err
    capsys.readouterr()
    dense.embed_chunks(get_embedder("minilm"), chunks, 96, progress=False)
    assert "windows" not in capsys.readouterr().err


@pytest.mark.parametrize("block", [None, 1000])
def test_a_question_alone_scores_bit_for_bit_as_in_company(block, monkeypatch) -> None:
    """One query row took BLAS's matrix-vector path and rounded unlike the matrix product:
    a question searched alone (`ragkit ask`, or the last batch of a run holding one) got
    other scores than the same question among others, and near ties could swap. OpenBLAS's
    AVX2 kernels also round a row of a 2-row product unlike one of a 4-row product."""
    from ragkit import dense
    if block:
        monkeypatch.setattr(dense, "VECTOR_BLOCK", block)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5000, 384)).astype(np.float32)
    queries = rng.standard_normal((20, 384)).astype(np.float32)  # three groups, one part-full
    together = dense.similarities(queries, vectors)
    assert together.shape == (20, 5000)
    for row in range(20):
        assert np.array_equal(dense.similarities(queries[row:row + 1], vectors),
                              together[row:row + 1])
