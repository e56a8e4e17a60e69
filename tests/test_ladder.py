"""The Contextual Retrieval article's ladder: rung tables, reductions beside the article's."""
import math

import pandas as pd
import pytest

from ragkit.documents import Dataset, Document, Golden, Query
from ragkit.ladder import (ARTICLE_FAIL20, Rung, build_indexes, default_rungs, ladder,
                           ladder_table)
from ragkit.pipeline import IndexConfig, SearchConfig


def _table(pass20):
    return pd.DataFrame({"Pass@5": pass20, "Pass@20": pass20})


def test_table_gives_fail20_and_reduction_per_rung_and_keeps_unbuilt_rungs():
    rungs = default_rungs()  # no reranker named: the last rung is not built
    tables = {rungs[0].name: _table([100, 0, 0, 100]),      # Pass@20 50 → Fail@20 50
              rungs[1].name: _table([100, 100, 0, 100]),    # 75 → 25: −50 %
              rungs[2].name: _table([100, 100, 100, 100])}  # 100 → 0: −100 %
    table = ladder_table(tables, rungs)
    assert table["Fail@20"].tolist()[:3] == [50.0, 25.0, 0.0]
    assert table["reduction %"].tolist()[:3] == [0.0, 50.0, 100.0]
    assert math.isnan(table.loc[rungs[3].name, "Fail@20"])
    assert table["article Fail@20"].tolist() == list(ARTICLE_FAIL20)
    # the article's −35 % / −49 % / −67 %
    assert table["article reduction %"].round().tolist() == [0.0, 35.0, 49.0, 67.0]


def test_ladder_searches_bare_then_contextual_indexes():
    filler = "\n\nIntro.\n\n" + "filler words here. " * 40 + "\n\nRevenue grew {} % over the previous quarter."
    # Globex first: without context the two closing chunks tie and the first one wins
    docs = [Document("globex.md", "# Globex Q2 2023" + filler.format(5), "Globex Q2 2023"),
            Document("acme.md", "# ACME Q2 2023" + filler.format(3), "ACME Q2 2023"),
            Document("refund.md", "# Refunds\n\nRefunds take seven days.", "Refunds")]
    query = Query("q", "ACME revenue growth over the previous quarter",
                  golden=(Golden("acme.md", span="Revenue grew 3 %"),))
    data = Dataset("tiny", docs, [query])
    indexes = build_indexes(data, "structural", embedder=None, chunk_size=64, overlap=8)
    assert all(c.context == "" for c in indexes[False].chunks)
    assert all(c.context.startswith("Document: ") for c in indexes[True].chunks)
    rungs = [Rung("bare", False, SearchConfig("bm25")), Rung("context", True, SearchConfig("bm25"))]
    tables = ladder(data, [query], indexes, rungs, k=1)
    assert tables["bare"]["Pass@1"].tolist() == [0.0]  # "ACME" is only in the opening chunk
    assert tables["context"]["Pass@1"].tolist() == [100.0]  # the title in the context decides


def test_context_routes_and_their_comparison():
    from ragkit.ladder import compare_routes, context_routes
    routes = context_routes("minilm")
    assert list(routes) == ["none", "structural", "claude"]
    assert list(context_routes("minilm", claude=False)) == ["none", "structural"]
    assert context_routes("minilm", online_voyage=True)["voyage-context-3"].embedder == \
        "voyage-context:voyage-context-3"
    docs = [Document("a.md", "# Alpha\n\nThe deadline is seven days.", "Alpha"),
            Document("b.md", "# Beta\n\nThe deadline is ten days.", "Beta"),
            Document("c.md", "# Gamma\n\nShipping is free.", "Gamma")]
    query = Query("q", "Beta deadline", golden=(Golden("b.md", span="ten days"),))
    data = Dataset("tiny", docs, [query])
    bare = {name: IndexConfig(contextualizer=name, embedder=None) for name in ("none", "structural")}
    table = compare_routes(data, [query], bare, SearchConfig("bm25"), k=1)
    # each document is one chunk whose text names its title, so both routes find it
    assert table["Pass@1"].tolist() == [100.0, 100.0]


def test_compare_routes_reuses_an_index_built_with_the_same_config(monkeypatch):
    from ragkit.ladder import compare_routes
    docs = [Document("a.md", "# Alpha\n\nThe deadline is seven days.", "Alpha"),
            Document("b.md", "# Beta\n\nThe deadline is ten days.", "Beta")]
    query = Query("q", "Beta deadline", golden=(Golden("b.md", span="ten days"),))
    data = Dataset("tiny", docs, [query])
    config = IndexConfig(contextualizer="structural", embedder=None)
    from ragkit.pipeline import Pipeline
    ready = Pipeline.build(docs, config, progress=False)
    monkeypatch.setattr(Pipeline, "build", classmethod(lambda *a, **k: pytest.fail("rebuilt")))
    table = compare_routes(data, [query], {"structural": config}, SearchConfig("bm25"), k=1,
                           built=[ready])
    assert table.loc["structural", "Pass@1"] == 100.0


def test_a_rung_that_fails_more_is_said_to_fail_more():
    """A rung failing more than the first read "-200 % fewer failures" in notebook 02's
    finding and section 3, and in the report's headline (notebook 08's ladder shows it)."""
    from ragkit.ladder import fewer_failures
    assert fewer_failures(30.4) == "30 % fewer failures"
    assert fewer_failures(22.84, 1) == "22.8 % fewer failures"
    assert fewer_failures(-200.0) == "200 % more failures"
    assert fewer_failures(0.04, 1) == fewer_failures(-0.2) == "no fewer failures"
    assert fewer_failures(float("nan")) == "no change measured"  # a first rung with none


