"""Pipeline.search / run: the tie rule in every mode, and refused cutoffs."""
import re
import zlib

import numpy as np
import pytest

from ragkit.documents import Document, Query, RagkitError
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig


class BagOfWords:
    """A deterministic embedder for tests: identical texts get identical vectors."""

    name, dim, max_tokens = "bag-test", 32, 256

    def embed(self, texts, *, input_type="document", progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def token_lengths(self, texts):
        return [len(t.split()) for t in texts]


TWINS = [Document(name, "Refunds are accepted within seven days.") for name in "abcde"]
OTHERS = [Document(f"z{i}", text) for i, text in enumerate([
    "Shipping takes two weeks by sea.", "Invoices are sent monthly.", "Support answers by email.",
    "Gift cards never expire.", "Prices include tax.", "Orders ship from Berlin.",
    "Returns need the original box.", "Accounts close after a year of silence."])]


@pytest.fixture(scope="module")
def twins():
    return Pipeline.build(TWINS + OTHERS, IndexConfig(contextualizer="none", embedder="bag"),
                          progress=False, embedder=BagOfWords())


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_tied_chunks_rank_by_id_descending_even_across_the_cut(twins, mode):
    # five identical chunks tie; the retrievers return them by position (a first), so the
    # top 2 are d and e only if ties past the cut are fetched and ordered by id
    for fusion in (["weighted", "rrf", "weighted_rank"] if mode == "hybrid" else ["weighted"]):
        config = SearchConfig(mode=mode, fusion=fusion, candidates=2)
        (top,) = twins.search(["refund within seven days"], k=2, config=config)
        assert [ident for ident, _ in top] == ["e#0", "d#0"], (mode, fusion)
        (five,) = twins.search(["refund within seven days"], k=5, config=config)
        assert [ident for ident, _ in five] == ["e#0", "d#0", "c#0", "b#0", "a#0"]


def test_run_follows_search_order(twins):
    run = twins.run([Query("q", "seven days refund")], k=3, config=SearchConfig("bm25"))
    assert run == {"q": ["e#0", "d#0", "c#0"]}


@pytest.mark.parametrize("k", [0, -3])
def test_non_positive_k_is_refused(twins, k):
    with pytest.raises(RagkitError, match=f"k must be a positive whole number, got {k}"):
        twins.search(["refund"], k=k, config=SearchConfig("bm25"))
    with pytest.raises(RagkitError, match="k must be a positive whole number"):
        twins.run([Query("q", "refund")], k=k)


def test_search_config_refuses_bad_depth_and_fusion():
    with pytest.raises(RagkitError, match="candidates must be a positive whole number, got 0"):
        SearchConfig(candidates=0)
    with pytest.raises(RagkitError, match="unknown fusion 'borda'"):
        SearchConfig(fusion="borda")
