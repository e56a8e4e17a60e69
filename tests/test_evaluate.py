import ir_measures
import pandas as pd
import pytest
from ir_measures import RR, R, nDCG

from ragkit.documents import Chunk, Document, Golden, Query
from ragkit.evaluate import (bootstrap_ci, confidence_table, first_relevant_rank, judge, ndcg_at_k,
                             pass_at_k, per_query, reciprocal_rank, round_metrics, summarize)


def test_hand_computed_single_query():
    items = [frozenset({"a"}), frozenset({"c", "c2"})]
    ranked = ["x", "a", "y", "c2"]
    assert pass_at_k(ranked, items, 1) == 0.0
    assert pass_at_k(ranked, items, 2) == 0.5
    assert pass_at_k(ranked, items, 4) == 1.0
    assert reciprocal_rank(ranked, frozenset({"a", "c", "c2"})) == 0.5
    # DCG = 1/log2(3) + 1/log2(5); ideal over 3 relevant: 1 + 1/log2(3) + 1/2
    expected = (1 / 1.5849625007 + 1 / 2.3219280949) / (1 + 1 / 1.5849625007 + 0.5)
    assert ndcg_at_k(ranked, frozenset({"a", "c", "c2"}), 4) == pytest.approx(expected)


def test_first_relevant_rank_is_one_based_or_none():
    ranked = ["x", "a", "y", "c2"]
    assert first_relevant_rank(ranked, {"c2", "a"}) == 2
    assert first_relevant_rank(ranked, frozenset({"x"})) == 1
    assert first_relevant_rank(ranked, {"zz"}) is None
    assert first_relevant_rank([], {"a"}) is None
    assert reciprocal_rank(ranked, frozenset({"zz"})) == 0.0


def test_round_metrics_keeps_three_decimals_for_rank_measures_only():
    table = pd.DataFrame({"Pass@5": [59.4594], "Fail@20": [26.5766], "R@5": [0.41666],
                          "MRR": [0.53234], "nDCG@10": [0.61149], "queries": [12]})
    assert round_metrics(table).iloc[0].to_dict() == {
        "Pass@5": 59.5, "Fail@20": 26.6, "R@5": 0.417, "MRR": 0.532, "nDCG@10": 0.611,
        "queries": 12}


def test_agrees_with_ir_measures():
    judgments = {"q1": [frozenset({"a"}), frozenset({"d"})], "q2": [frozenset({"e"})],
                 "q3": [frozenset({"z"})]}
    run = {"q1": ["b", "a", "c", "d", "e"], "q2": ["e", "a"], "q3": ["a", "b"]}
    table = per_query(run, judgments, ks=(1, 3, 5), ndcg_k=3)
    qrels = [ir_measures.Qrel(q, d, 1) for q, items in judgments.items()
             for item in items for d in item]
    scored = [ir_measures.ScoredDoc(q, d, float(len(r) - i)) for q, r in run.items()
              for i, d in enumerate(r)]
    theirs = ir_measures.calc_aggregate([R @ 1, R @ 3, R @ 5, RR, nDCG @ 3], qrels, scored)
    mine = summarize(table)
    assert mine["R@1"] == pytest.approx(theirs[R @ 1])
    assert mine["R@3"] == pytest.approx(theirs[R @ 3])
    assert mine["R@5"] == pytest.approx(theirs[R @ 5])
    assert mine["MRR"] == pytest.approx(theirs[RR])
    assert mine["nDCG@3"] == pytest.approx(theirs[nDCG @ 3])
    # one chunk per item: Pass@k is recall@k × 100
    assert mine["Pass@3"] == pytest.approx(100 * theirs[R @ 3])


def test_judge_spans_chunks_and_documents():
    doc = Document("d", "alpha beta gamma delta epsilon")
    chunks = [Chunk("d#0", "d", "alpha beta gamma", start=0, end=16),
              Chunk("d#1", "d", "gamma delta epsilon", start=11, end=30),
              Chunk("e#0", "e", "alpha beta gamma", start=0, end=16)]
    queries = [Query("span", "?", golden=(Golden("d", span="gamma delta"),)),
               Query("chunk", "?", golden=(Golden("d", chunk_id="d#0"),)),
               Query("doc", "?", golden=(Golden("d"),)),
               Query("none", "?")]
    got = judge(queries, [doc, Document("e", "alpha beta gamma")], chunks)
    # "gamma delta" = [11, 22): d#0 covers 5 of 11 chars (< half), d#1 covers all
    assert got["span"] == [frozenset({"d#1"})]
    assert got["chunk"] == [frozenset({"d#0", "e#0"})]  # same stripped text counts
    assert got["doc"] == [frozenset({"d#0", "d#1"})]
    assert "none" not in got


def test_pass_at_k_matches_cookbook_definition_on_cookbook(cookbook_dir):
    from ragkit.datasets import load_cookbook
    data = load_cookbook(cookbook_dir)
    judgments = judge(data.queries, data.documents, data.chunks)
    assert len(judgments) == 248
    # a perfect run that lists each query's golden chunks first scores 100
    run = {q.id: [g.chunk_id for g in q.golden] for q in data.queries}
    assert summarize(per_query(run, judgments))["Pass@20"] == pytest.approx(100.0)


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    lo, hi = bootstrap_ci(values)
    assert lo < 0.7 < hi
    assert bootstrap_ci(values) == (lo, hi)


def test_confidence_table_brackets_each_mean():
    import pandas as pd
    tables = {"a": pd.DataFrame({"Pass@20": [100.0, 0.0, 100.0, 100.0]}),
              "b": pd.DataFrame({"Pass@20": [50.0, 50.0, 50.0, 50.0]})}
    table = confidence_table(tables)
    assert table.loc["a", "Pass@20"] == 75.0
    assert table.loc["a", "95% low"] < 75.0 < table.loc["a", "95% high"]
    assert table.loc["b"].tolist() == [50.0, 50.0, 50.0]
