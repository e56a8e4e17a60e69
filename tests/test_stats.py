"""Paired tests between two runs: exact sign-flip p-values, seeded intervals, clear errors."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ragkit.documents import RagkitError
from ragkit.stats import paired_test

A = {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
B = {"q1": 0.5, "q2": 0.25, "q3": -0.25, "q4": 1.0}  # d = b − a, mean 0.375


def test_identical_runs_have_no_difference_and_p_one():
    run = {"q1": 0.2, "q2": 0.9, "q3": 0.5}
    for method in ("permutation", "bootstrap"):
        result = paired_test(run, dict(run), method=method)
        assert (result.mean_diff, result.low, result.high, result.p_value) == (0, 0, 0, 1)
        assert result.queries == 3


def test_tiny_example_equals_the_enumeration_of_all_sign_flips():
    # |Σ ±d_i| ≥ 1.5 for 3 of the 8 patterns with +1.0 and their 3 mirror images: 6 / 16.
    d = np.array([B[q] - A[q] for q in sorted(A)])
    flips = [abs(np.dot(signs, d)) >= abs(d.sum()) - 1e-12
             for signs in itertools.product((1, -1), repeat=4)]
    assert sum(flips) / 16 == 0.375
    result = paired_test(A, B, n=10000)
    assert result.exact and result.p_value == pytest.approx(0.375)
    assert result.mean_diff == pytest.approx(0.375)
    assert result.low <= 0.375 <= result.high


@pytest.mark.parametrize("better, p", [(1, 1.0), (3, 0.25), (13, 2 / 2 ** 13)])
def test_ties_do_not_make_the_sign_flip_test_sampled(better, p):
    """29 questions, `better` of them +1 and the rest tied: the exact p over the non-zero
    differences (2 patterns of 2^better reach the observed sum), as an enumeration gives —
    not a Monte Carlo 0.985 for "one question better" (2^29 patterns exceed n)."""
    ids = [f"q{i:02}" for i in range(29)]
    a = pd.Series(0.0, index=ids)
    b = pd.Series([1.0] * better + [0.0] * (29 - better), index=ids)
    result = paired_test(a, b, n=10000)
    assert result.exact and result.p_value == pytest.approx(p)
    assert not paired_test(a, pd.Series([1.0] * 14 + [0.0] * 15, index=ids), n=1000).exact


def test_alignment_is_by_query_id_not_position():
    a = pd.Series({"q2": 0.0, "q1": 1.0})
    b = pd.Series({"q1": 1.0, "q2": 0.0})
    assert paired_test(a, b).mean_diff == 0 and paired_test(a, b).p_value == 1


def test_mismatched_query_ids_are_refused_by_name():
    with pytest.raises(RagkitError, match=r"1 only in a \(q4\), 1 only in b \(q9\)"):
        paired_test(A, {"q1": 0, "q2": 0, "q3": 0, "q9": 0})


def test_nan_pairs_are_left_out_and_counted():
    b = dict(B, q4=math.nan)
    result = paired_test(A, b)
    assert result.queries == 3 and result.dropped == 1
    assert result.mean_diff == pytest.approx(0.5 / 3)


def test_a_consistent_gain_is_significant_both_ways_and_seeded():
    a = {f"q{i}": 0.5 for i in range(30)}
    b = {f"q{i}": 0.6 + 0.01 * (i % 3) for i in range(30)}
    perm = paired_test(a, b, n=2000, seed=1)
    boot = paired_test(a, b, n=2000, seed=1, method="bootstrap")
    # 2^30 patterns > 2000: sampled; no flip reaches the observed mean, so p = 2 / 2001.
    assert not perm.exact and perm.p_value == pytest.approx(2 / 2001)
    assert boot.p_value == pytest.approx(1 / 2001)  # no centred mean is as far as 0.11
    assert perm.low > 0.1 and paired_test(a, b, n=2000, seed=1) == perm


def test_bad_method_and_empty_overlap_are_user_errors():
    with pytest.raises(RagkitError, match="unknown paired test 'ttest'"):
        paired_test(A, B, method="ttest")
    with pytest.raises(RagkitError, match="no query has a score in both runs"):
        paired_test({"q1": math.nan}, {"q1": 1.0})
