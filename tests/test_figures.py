"""Every figure a notebook shows is readable: `ragkit.figure_check` on hand-made bad figures,
on ragkit's figure functions fed the tables the notebooks plot (copied from their committed
outputs), and a scan that every function in ragkit that draws a figure is `checked` — so a
notebook drawing an unreadable figure fails when nbval re-executes it in `make test`."""
import ast
import importlib
import json
import resource
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ragkit import plots  # noqa: E402
from ragkit.agent import trace, views  # noqa: E402
from ragkit.figure_check import CHECKED, UnreadableFigure, check, problems  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# The tables notebooks 01, 03, 04 and 07 plot (committed outputs, offline run).
RETRIEVERS = pd.DataFrame({"Pass@5": [59.3, 46.9, 57.0, 64.2], "Pass@10": [65.2, 60.3, 69.4, 70.8],
                           "Pass@20": [67.7, 72.2, 73.9, 77.3]},
                          index=["BM25", "dense", "hybrid (RRF)", "hybrid (0.6/0.4)"])
FUSIONS = pd.DataFrame({"Pass@5": [83, 73, 84, 85, 87, 80], "Pass@10": [92, 83, 93, 95, 94, 92],
                        "Pass@20": [95, 94, 98, 99, 99, 98]},
                       index=["BM25", "dense", "RRF (k = 60)", "min-max 0.6/0.4",
                              "z-score 0.6/0.4", "1/rank 0.8/0.2 (cookbook)"])
METHODS = pd.DataFrame({"accuracy %": [9.1, 12.1, 9.1, 9.1, 3.0],
                        "calls": [1.0, 1.0, 5.0, 1.0, 2.3],
                        "$/query": [0.0031, 0.0012, 0.0037, 0.0095, 0.0060],
                        "$/query uncached": [0.0031, 0.0012, 0.0037, 0.0698, 0.0060]},
                       index=["fixed RAG (top 5)", "CRAG (offline evaluator)",
                              "Self-RAG (offline rules)", "long context (cached)",
                              "agentic (loop of notebook 05)"])
# notebook 06's methods: two qualifiers too long for one line beside the others
CRAG_RUNS = pd.DataFrame({"accuracy %": [18.2, 13.6, 13.6, 18.2, 18.2],
                          "calls": [1.0, 1.0, 40.7, 5.0, 21.0]},
                         index=["plain RAG", "CRAG (offline evaluator)",
                                "CRAG (judge prompts, stand-in)", "Self-RAG (offline rules)",
                                "Self-RAG (judge prompts, stand-in)"])
RRF_K = pd.DataFrame({"Pass@5": [88.5, 88.0, 88.5, 86.5, 87.0, 86.1, 85.1, 85.1],
                      "Pass@10": [93.7, 93.7, 93.7, 92.3, 92.8, 92.3, 91.8, 91.8],
                      "Pass@20": [99.0, 99.0, 99.0, 98.6, 97.6, 97.6, 97.6, 97.6]},
                     index=[1, 5, 10, 20, 40, 60, 100, 200])
RERANK = pd.DataFrame({"Pass@5": [84.5, 95.1], "Pass@10": [95.1, 99.7],
                       "Pass@20": [99.0, 100.0]}, index=["no rerank", "rerank offline"])
# notebook 04's decline curve: the answerable questions quoting their span (65.0 %) lie 0.7
# points above the unanswerable ones declined (64.3 %) from threshold 0 to 0.75
DECLINE = pd.DataFrame({"answerable quoting the span %": [65.0] * 16 + [63.7, 55.6, 19.2, 0.0,
                                                                        0.0],
                        "unanswerable declined %": [64.3] * 17 + [71.4, 85.7, 100.0, 100.0]},
                       index=[round(0.05 * i, 2) for i in range(21)])
DEPTH = pd.DataFrame({"Pass@5": [93.4, 93.9, 94.5, 94.8], "Pass@10": [96.2, 97.5, 98.4, 98.4],
                      "Pass@20": [97.5, 100.0, 99.7, 99.7], "$": [0.0102, 0.0397, 0.0848, 0.116]},
                     index=[20, 50, 100, 150])