def _folder_ladder(failures: list[int], questions: int = 42) -> pd.DataFrame:
    """Notebook 08's ladder on a folder: each rung fails `failures` of `questions`."""
    from ragkit.ladder import ladder_table
    rungs = default_rungs(rerank="offline")
    return ladder_table({rung.name: _table([100.0] * (questions - n) + [0.0] * n)
                         for rung, n in zip(rungs, failures)}, rungs, counts=True)


@pytest.mark.parametrize("failures", [[2, 3, 0, 0], [1, 3, 0, 0], [20, 15, 10, 5]])
def test_no_bar_label_of_a_ladder_runs_into_a_bar(failures):
    """Notebook 08's figure: "2 questions failed" over the first rung's bar ran into the
    article's grey bar beside it, and "0 questions failed" into the grey 2.9 and 1.9."""
    import matplotlib.pyplot as plt

    from ragkit.plots import ladder_bars
    fig = ladder_bars(_folder_ladder(failures, 47))
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    labels = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(bars) == 8 and len(labels) == 8
    assert [(n, m) for n, label in enumerate(labels) for m, bar in enumerate(bars)
            if m != n and label.overlaps(bar)] == []  # (its own bar: it stands on it)
    plt.close(fig)


def test_a_folders_ladder_counts_failed_questions_and_says_when_too_few_to_reduce():
    """Notebook 08 on the sample folder: Fail@20 2.4 → 7.1 read as a reduction of -200.0 in
    the table and "+200%" on the figure, one change with two signs, and nothing said that
    it was 1 failed question of 42 become 3. The table now counts the failed questions, the
    figure words the change as the table's column ("200% more"), and a sentence says when
    the first rung fails too few questions for a relative reduction to mean anything."""
    import matplotlib.pyplot as plt

    from ragkit import ladder_note
    from ragkit.plots import ladder_bars
    table = _folder_ladder([1, 3, 0, 0])
    assert table["failed questions"].tolist() == [1, 3, 0, 0]
    assert table["reduction %"].round(1).tolist() == [0.0, -200.0, 100.0, 100.0]
    assert list(table.columns[2:5]) == ["Fail@20", "failed questions", "reduction %"]
    assert ladder_note(table) == (
        "Failed questions per rung, of the 42: 1 → 3 → 0 → 0 (the table's order). Here the "
        "first rung fails 1 question, too few for a relative reduction to mean anything: one "
        "question more or less moves it by 100 %; read the counts, not the reduction column.")
    fig = ladder_bars(table)
    # the change is of Fail@20, so it stands under it, not under the count ("71% fewer"
    # under "8 questions failed" read as 18 → 8, which is 56 % fewer)
    assert [t.get_text() for t in fig.axes[0].texts] == [
        "2.4\n1 question\nfailed", "7.1\n200% higher\n3 questions\nfailed",
        "0.0\n100% lower\n0 questions\nfailed", "0.0\n100% lower\n0 questions\nfailed", "5.7",
        "3.7\n35% lower", "2.9\n49% lower", "1.9\n67% lower"]
    plt.close(fig)
    assert ladder_note(_folder_ladder([20, 15, 10, 5], 159)) == (
        "Failed questions per rung, of the 159: 20 → 15 → 10 → 5 (the table's order). The "
        "first rung fails 20, so one question more or less moves the reduction by about 5.0 "
        "%: the reduction column reads as a rate.")
    # questions of two passages that miss one: Fail@20 counts each half, the count whole;
    # one question is 100/40 = 2.5 points of Fail@20 12.5, so 20 % of the reduction
    halves = _folder_ladder([10, 10, 10, 10], 40)
    halves["Fail@20"] = [12.5, 10.0, 7.5, 5.0]
    assert ladder_note(halves).endswith(  # the count and Fail@20 differ: said so
        "A question counts as failed when any of its golden passages is outside the top 20; "
        "Fail@20 counts the share of its passages missed, so the first rung's 12.5 is not 10 "
        "of 40 (25.0 %).")
    many = _folder_ladder([180, 150, 100, 50], 700)  # 180 of 700 is 25.714 %
    many["Fail@20"] = [25.657, 21.0, 14.0, 7.0]  # both read 25.7: "25.7 is not … (25.7 %)"
    assert "A question counts" not in ladder_note(many)
    assert "moves the reduction by about 20.0 %: the reduction column reads as a rate. A " \
        in ladder_note(halves)
    assert ladder_note(_folder_ladder([0, 2, 0, 0])).endswith(
        "Here the first rung fails no question, so there is no failure to reduce; read the "
        "counts, not the reduction column.")
    assert "failed questions" not in ladder_table(  # notebook 02's ladder keeps its columns
        {r.name: _table([100.0, 0.0]) for r in default_rungs()}).columns


def test_the_finding_says_which_rung_raised_the_failures_on_the_way():
    """A folder whose context hurt dense search (Fail@20 23.1 → 26.9) read "Contextual
    embeddings and BM25 cut the failure rate … 23.1 → 11.9": BM25's gain credited to context."""
    from ragkit.ladder import ladder_cut
    hurt = _folder_ladder([12, 14, 6, 5], 52)  # 23.1 → 26.9 → 11.5 → 9.6
    rungs = list(hurt.index)
    assert ladder_cut(hurt, rungs[2]) == (
        f"Fail@20 23.1 → 11.5, 50 % fewer failures ({rungs[1]} alone raised it to 26.9)")
    assert ladder_cut(_folder_ladder([20, 15, 10, 5], 159), rungs[2]) == (
        "Fail@20 12.6 → 6.3, 50 % fewer failures")
    assert ladder_cut(_folder_ladder([0, 2, 0, 0]), rungs[2]) == (
        f"Fail@20 0.0 → 0.0 ({rungs[1]} alone raised it to 4.8)")
