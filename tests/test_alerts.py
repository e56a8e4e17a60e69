"""Zero-result alerting on hand-made queries over a tiny index."""
from __future__ import annotations

import pytest
from word_embedder import WordEmbedder

from ragkit.alerts import zero_results
from ragkit.documents import Document, RagkitError, RagkitWarning
from ragkit.pipeline import IndexConfig, Pipeline

DOCS = [Document("gw", "The gateway reboots when the reset button is held."),
        Document("refund", "Refunds are paid within 14 days."),
        Document("ship", "Parcels ship on weekdays from the warehouse.")]


@pytest.fixture(scope="module")
def pipeline():
    embedder = WordEmbedder(["gateway", "reset", "button", "refunds", "paid", "days"])
    return Pipeline.build(DOCS, IndexConfig(contextualizer="none", embedder="word-test"),
                          progress=False, embedder=embedder)


def test_a_query_without_a_known_term_or_with_a_weak_top_score_finds_nothing(pipeline):
    report = zero_results(pipeline, ["reset button", "zzz qqq", "button", "refunds paid"],
                          floor=0.6, warn=False)
    # dense cosines: "reset button" vs gw (gateway, reset, button) = 2/√6 = 0.816;
    # "zzz qqq" has no term in the vocabulary; "button" vs gw = 1/√3 = 0.577 < 0.6.
    assert [c.zero for c in report.checks] == [False, True, True, False]
    assert [c.lexical_hit for c in report.checks] == [True, False, True, True]
    assert report.checks[0].top_score == pytest.approx(0.8165, abs=1e-3)
    assert report.share == 0.5 and report.alert and report.signal == "dense"
    assert str(report).startswith("2 of 4 queries (50.0%) found nothing: 1 without a BM25")


def test_the_warning_comes_only_above_five_percent(pipeline):
    fine = ["reset button"] * 19
    with pytest.warns(RagkitWarning, match="zero-result alert: 1 of 19"):
        zero_results(pipeline, fine[:18] + ["zzz"], floor=0.6)
    exactly_five = zero_results(pipeline, fine + ["zzz"], floor=0.6)  # 1 of 20 = 5 %
    assert exactly_five.share == 0.05 and not exactly_five.alert


def test_signals_bm25_and_fused_and_unknown(pipeline):
    bm25 = zero_results(pipeline, ["reset button", "zzz"], floor=0.0, signal="bm25", warn=False)
    assert bm25.checks[0].top_score > 0 and bm25.checks[1].top_score == 0.0
    fused = zero_results(pipeline, ["reset button"], floor=0.5, signal="fused", warn=False)
    # 0.6 · (dense top, normalised 1) + 0.4 · 1: a lone BM25 hit gets its list's full weight.
    # The fused top says where a chunk sits in each list, not how well the query matches.
    assert fused.checks[0].top_score == pytest.approx(1.0)
    with pytest.raises(RagkitError, match="unknown zero-result signal 'best'"):
        zero_results(pipeline, ["x"], floor=0.1, signal="best")


def test_default_floor_is_the_index_embedders_and_for_the_dense_signal_only(pipeline):
    """Cosine scales differ by model: e5-small's off-topic queries score 0.77-0.83, MiniLM's
    0.17-0.25, so one floor for both would flag nothing (or everything)."""
    with pytest.raises(RagkitError, match="no measured zero-result floor for embedder "
                                          "'word-test' .*; give one"):
        zero_results(pipeline, ["reset button"], warn=False)
    for name, floor in (("e5-small", 0.82), ("auto", 0.3), ("minilm", 0.3)):
        named = Pipeline(IndexConfig(contextualizer="none", embedder=name), pipeline.chunks,
                         pipeline.bm25, pipeline.dense, pipeline.embedder,
                         pipeline.embedder_record)
        assert zero_results(named, ["reset button"], warn=False).floor == floor
    with pytest.raises(RagkitError, match="'bm25' has no default floor"):
        zero_results(pipeline, ["reset button"], signal="bm25")