# notebook 04's chunks handed to the answerer: at k = 20 Pass@k (99.7) and the price ($0.00758)
BY_K = pd.DataFrame({"Pass@k": [87.1, 94.8, 98.4, 99.7], "cites golden %": [20.8, 23.3, 23.3, 23.3],
                     "answered %": [27.7, 28.3, 28.9, 28.9],
                     "$ / query (projected)": [0.00186, 0.00300, 0.00573, 0.00758]},
                    index=[3, 5, 10, 20])


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_overlapping_tick_labels_are_found():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(range(3), [1, 2, 3])
    ax.set_xticks(range(3), ["a very long method name", "another long method name", "c"])
    assert [p for p in problems(fig) if "tick labels" in p][0].startswith(
        "x tick labels 'a very long method name' and 'another long method name' overlap")


def test_dollars_on_a_percent_axis_are_a_sliver():
    fig, ax = plt.subplots()
    ax.bar(range(2), [0.0031, 0.0698])
    ax.set_ylim(0, 105)
    assert problems(fig) == ["the data reach 0.1% of the y axis (0 to 0.0698 on 0 to 105; "
                             "untitled axes): set the limits from the data"]


def test_a_flat_line_far_from_zero_is_not_blank():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [50.0, 50.0, 50.0])
    assert problems(fig) == []


def test_a_flat_line_at_zero_is_not_blank_and_tiny_bars_from_zero_still_are():
    """A sweep's Fail@20 of 0 at every point was "the data reach 0.0% of the y axis" on any
    limits: a figure no layout could make readable. A line along 0 is data in view; a
    bar of 0.001 on a 0 … 1 axis is still a sliver."""
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.0, 0.0, 0.0], marker="o", clip_on=False)
    ax.set_ylim(0, 2)
    assert problems(fig) == []
    fig, ax = plt.subplots()
    ax.bar(range(2), [0.0, 0.001])
    ax.set_ylim(0, 1)
    assert problems(fig) == ["the data reach 0.1% of the y axis (0 to 0.001 on 0 to 1; "
                             "untitled axes): set the limits from the data"]


def test_a_legend_over_bars_is_found_and_check_refuses_the_figure():
    fig, ax = plt.subplots()
    ax.bar(range(3), [90, 95, 99], label="Pass@20")
    ax.legend(loc="lower right")
    assert problems(fig) == ["the legend covers a bar (untitled axes)"]
    with pytest.raises(UnreadableFigure, match="the legend covers a bar"):
        check(fig)


def test_a_line_under_another_drawn_alike_is_found_and_one_drawn_apart_is_not():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [65.0, 65.0, 20.0], marker="o", label="quoting the span %")
    ax.plot([0, 1, 2], [64.8, 64.8, 90.0], marker="o", label="declined %")
    assert problems(fig) == ["the line 'quoting the span %' is hidden under 'declined %' "
                             "(untitled axes)"]
    with pytest.raises(UnreadableFigure, match="is hidden under"):
        check(fig)
    fig, ax = plt.subplots()  # the marker on top another, smaller: the one under it shows
    ax.plot([0, 1, 2], [65.0, 65.0, 20.0], marker="o", markersize=6, label="quoting the span %")
    ax.plot([0, 1, 2], [64.8, 64.8, 90.0], marker="s", markersize=4.5, label="declined %")
    assert problems(fig) == []


# two lines of 5,000 points, "b" drawn over "a" alike; "far" alike too, but 30 points lower
LONG_LINES = """
import json
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from ragkit.figure_check import problems
fig, ax = plt.subplots()
x = np.linspace(0, 1, 5000)
ax.plot(x, 50 + 20 * np.sin(6 * x), marker="o", label="a")
ax.plot(x, 50 + 20 * np.sin(6 * x), marker="o", label="b")
ax.plot(x, 20 + 20 * np.sin(6 * x), marker="^", label="far")
ax.plot(x, 80 + 20 * np.sin(6 * x), marker="^", label="far above")
print(json.dumps(problems(fig)))
"""
MEMORY = 1 << 30  # bytes of address space the check may take, matplotlib and all


def _at_most_a_gigabyte() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def test_a_line_of_thousands_of_points_is_checked_in_bounded_memory():
    """Each point of a line was measured against each point of the line above it: two lines
    of 5,000 points asked for 9.6 GB. Within 1 GB the hidden one is still found."""
    done = subprocess.run([sys.executable, "-c", LONG_LINES], capture_output=True, text=True,
                          timeout=300, preexec_fn=_at_most_a_gigabyte)
    assert done.returncode == 0, done.stderr[-600:]
    assert json.loads(done.stdout) == ["the line 'a' is hidden under 'b' (untitled axes)"]


