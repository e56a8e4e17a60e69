"""Does a synthetic set rank configurations as a human one does: tau, interval, disagreements."""
from __future__ import annotations

import pandas as pd
import pytest

from ragkit.documents import Document
from ragkit.pipeline import IndexConfig, SearchConfig
from ragkit.questions import agreement, as_queries, compare_sets, default_configs


def test_one_swapped_pair_of_three_gives_tau_one_third_and_names_the_pair():
    human = pd.DataFrame({"a": [1.0, 0.8], "b": [0.5, 0.5], "c": [0.0, 0.2]})
    synthetic = pd.DataFrame({"a": [0.4, 0.4, 0.4], "b": [0.9, 0.7, 0.8], "c": [0.1, 0.0, 0.2]})
    result = agreement(human, synthetic, n=200, seed=1)
    assert result.tau == pytest.approx(1 / 3)  # 2 concordant pairs, 1 discordant, of 3
    assert list(result.table.index) == ["a", "b", "c"]
    assert list(result.table["synthetic rank"]) == [2, 1, 3]
    assert result.disagreements.to_dict("records") == [
        {"a": "a", "b": "b", "human a − b": pytest.approx(0.4),
         "synthetic a − b": pytest.approx(-0.4)}]
    low, high = result.interval
    assert -1 <= low <= result.tau <= high <= 1
    assert agreement(human, synthetic, n=200, seed=1).interval == result.interval
    assert result.questions == (2, 3)


def test_the_default_configurations_are_ten_over_two_context_routes():
    configs = default_configs()
    assert len(configs) == 10
    assert {context for context, _ in configs.values()} == {"structural", "none"}
    assert configs["hybrid + rerank"][1] == SearchConfig(rerank="offline")


def test_the_1_rank_fusion_is_named_by_its_weights_as_notebook_03_names_it():
    """Notebook 08 called it "hybrid weighted_rank" in its table, figure and finding, where
    notebook 03 shows the same fusion as "1/rank 0.8/0.2 (cookbook)": one way of naming,
    by the fusion and its weights (here ragkit's dense 0.6 / BM25 0.4)."""
    configs = default_configs()
    assert [name for name in configs if "1/rank" in name] == ["hybrid 1/rank 0.6/0.4"]
    context, search = configs["hybrid 1/rank 0.6/0.4"]
    assert (context, search.fusion, search.weights) == (
        "structural", "weighted_rank", {"dense": 0.6, "bm25": 0.4})
    from ragkit import fusion_methods
    assert "1/rank 0.8/0.2 (cookbook)" in fusion_methods()


def test_compare_sets_scores_generated_records_against_a_bm25_index():
    documents = [Document("a", "Refunds take five working days to reach the card."),
                 Document("b", "The reset button restores the factory settings.")]
    records = [{"id": "q1", "question": "How long do refunds take?",
                "golden": [{"doc_id": "a", "span": "five working days"}]},
               {"id": "q2", "question": "What does the reset button do?",
                "golden": [{"doc_id": "b", "span": "restores the factory settings"}]}]
    configs = {"bm25": ("none", SearchConfig(mode="bm25")),
               "bm25 structural": ("structural", SearchConfig(mode="bm25"))}
    result = compare_sets(documents, as_queries(records), as_queries(records[::-1]),
                          configs=configs, index=IndexConfig(embedder=None), n=50)
    assert result.questions == (2, 2)
    assert list(result.table["human mean"]) == [1.0, 1.0]
    assert result.tau == 0.0  # every configuration tied: tau-b is undefined, reported as 0
