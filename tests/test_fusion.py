import numpy as np
import pytest

from ragkit.fusion import fuse, normalize, rrf, weighted_rank, weighted_scores

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
SPARSE = [("c", 12.0), ("a", 3.0), ("d", 1.0)]


def test_rrf_hand_computed():
    fused = dict(rrf([DENSE, SPARSE], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)
    assert [i for i, _ in rrf([DENSE, SPARSE])] == ["a", "c", "b", "d"]


def test_rrf_top_cuts_and_ties_keep_first_seen():
    assert rrf([[("x", 1.0)], [("y", 1.0)]], top=1) == [("x", 1 / 61)]


def test_weighted_rank_is_the_cookbook_formula():
    fused = dict(weighted_rank([DENSE, SPARSE], [0.8, 0.2]))
    assert fused["a"] == pytest.approx(0.8 / 1 + 0.2 / 2)
    assert fused["c"] == pytest.approx(0.8 / 3 + 0.2 / 1)
    assert fused["d"] == pytest.approx(0.2 / 3)


def test_normalize_minmax_and_zscore():
    np.testing.assert_allclose(normalize(np.array([2.0, 4.0, 6.0])), [0, 0.5, 1])
    np.testing.assert_allclose(normalize(np.array([2.0, 4.0, 6.0]), "zscore"),
                               [-1.224744871, 0, 1.224744871])
    np.testing.assert_allclose(normalize(np.array([3.0, 3.0])), [1, 1])
    with pytest.raises(ValueError, match="unknown normalization"):
        normalize(np.array([1.0]), "softmax")


def test_weighted_scores_minmax_hand_computed():
    fused = dict(weighted_scores([DENSE, SPARSE], [0.6, 0.4]))
    # dense min-max: a 1, b 0.875, c 0; sparse: c 1, a 2/11, d 0
    assert fused["a"] == pytest.approx(0.6 * 1 + 0.4 * 2 / 11)
    assert fused["b"] == pytest.approx(0.6 * 0.875)
    assert fused["c"] == pytest.approx(0.4 * 1)
    assert fused["d"] == pytest.approx(0.0)


def test_fuse_by_name_and_unknown():
    assert fuse({"dense": DENSE, "bm25": SPARSE}, "rrf") == rrf([DENSE, SPARSE])
    weights = {"dense": 0.8, "bm25": 0.2}
    assert fuse({"dense": DENSE, "bm25": SPARSE}, "weighted_rank", weights) == \
        weighted_rank([DENSE, SPARSE], [0.8, 0.2])
    with pytest.raises(ValueError, match="known: rrf"):
        fuse({"dense": DENSE}, "borda")