def test_every_series_of_a_sweep_is_drawn_in_a_style_of_its_own():
    """Notebook 04's decline curve drew both series with one marker and line: from 0 to 0.75
    the answerable questions quoting their span (65.0 %) lay hidden under the unanswerable
    ones declined (64.3 %), so a reader saw one curve where the legend named two."""
    ax = plots.decline_curve_plot(DECLINE, chosen=0.86).axes[0]
    styles = [(line.get_marker(), line.get_linestyle(), line.get_markersize())
              for line in ax.lines if not line.get_label().startswith("_")]
    assert styles == [("o", "-", 6.0), ("s", "-", 4.5)]
    ax = plots.alpha_curve(FUSIONS.reset_index(drop=True).rename(lambda i: i / 5)).axes[0]
    assert [line.get_marker() for line in ax.lines] == ["o", "s", "^"]


@pytest.mark.parametrize("figure", [
    lambda: plots.metric_bars(RETRIEVERS),                                        # 01.1
    lambda: plots.metric_bars(FUSIONS),                                           # 03.1
    lambda: plots.metric_bars(RERANK),                                            # 04.1
    lambda: plots.rrf_k_curve(RRF_K, chosen=60),                                  # 03.4
    lambda: plots.tradeoff_curve(DEPTH, ["Pass@5", "Pass@10", "Pass@20"], "$", "N"),  # 04.2
    lambda: plots.metric_bars(METHODS, ("accuracy %",), ylabel="accuracy (%)"),   # 07.1
    lambda: plots.metric_bars(CRAG_RUNS, ("accuracy %",), ylabel="accuracy (%)"),  # 06.1
    lambda: plots.metric_bars(CRAG_RUNS, ("calls",), ylabel="calls"),          # 06.2
    lambda: plots.metric_bars(METHODS, ("$/query", "$/query uncached"), ylabel="USD"),  # 07.2
    lambda: plots.decline_curve_plot(DECLINE, chosen=0.86),                      # 04.4
    lambda: plots.tradeoff_curve(BY_K, ["Pass@k", "cites golden %", "answered %"],  # 04.3
                                 "$ / query (projected)", "k"),
], ids=["01.1", "03.1", "04.1", "03.4", "04.2", "07.1", "06.1", "06.2", "07.2", "04.4",
        "04.3"])
def test_the_notebooks_figures_are_readable(figure):
    fig = figure()
    assert problems(fig) == []


def test_points_in_one_spot_on_twin_axes_are_found():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [20.0, 60.0, 99.7], marker="o", label="Pass@k")
    other = ax.twinx()
    other.plot([1, 2, 3], [0.002, 0.004, 0.0076], marker="s", markersize=4, label="$")
    other.set_ylim(0, 0.0076 * 1.04)
    ax.set_ylim(15, 104)
    assert problems(fig) == ["a point of 'Pass@k' sits less than 8 pt from a point of '$' of "
                             "the twin axes (untitled axes)"]


def test_points_near_one_spot_on_twin_axes_are_found():
    """Notebook 04's rerank depth figure drew the price at N = 150 ($0.116) 9 pt from
    Pass@20's point (99.7 %), centre to centre, and $0.0848 at N = 100 as near Pass@10's
    (98.4 %): the eye paired each price with a Pass@k. Drawn with its limits, it is refused."""
    fig = plots.tradeoff_curve(DEPTH, ["Pass@5", "Pass@10", "Pass@20"], "$", "N")
    quality, price = fig.axes
    quality.set_ylim(93.07, 100.33)  # as the committed figure had them
    price.set_ylim(0, 0.12129)
    assert problems(fig) == [f"a point of {metric!r} sits less than 8 pt from a point of '$' "
                             "of the twin axes (untitled axes)"
                             for metric in ("Pass@5", "Pass@10", "Pass@20")]


@pytest.mark.parametrize("table, metrics, right", [
    (BY_K, ["Pass@k", "cites golden %", "answered %"], "$ / query (projected)"),
    (DEPTH, ["Pass@5", "Pass@10", "Pass@20"], "$")])
