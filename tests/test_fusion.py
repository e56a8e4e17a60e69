import numpy as np
import pytest

from ragkit.fusion import fuse, normalize, ranked, rrf, weighted_rank, weighted_scores

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
SPARSE = [("c", 12.0), ("a", 3.0), ("d", 1.0)]
WEIGHTS = {"dense": 0.6, "bm25": 0.4}


def test_rrf_hand_computed():
    fused = dict(rrf([DENSE, SPARSE], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)
    assert [i for i, _ in rrf([DENSE, SPARSE])] == ["a", "c", "b", "d"]


def test_ties_break_by_id_descending_in_every_fusion():
    assert rrf([[("x", 1.0)], [("y", 1.0)]], top=1) == [("y", 1 / 61)]
    assert [i for i, _ in weighted_rank([[("p", 1.0)], [("q", 1.0)]], [0.5, 0.5])] == ["q", "p"]
    tied = weighted_scores([[("doc#1", 0.3), ("doc#0", 0.1)], [("doc#10", 9.0), ("x", 1.0)]],
                           [0.5, 0.5])
    assert [i for i, _ in tied] == ["doc#10", "doc#1", "x", "doc#0"]


def test_ties_compare_ids_as_a_trec_run_spells_them():
    # raw, " " < "!" would put "a!b" first; written, "a%20b" > "a!b" as trec_eval sees it
    assert [i for i, _ in ranked({"a!b": 1.0, "a b": 1.0, "a c": 2.0})] == ["a c", "a b", "a!b"]


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
