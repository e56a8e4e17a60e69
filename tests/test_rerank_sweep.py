"""Rerank latency, the rerank-depth sweep and the projected cost of a listwise reranker."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ragkit.documents import Chunk, Document, Golden, Query, RagkitError
from ragkit.evaluate import judge
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.pricing import Usage, cost
from ragkit.rerank import Candidate
from ragkit.rerank.claude import ClaudeReranker, projected_usage
from ragkit.rerank.listwise import build_messages
from ragkit.rerank_sweep import sweep_candidates
from ragkit.rerank_timing import (latency_sentence, latency_table, rerank_step_times,
                                  timed_run)
from ragkit.standin import estimate_tokens, request_tokens

ROOT = Path(__file__).resolve().parent.parent

DOCS = [Document(f"doc{i}", f"Report {i}. The widget count for plant {i} is {i * 7} units. "
                            f"Plant {i} ships by rail.", title=f"Plant {i}") for i in range(30)]
QUERIES = [Query(f"q{i}", f"widget count plant {i}", golden=(Golden(f"doc{i}", f"{i * 7} units"),))
           for i in (3, 11, 25)]


@pytest.fixture(scope="module")
def pipeline():
    return Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)


def test_timed_run_is_the_search_run_with_one_time_per_query(pipeline):
    config = SearchConfig("bm25", rerank="offline")
    run, times = timed_run(pipeline, QUERIES, 5, config)
    assert run == pipeline.run(QUERIES, 5, config)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert len(rerank_step_times(pipeline, QUERIES, 5, config)) == 3


def test_latency_table_gives_the_quantiles_of_each_list():
    table = latency_table({"a": [1.0, 2.0, 3.0, 4.0, 100.0]})
    assert table.loc["a"].to_dict() == {"queries": 5, "p50 ms": 3.0,
                                        "p95 ms": pytest.approx(80.8), "mean ms": 22.0}


ROWS = {20: "rerank 20", 50: "rerank 50", 100: "rerank 100", 150: "rerank 150"}


def _times(medians: list[float]) -> pd.DataFrame:
    """A latency table with these medians of the reranked search at 20, 50, 100 and 150."""
    return latency_table({"plain": [1.6, 1.6, 1.6], "step": [4.7, 4.7, 4.7],
                          **{ROWS[n]: [m, m, m] for n, m in zip(ROWS, medians)}})


def test_the_latency_sentence_says_whether_deeper_lists_took_longer():
    """Notebook 04 said "the reranked search takes longer the more candidates it scores"
    whatever the run measured, and a run measured 6.9, 11.2, 9.4 and 9.3 ms at the median."""
    head = ("In this run, hybrid search took 1.6 ms per query at the median, the rerank step "
            "over 150 candidates 4.7 ms, and the whole reranked search {} ms (p95 at most {} "
            "ms). Its median by the candidates it reranks: ")
    assert latency_sentence(_times([6.9, 11.2, 9.4, 9.3]), "plain", "step", ROWS, 150) == (
        head.format("9.3", "11.2") + "6.9 ms with 20, 11.2 with 50, 9.4 with 100 and 9.3 with "
        "150: not steadily longer with a deeper list: between these depths the machine's load "
        "moves one run's medians more than the extra candidates do.")
    assert latency_sentence(_times([6.5, 6.9, 7.7, 8.0]), "plain", "step", ROWS, 150) == (
        head.format("8.0", "8.0") + "6.5 ms with 20, 6.9 with 50, 7.7 with 100 and 8.0 with "
        "150: longer with each deeper list.")
    # as printed: 7.04 and 7.01 both read 7.0, so the list is not said to rise
    assert latency_sentence(_times([6.5, 7.04, 7.01, 8.0]), "plain", "step", ROWS, 150) \
        .endswith("6.5 ms with 20, 7.0 with 50, 7.0 with 100 and 8.0 with 150: not steadily "
                  "longer with a deeper list: between these depths the machine's load moves one "
                  "run's medians more than the extra candidates do.")


def test_projected_usage_counts_the_windows_rerank_would_send():
    chunks = [Chunk(f"c{i}", "d", f"passage number {i} " * 5) for i in range(25)]
    candidates = [Candidate(c, 1.0) for c in chunks]
    reranker = ClaudeReranker(llm=object())  # requests only, never called
    calls, usage = projected_usage(reranker, "which passage?", candidates)
    # windows of 20 moved by 10 from the back: (5, 25), then the remaining (0, 15)
    bodies = [reranker.request("which passage?", candidates[a:b]) for a, b in ((5, 25), (0, 15))]
    assert calls == 2
    expected_out = sum(estimate_tokens(" > ".join(f"[{n}]" for n in range(1, size + 1)))
                       for size in (20, 15))
    assert usage == Usage(sum(request_tokens(b) for b in bodies), expected_out)
    system, messages = build_messages("which passage?", [c.text for c in chunks[:15]])
    assert bodies[1]["system"] == system and bodies[1]["messages"] == messages
    assert cost(usage, "claude-haiku-4-5") == pytest.approx(
        (usage.input * 1.0 + usage.output * 5.0) / 1e6)


def test_sweep_candidates_has_one_row_per_depth_and_more_depth_costs_more(pipeline):
    judgments = judge(QUERIES, DOCS, pipeline.chunks)
    sweep = sweep_candidates(pipeline, QUERIES, judgments, (2, 20), k=2,
                             base=SearchConfig("bm25"))
    assert sweep.table.index.tolist() == [2, 20]
    assert sweep.table.loc[20, "Pass@2"] == 100.0  # each question names its plant
    assert sweep.table.loc[2, "listwise calls"] == 1.0
    assert (sweep.table.loc[20, "listwise input tokens (est.)"]
            > sweep.table.loc[2, "listwise input tokens (est.)"])
    assert set(sweep.per_query) == {2, 20} and len(sweep.times[20]) == 3


def test_metrics_of_a_short_list_are_named_by_its_length(pipeline):
    """A top-10 list has no Pass@20: `-p k=10` made notebook tables label Pass@10 "Pass@20"
    (the metrics were cut at 5/10/20 whatever the list's length)."""
    from ragkit.ladder import compare_routes
    from ragkit.pipeline import evaluate_configs
    judgments = judge(QUERIES, DOCS, pipeline.chunks)
    tables = evaluate_configs(pipeline, QUERIES, judgments, {"bm25": SearchConfig("bm25")}, k=3)
    assert list(tables["bm25"].columns) == ["Pass@3", "R@3", "MRR", "nDCG@3"]
    assert list(evaluate_configs(pipeline, QUERIES, judgments, {"b": SearchConfig("bm25")},
                                 k=20)["b"].columns)[:3] == ["Pass@5", "Pass@10", "Pass@20"]
    sweep = sweep_candidates(pipeline, QUERIES, judgments, depths=(20,), k=10,
                             base=SearchConfig("bm25"))
    assert [c for c in sweep.table.columns if c.startswith("Pass")] == ["Pass@5", "Pass@10"]
    from ragkit.documents import Dataset
    routes = compare_routes(Dataset("d", DOCS, []), QUERIES, {"bare": pipeline.config},
                            k=10, built=[pipeline], search=SearchConfig("bm25"))
    assert "Pass@20" not in routes.columns and "Pass@10" in routes.columns


@pytest.mark.parametrize("k", [10, 19, "20", 20.0, True])
def test_a_notebook_reporting_pass20_refuses_a_shorter_list(k):
    from ragkit.cookbook import check_depth
    with pytest.raises(RagkitError, match=rf"^parameter k = {k!r}: this notebook reports "
                                          r"Pass@20 and Fail@20, which need a ranked list of "
                                          r"at least 20; give k >= 20$"):
        check_depth(k)
    check_depth(20)
    check_depth(50)


@pytest.mark.parametrize("every", [0, -1, "4", 2.0, True])
def test_a_notebook_sampling_every_nth_question_refuses_a_step_below_one(every):
    """`-p every=0` stopped notebook 06 with Python's "slice step cannot be zero" after its
    index was built; notebooks 06 and 07 call this in their first cell."""
    import nbformat
    from ragkit.cookbook import check_every
    with pytest.raises(RagkitError, match=rf"^parameter every = {every!r}: give a whole "
                                          r"number every >= 1$"):
        check_every(every)
    check_every(1)
    for name in ("06_crag_self_rag", "07_rag_vs_long_context"):
        cells = nbformat.read(f"notebooks/{name}.ipynb", 4).cells
        assert "\ncheck_every(every)" in cells[2].source  # before the index is built


@pytest.mark.parametrize("number, name, value", [("04", "k", 0), ("04", "rerank_candidates", -5),
                                                 ("06", "k", 0)])
def test_notebooks_refuse_a_count_below_one_in_their_first_cell(tmp_path, number, name, value):
    """Notebook 04 with `-p k=0` printed a `k = 0` sweep column, "answered 0 of 173", a table
    of NaN and "top-0 retrieval only", then failed in cell 45 of 47 on a line naming no
    parameter; 06 failed on the library's line. Both now stop in their first code cell."""
    import nbformat
    import papermill
    (path,) = (ROOT / "notebooks").glob(f"{number}_*.ipynb")
    nb = nbformat.read(path, 4)
    nb.cells = nb.cells[:3]  # the parameters and the first code cell
    source = tmp_path / path.name
    nbformat.write(nb, source)
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"),
                                   parameters={name: value}, kernel_name="python3",
                                   cwd=str(path.parent), progress_bar=False)
    assert caught.value.evalue == f"parameter {name} = {value}: give a whole number {name} >= 1"