def test_a_price_on_the_right_axis_stands_apart_from_every_quality_point(table, metrics, right):
    """Notebook 04 drew Pass@k at k = 20 (99.7 %) and its price ($0.00758) as one dot: the
    right axis reaches higher until each price point stands 8 pt clear of the quality points."""
    fig = plots.tradeoff_curve(table, metrics, right, "k")
    quality, price = fig.axes
    dot = fig.dpi / 72  # pixels per point of marker size
    price_line = price.lines[0]
    at = price.transData.transform(price_line.get_xydata())
    for line in quality.lines:
        xy = quality.transData.transform(line.get_xydata())
        gap = np.linalg.norm(xy[:, None] - at[None], axis=2).min()
        clear = (line.get_markersize() + price_line.get_markersize()) / 2 + 8.0  # pt apart
        assert gap > clear * dot, line.get_label()


def test_cost_bars_reach_up_the_axis_and_show_their_dollars():
    fig = plots.metric_bars(METHODS, ("$/query", "$/query uncached"), ylabel="USD")
    ax = fig.axes[0]
    assert ax.get_ylim()[1] == pytest.approx(0.0698 * plots.HEADROOM * 1.15)  # labels upright
    assert {t.get_rotation() for t in ax.texts} == {90.0}
    labels = [t.get_text() for t in ax.texts]
    # as tables write dollars: $0.0698 read "0.07", $0.00306 "0.0031"
    assert labels[:5] == ["$0.00310", "$0.00120", "$0.00370", "$0.00950", "$0.00600"]
    assert "$0.0698" in labels


def test_the_cost_bars_legend_says_which_cost_is_cached():
    """Notebook 07's legend read "$/query" beside "$/query uncached": the first is the cost
    with long context's prefix read from the cache, which only the table's next section
    said. A legend may name a metric other than by its column."""
    legend = {"$/query": "$/query cached", "$/query uncached": "$/query uncached"}
    fig = plots.metric_bars(METHODS, ("$/query", "$/query uncached"), ylabel="USD",
                            legend=legend)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["$/query cached",
                                                                  "$/query uncached"]
    plain = plots.metric_bars(METHODS, ("$/query", "$/query uncached"), ylabel="USD")
    assert [t.get_text() for t in plain.legends[0].get_texts()] == ["$/query",
                                                                   "$/query uncached"]
    notebook = json.loads((Path(__file__).resolve().parent.parent / "notebooks" /
                           "07_rag_vs_long_context.ipynb").read_text())
    assert any("legend={\"$/query\": \"$/query cached\"" in "".join(cell["source"])
               for cell in notebook["cells"])


@pytest.mark.parametrize("metrics", [("$/query", "$/query uncached"), ("accuracy %",)])
def test_long_category_labels_break_before_their_parenthesis_and_read_whole(metrics):
    """Notebook 07's cost bars wrapped their methods at spaces: "fixed RAG (top / 5)",
    "agentic (loop / of notebook / 05)". A long label breaks before its parenthesis (its
    legend goes below the axes when the labels need the room), each part whole."""
    ax = plots.metric_bars(METHODS, metrics).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert [label.replace("\n(", " (") for label in labels] == list(METHODS.index)
    assert labels[-1] == "agentic\n(loop of notebook 05)"
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {0.0}


@pytest.mark.parametrize("metric", ["accuracy %", "calls"])
def test_a_long_qualifier_breaks_after_its_comma_not_mid_phrase(metric):
    """Notebook 06's methods wrapped at spaces into "CRAG (judge / prompts, stand-in)" and
    "Self-RAG (offline / rules)": the name, then its qualifier, each phrase whole."""
    ax = plots.metric_bars(CRAG_RUNS, (metric,), ylabel=metric).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "plain RAG", "CRAG\n(offline evaluator)", "CRAG\n(judge prompts,\nstand-in)",
        "Self-RAG\n(offline rules)", "Self-RAG\n(judge prompts,\nstand-in)"]
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {0.0}


def test_bar_labels_keep_the_decimal_that_tells_99_7_from_100():
    table = pd.DataFrame({"Pass@5": [94.8, 87.7], "Pass@20": [99.7, 100.0]},
                         index=["rerank", "no rerank"])
    ax = plots.metric_bars(table, ("Pass@5", "Pass@20")).axes[0]
    assert [t.get_text() for t in ax.texts] == ["94.8", "87.7", "99.7", "100.0"]


