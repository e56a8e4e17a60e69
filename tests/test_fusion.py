import numpy as np
import pytest

from ragkit.errors import RagkitError

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
    # two one-item lists: each hit gets its list's full weight, 0.5 each, a tie
    tied = fuse({"dense": [("doc#1", 0.3)], "bm25": [("doc#10", 9.0)]}, "weighted",
                {"dense": 0.5, "bm25": 0.5})
    assert tied == [("doc#10", 0.5), ("doc#1", 0.5)]


def test_ties_compare_ids_as_a_trec_run_spells_them():
    # raw, " " < "!" would put "a!b" first; written, "a%20b" > "a!b" as trec_eval sees it
    assert [i for i, _ in ranked({"a!b": 1.0, "a b": 1.0, "a c": 2.0})] == ["a c", "a b", "a!b"]


def test_weighted_rank_is_the_cookbook_formula():
    fused = dict(weighted_rank([DENSE, SPARSE], [0.8, 0.2]))
    assert fused["a"] == pytest.approx(0.8 / 1 + 0.2 / 2)
    assert fused["c"] == pytest.approx(0.8 / 3 + 0.2 / 1)
    assert fused["d"] == pytest.approx(0.2 / 3)


def test_normalize_floor_sits_one_average_gap_below_the_minimum():
    # [2, 4, 6]: gap 2, floor 0 → s / 6
    np.testing.assert_allclose(normalize(np.array([2.0, 4.0, 6.0])), [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(normalize(np.array([6.0, 4.0, 2.0, 1.0])), [1, 0.7, 0.4, 0.25])
    np.testing.assert_allclose(normalize(np.array([3.0, 3.0])), [1, 1])
    np.testing.assert_allclose(normalize(np.array([5.0])), [1])
    np.testing.assert_allclose(normalize(np.array([2.0, 4.0, 6.0]), "zscore"),
                               [-1.224744871, 0, 1.224744871])
    with pytest.raises(RagkitError, match="^unknown normalization"):
        normalize(np.array([1.0]), "softmax")


def test_weighted_hand_computed():
    fused = fuse({"dense": DENSE, "bm25": SPARSE}, "weighted", WEIGHTS)
    # dense: gap 0.4, floor -0.3 → a 1, b 11/12, c 1/3; bm25: gap 5.5, floor -4.5 → c 1,
    # a 7.5/16.5 = 5/11, d 1/3 (the last of n items always gets 1/n, never the absent 0)
    assert [i for i, _ in fused] == ["a", "c", "b", "d"]
    got = dict(fused)
    assert got["a"] == pytest.approx(0.6 * 1 + 0.4 * 5 / 11)
    assert got["b"] == pytest.approx(0.6 * 11 / 12)
    assert got["c"] == pytest.approx(0.6 / 3 + 0.4 * 1)
    assert got["d"] == pytest.approx(0.4 / 3)


def test_weighted_a_lone_bm25_hit_gets_the_full_bm25_weight():
    # dense [x .5, y .4]: gap .1, floor .3 → x 1, y .5; bm25 finds y alone → y 1
    fused = fuse({"dense": [("x", 0.5), ("y", 0.4)], "bm25": [("y", 7.0)]}, "weighted", WEIGHTS)
    assert fused == [("y", pytest.approx(0.6 * 0.5 + 0.4)), ("x", pytest.approx(0.6))]


def test_weighted_a_constant_list_gives_every_hit_the_full_weight():
    # dense [a .9, b .3]: gap .6, floor -.3 → a 1, b .5; bm25 b = c = 2 → 1 each
    fused = fuse({"dense": [("a", 0.9), ("b", 0.3)], "bm25": [("b", 2.0), ("c", 2.0)]},
                 "weighted", WEIGHTS)
    assert [i for i, _ in fused] == ["b", "a", "c"]
    assert [s for _, s in fused] == pytest.approx([0.6 * 0.5 + 0.4, 0.6, 0.4])


def test_weighted_zscore_lowest_hit_still_beats_absent():
    # z-scores [1.2247, 0, -1.2247] shifted so the lowest is 1; d's constant list → 1
    fused = dict(weighted_scores([[("a", 6.0), ("b", 4.0), ("c", 2.0)], [("d", 1.0)]],
                                 [1.0, 1.0], method="zscore"))
    assert fused == pytest.approx({"a": 1 + 2 * 1.224744871, "b": 1 + 1.224744871,
                                   "c": 1.0, "d": 1.0})


def test_fuse_by_name_and_unknown():
    assert fuse({"dense": DENSE, "bm25": SPARSE}, "rrf") == rrf([DENSE, SPARSE])
    weights = {"dense": 0.8, "bm25": 0.2}
    assert fuse({"dense": DENSE, "bm25": SPARSE}, "weighted_rank", weights) == \
        weighted_rank([DENSE, SPARSE], [0.8, 0.2])
    with pytest.raises(RagkitError, match=r"^unknown fusion 'borda' \(known: rrf"):
        fuse({"dense": DENSE}, "borda")
    with pytest.raises(RagkitError, match="^k must be a positive whole number, got 0"):
        rrf([DENSE, SPARSE], k=0)


def test_up_to_the_largest_rrf_k_ranks_follow_the_exact_scores():
    """Ranks are compared at single precision (the tie rule). At k = 10⁹ every fused score
    was the same float32, so documents ranked by id while the run's exact scores disagreed;
    up to MAX_RRF_K, two 150-deep lists fuse in the order of their exact scores."""
    from ragkit.config import MAX_RRF_K
    ids = [f"d{i:03d}" for i in range(150)]
    order = np.random.default_rng(0).permutation(150)
    lists = [[(i, 0.0) for i in ids], [(ids[j], 0.0) for j in order]]
    for k in (60, MAX_RRF_K):
        scores = [score for _, score in rrf(lists, k=k)]
        assert all(a >= b for a, b in zip(scores, scores[1:]))
    scores = [score for _, score in rrf(lists, k=10**9)]
    assert not all(a >= b for a, b in zip(scores, scores[1:]))  # why there is a ceiling


def test_an_rrf_k_above_the_ceiling_is_refused_before_any_work(tmp_path, capsys):
    from ragkit.cli import main
    from ragkit.config import SearchConfig
    from ragkit.documents import RagkitError
    with pytest.raises(RagkitError, match=r"rrf_k must be at most 1,000 \(beyond it RRF's "
                                          r"scores of neighbouring ranks are equal in single "
                                          r"precision, where runs are ranked\), got 1,001"):
        SearchConfig(fusion="rrf", rrf_k=1001)
    with pytest.raises(SystemExit) as exit_:
        main(["search", str(tmp_path), "--queries", "q.jsonl", "--out", str(tmp_path / "r"),
              "--fusion", "rrf", "--rrf-k", "1000000000"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ragkit search: error: argument --rrf-k: must be at most 1,000 (beyond it RRF's "
        "scores of neighbouring ranks are equal in single precision, where runs are ranked), "
        "got 1,000,000,000")
    assert main(["tune", str(tmp_path / "absent"), "--rrf-ks", "1,60,2000"]) == 2
    assert capsys.readouterr().err == (
        "ragkit: error: --rrf-ks: each k must be at most 1,000 (beyond it RRF's scores of "
        "neighbouring ranks are equal in single precision, where runs are ranked), got 2,000\n")


def test_a_continued_tail_sits_below_the_head_in_its_own_order():
    """The tail is shifted under the head's last score; at 3.5e7 single precision steps by 4,
    so shifting 0.52, 0.51 and 0.1 there would tie them all (and rank them by id): each is
    stepped down instead, and the tie of c and d stays a tie."""
    from ragkit.fusion import continued
    head = [("a", 3.5e7)]
    deeper = ranked([("a", 9.0), ("b", 0.52), ("c", 0.51), ("d", 0.51), ("e", 0.1)])
    assert continued(head, deeper, 5) == [("a", 3.5e7), ("b", 34999996.0), ("d", 34999992.0),
                                          ("c", 34999992.0), ("e", 34999988.0)]
    assert continued(head, deeper, 3) == [("a", 3.5e7), ("b", 34999996.0), ("d", 34999992.0)]
    assert continued(head, deeper, 1) == head
    assert continued([], deeper, 2) == deeper[:2]
    # at a scale where the shift keeps them apart, the tail keeps its spacing
    assert continued([("a", 1.0)], deeper, 3) == [
        ("a", 1.0), ("b", float(np.nextafter(np.float32(1.0), np.float32(0)))),
        ("d", float(np.float32(1.0 - 0.01)))]


def test_a_continued_tail_with_infinite_scores_stays_in_order_below_the_head():
    """A custom reranker's +inf made the shift NaN (numpy warned, every tail score NaN)."""
    import math
    import warnings
    from ragkit.fusion import continued
    deeper = ranked([("p", math.inf), ("q", 1.0), ("r", -math.inf)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = continued([("x", 1.0)], deeper, 4)
    assert [ident for ident, _ in out] == ["x", "p", "q", "r"] and ranked(out) == out
    assert not any(math.isnan(score) for _, score in out)