def _draws(node: ast.FunctionDef, local: dict[str, ast.FunctionDef], seen=()) -> bool:
    """Whether a function creates a figure (plt.subplots/plt.figure, or matplotlib's
    `Figure(...)` without pyplot, as a sweep's figure is drawn), itself or through a function
    of its own module that is not itself `checked`."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        name = getattr(call.func, "attr", None) or getattr(call.func, "id", None)
        if name in ("subplots", "figure") and getattr(call.func, "value", None) is not None \
                and getattr(call.func.value, "id", "") == "plt":
            return True
        if isinstance(call.func, ast.Name) and name == "Figure":
            return True
        if name in local and name not in seen and not _checked(local[name]) and \
                _draws(local[name], local, (*seen, name)):
            return True
    return False


def _checked(node: ast.FunctionDef) -> bool:
    return any(getattr(d, "id", None) == "checked" for d in node.decorator_list)


def test_every_function_in_ragkit_that_draws_a_figure_is_checked():
    importlib.import_module("ragkit.plots"), trace, views
    drawing = []
    for path in sorted((ROOT / "ragkit").rglob("*.py")):
        tree = ast.parse(path.read_text())
        local = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for name, node in local.items():
            if not name.startswith("_") and _draws(node, local):
                drawing.append(f"{module}.{name}")
    assert len(drawing) >= 8, drawing
    assert "ragkit.sweep_plots.parameter_figure" in drawing  # matplotlib's Figure, no pyplot
    for name in drawing:
        importlib.import_module(name.rsplit(".", 1)[0])
    assert sorted(set(drawing) - CHECKED) == []


def test_bars_below_zero_stay_in_view():
    savings = pd.DataFrame({"saving %": [-9.7, 52.4]}, index=["3 file tools", "6 tools"])
    low, high = plots.metric_bars(savings, ("saving %",), ylabel="%").axes[0].get_ylim()
    assert low == pytest.approx(-9.7 * plots.HEADROOM)
    assert high == pytest.approx(52.4 * plots.HEADROOM)


def test_a_sweep_marks_a_default_it_did_not_pick_as_the_default_above_every_line():
    """Notebook 03 marks RRF's default k = 60 while dev's best k is 5: the mark must not say
    "chosen", and its label sits in headroom above the highest line."""
    fig = plots.rrf_k_curve(RRF_K, chosen=60, label="default")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["default 60"]
    highest = max(max(line.get_ydata()) for line in ax.get_lines() if len(line.get_ydata()) > 2)
    assert ax.get_ylim()[1] > highest + 0.05 * (ax.get_ylim()[1] - ax.get_ylim()[0])
    assert [t.get_text() for t in plots.rrf_k_curve(RRF_K, chosen=5).axes[0].texts] == \
        ["chosen 5"]


def test_ladder_bars_label_no_reduction_from_no_failures_and_an_increase_as_more():
    """A first rung with no failures left its reductions NaN: the bars read "−nan%"; a rung
    with more failures read "−-300%". Now no percentage, and "300% higher" for an increase
    (in words, as the table's "reduction %" of -300.0 reads); the table shows the NaN cells
    blank (`round_metrics`)."""
    from ragkit.evaluate import round_metrics
    from ragkit.ladder import ladder_table
    rungs = [pd.DataFrame({"Pass@5": [100.0, 100.0], "Pass@20": [p, 100.0]})
             for p in (100.0, 90.0, 100.0, 100.0)]
    table = ladder_table(dict(zip(ladder_names(), rungs)))
    fig = plots.ladder_bars(table)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels[:4] == ["0.0", "5.0", "0.0", "0.0"]
    assert not any("nan" in label for label in labels)
    assert round_metrics(table)["reduction %"].tolist() == ["", "", "", ""]
    plt.close(fig)
    table = ladder_table(dict(zip(ladder_names(), [
        pd.DataFrame({"Pass@5": [0.0] * 4, "Pass@20": p}) for p in (
            [100.0] * 3 + [95.0], [100.0, 80.0, 100.0, 100.0], [100.0] * 4, [100.0] * 4)])))
    fig = plots.ladder_bars(table)
    assert [t.get_text() for t in fig.axes[0].texts][:4] == [
        "1.2", "5.0\n300% higher", "0.0\n100% lower", "0.0\n100% lower"]  # 1.25 → 5.0 → 0
    plt.close(fig)
    # an unchanged rung reads "no change", not "0% fewer"
    assert plots._fail_label(2.9, 0.0) == plots._fail_label(2.9, -0.3) == "2.9\nno change"


def test_long_rung_names_break_after_their_commas_and_the_ladder_is_drawn():
    """Rungs qualified at length ("+ rerank (top 150 → 20, offline cross-encoder)") were
    broken before their parenthesis only, and side by side their qualifiers overlapped: the
    ladder was refused. Each phrase now reads whole on a line of its own; the article's
    rungs keep their name over their qualifier, on one line each."""
    from ragkit.ladder import Rung, ladder_table
    names = ["baseline embeddings", "+ contextual embeddings (Claude, stand-in prompts)",
             "+ contextual BM25 (hybrid, RRF k = 60)",
             "+ rerank (top 150 → 20, offline cross-encoder)"]
    runs = {name: pd.DataFrame({"Pass@5": [90.0, 100.0], "Pass@20": [p, 100.0]})
            for name, p in zip(names, (80.0, 90.0, 100.0, 100.0))}
    table = ladder_table(runs, [Rung(name, True, None) for name in names])
    ticks = plots.ladder_bars(table, title="Fail@20 per rung").axes[0].get_xticklabels()
    assert [t.get_text() for t in ticks] == [
        "baseline embeddings", "+ contextual embeddings\n(Claude,\nstand-in prompts)",
        "+ contextual BM25\n(hybrid,\nRRF k = 60)",
        "+ rerank\n(top 150 → 20,\noffline cross-encoder)"]
    assert {(t.get_rotation(), t.get_fontsize()) for t in ticks} == {(0.0, 8.0)}
    table = ladder_table(dict(zip(ladder_names(), runs.values())))
    assert [t.get_text() for t in plots.ladder_bars(table).axes[0].get_xticklabels()] == [
        "baseline embeddings", "+ contextual embeddings", "+ contextual BM25\n(hybrid)",
        "+ rerank\n(top 150 → 20)"]


def ladder_names() -> list[str]:
    from ragkit.ladder import default_rungs
    return [rung.name for rung in default_rungs()]


def test_heat_map_cells_read_as_the_tables_do_and_stand_out_on_dark_ends():
    # the map printed 16 beside prose's 15.6, in black on its dark green and red
    table = pd.DataFrame({"bm25": [12.5, 50.0], "dense": [100.0, 87.5], "queries": [9, 8]},
                         index=["lexical", "paraphrase"])
    fig = plots.kind_heatmap(table, "t")
    texts = {t.get_text(): t.get_color() for t in fig.axes[0].texts}
    assert texts == {"12.5": "white", "50.0": "black", "100.0": "white", "87.5": "white"}
    assert fig.axes[1].get_ylabel() == "Pass@20 (%)"  # the colour bar's unit, as the bars'
    plt.close(fig)


def test_dollar_signs_in_titles_and_labels_are_drawn_as_written_not_as_math(tmp_path):
    """A data folder named `d$$ata` in a title stopped notebooks 02 and 04 with matplotlib's
    ParseException; `a $x$ b` as a label was set as TeX italics."""
    table = pd.DataFrame({"Pass@5": [50.0, 60.0], "Pass@20": [70.0, 80.0]},
                         index=["a $x$ b", "c$$d"])
    fig = plots.metric_bars(table, metrics=("Pass@5", "Pass@20"), title="on d$$ata, $5 vs $10")
    heat = plots.kind_heatmap(pd.DataFrame({"BM25": [50.0, 90.0]},
                                           index=["$$x^2$$ (3)", "lexical (2)"]), title="$a$")
    for figure in (fig, heat):
        figure.savefig(tmp_path / "figure.png")  # drawn again after the function returned
        texts = [t for t in figure.findobj(plt.Text) if "$" in t.get_text()]
        assert texts and not any(t.get_parse_math() for t in texts)
        plt.close(figure)


@pytest.mark.parametrize("methods", [["BM25"],
                                     ["BM25", "dense", "hybrid (RRF)", "hybrid (0.6/0.4)"]])
def test_a_long_question_kind_is_wrapped_inside_the_heat_map(methods):
    """A kind of 150 characters ran far out of the figure: saved for the notebook it made a
    strip over 20 inches wide that the report shrank past reading."""
    kind = "comparison across quarterly reports of two companies, " + "W" * 100
    table = pd.DataFrame({m: [50.0, 90.0, 70.0] for m in methods} | {"queries": [3, 2, 4]},
                         index=[kind, "lexical", "multi-chunk"])
    fig = plots.kind_heatmap(table, title="Pass@20 by question kind (test)")
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, all that is drawn
    assert drawn.x0 >= 0 and drawn.width < 11, drawn  # no label cut off at the left
    short = plots.kind_heatmap(table.rename(index={kind: "paraphrase"}), title="x")
    assert list(short.get_size_inches()) == [1.4 * len(methods) + 2.5, 2.55]  # as before
    plt.close("all")


def test_upright_bar_labels_get_room_but_a_percentage_axis_no_tick_past_100():
    """Notebook 04's Pass@k bars (97.2 to 100.0, labels upright): the axis ran to 135 with a
    "120" tick on a percentage."""
    table = pd.DataFrame({"Pass@5": [87.7, 94.8], "Pass@10": [94.0, 98.4],
                          "Pass@20": [97.2, 100.0]}, index=["no rerank", "rerank offline"])
    ax = plots.metric_bars(table).axes[0]
    assert ax.get_ylim()[1] > 110 and max(ax.get_yticks()) == 100
    plt.close("all")


def test_a_problem_quotes_a_wrapped_title_on_one_line_as_written():
    """A sweep's warning quoted its panel's title as the layout wrapped it: "Input cost of
    each run on claude- haiku-4-5" (a line broken after the hyphen, joined with a space)."""
    from ragkit.figure_check import _title
    fig, ax = plt.subplots()
    ax.set_title("saving % · Input cost of each run on claude-\nhaiku-4-5, without and\n"
                 "with caching (source)")
    assert _title(ax) == ("saving % · Input cost of each run on claude-haiku-4-5, without "
                          "and with caching (source)")
    ax.set_title("")
    assert _title(ax) == "untitled axes"
    plt.close(fig)


def test_a_run_that_changed_a_parameter_names_it_under_each_figures_title(monkeypatch):
    """A teacher ran notebook 01 with `-p tokenizer=words`: its figure's title read as the
    default run's, and a figure copied out of the notebook could not say which run drew it."""
    from ragkit.notebook_params import CHANGED_ENV
    monkeypatch.delenv(CHANGED_ENV, raising=False)
    title = "Retrieval on the test split (no context)"
    assert plots.metric_bars(RETRIEVERS, title=title).axes[0].get_title() == title
    monkeypatch.setenv(CHANGED_ENV, json.dumps({"tokenizer": "words", "k": 30}))
    fig = plots.metric_bars(RETRIEVERS, title=title)
    assert fig.axes[0].get_title() == f"{title}\nthis run: tokenizer = 'words', k = 30"
    untitled = plots.decline_curve_plot(pd.DataFrame(
        {"answerable quoting the span %": [70.2, 63.5, 20.2],
         "unanswerable declined %": [9.1, 36.4, 63.6]}, index=[0.8, 0.85, 0.9]))
    assert untitled.axes[0].get_title() == "this run: tokenizer = 'words', k = 30"
    plt.close("all")


def test_a_papermill_run_names_its_injected_parameters_under_the_title(monkeypatch):
    """Plain papermill (`papermill 01_….ipynb out.ipynb -p tokenizer words`) sets no ragkit
    variable: the kernel's own input history holds the injected cell."""
    import types
    from ragkit.notebook_params import CHANGED_ENV
    monkeypatch.delenv(CHANGED_ENV, raising=False)
    kernel = types.ModuleType("__main__")
    kernel.In = ["", 'tokenizer = "auto"\nk = 20\n', '# Parameters\ntokenizer = "words"\n']
    kernel.tokenizer, kernel.k = "words", 20
    monkeypatch.setitem(sys.modules, "__main__", kernel)
    fig = plots.metric_bars(RETRIEVERS, title="Retrieval")
    assert fig.axes[0].get_title() == "Retrieval\nthis run: tokenizer = 'words'"
    plt.close("all")
