"""`ragkit.questions.choose`: every configuration against the default, and the sentence that
ends notebook 08 ("on this folder, use …")."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragkit.documents import RagkitError
from ragkit.questions.choose import holm, method_table, verdict


def runs_of(**passes: list[int]) -> dict[str, pd.DataFrame]:
    """Per-question tables (Pass@5 as 0/100, MRR as its 1/100) for named configurations."""
    return {name: pd.DataFrame({"Pass@5": [float(v) for v in values],
                                "MRR": [v / 100 for v in values]},
                               index=[f"q{i}" for i in range(len(values))])
            for name, values in passes.items()}


def test_holm_adjusts_in_step_down_order_and_keeps_the_given_order():
    # sorted 0.01, 0.02, 0.04 -> 3*0.01, max(0.03, 2*0.02), max(0.04, 1*0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_a_clear_winner_replaces_the_default():
    runs = runs_of(hybrid=[0] * 30 + [100] * 10, rerank=[100] * 40, bm25=[0] * 40)
    table = method_table(runs, "hybrid", n=2000)
    assert list(table.index) == ["rerank", "hybrid", "bm25"]
    assert table.loc["rerank", "Δ"] == 75.0 and table.loc["bm25", "Δ"] == -25.0
    assert table.loc["rerank", "95% CI low"] > 0 and table.loc["rerank", "Holm p"] < 0.05
    assert np.isnan(table.loc["hybrid", "p"])
    assert verdict(table).startswith("On this folder, use `rerank`: +75.0 Pass@5 over `hybrid`")
    assert verdict(table).endswith("on 40 questions.")


def test_a_gain_within_noise_keeps_the_default():
    runs = runs_of(hybrid=[100, 0, 100, 0, 100, 0], dense=[100, 100, 100, 0, 100, 0])
    table = method_table(runs, "hybrid", n=2000)
    assert table.index[0] == "dense" and table.loc["dense", "Δ"] == pytest.approx(100 / 6)
    sentence = verdict(table)
    assert sentence.startswith("On this folder, `dense` scores highest, +16.7 Pass@5 over `hybrid`")
    assert "within noise: keep `hybrid`" in sentence


def test_when_nothing_beats_the_default_it_says_so_and_names_the_best_other():
    runs = runs_of(hybrid=[100] * 5 + [0] * 5, bm25=[100] * 3 + [0] * 7)
    sentence = verdict(method_table(runs, "hybrid", n=2000))
    assert sentence.startswith("On this folder, use `hybrid`: no configuration scores a higher "
                               "Pass@5 on its 10 questions (the best other, `bm25`, -20.0 "
                               "Pass@5")


def test_a_default_that_was_not_run_is_one_clear_error():
    with pytest.raises(RagkitError, match="the default configuration 'hybrid' is not among "
                                          "those run \\(bm25\\)"):
        method_table(runs_of(bm25=[100]), "hybrid")


def test_the_gain_figure_has_a_bar_per_rival_and_a_symmetric_axis():
    import matplotlib
    matplotlib.use("Agg")
    from ragkit.plots import gain_intervals
    runs = runs_of(hybrid=[100, 0, 100, 0, 100, 0], dense=[100, 100, 100, 0, 100, 0],
                   bm25=[0, 0, 100, 0, 100, 0])
    figure = gain_intervals(method_table(runs, "hybrid", n=2000), title="gains")
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_yticklabels()] == ["dense", "bm25"]
    assert sorted(round(p.get_width(), 1) for p in axes.patches) == [-16.7, 16.7]
    # one colour: a gain in green beside a loss in grey was read as "significant" (notebook 08)
    assert len({p.get_facecolor() for p in axes.patches}) == 1
    low, high = axes.get_xlim()
    assert low == -high and high >= 100 / 3  # the widest whisker (dense: up to +33.3) in view
    assert axes.get_xlabel() == "Pass@5 minus hybrid's (95 % bootstrap interval)"


def test_the_gain_figure_fits_differences_in_mrr():
    """metric="MRR" (differences of a few hundredths): the axis was at least -1.1 … 1.1 and
    notebook 08 stopped on UnreadableFigure ("the data reach 17.9% of the x axis")."""
    import matplotlib
    matplotlib.use("Agg")
    from ragkit.plots import gain_intervals
    runs = runs_of(hybrid=[100, 0, 100, 0, 100, 0], dense=[100, 100, 100, 0, 100, 0],
                   bm25=[0, 0, 100, 0, 100, 0])
    table = method_table(runs, "hybrid", metric="MRR", n=2000)
    axes = gain_intervals(table, title="gains").axes[0]
    widest = float(table[["95% CI low", "95% CI high"]].abs().max().max())
    low, high = axes.get_xlim()
    assert low == -high and widest <= high <= 1.1 * widest + 1e-9
    assert axes.get_xlabel() == "MRR minus hybrid's (95 % bootstrap interval)"


def test_with_metric_mrr_the_verdict_and_the_table_show_its_thousandths():
    """metric="MRR": bm25's 0.844 against hybrid's 0.837 read "+0.0 MRR over hybrid (95 % CI
    -0.1 … +0.1", and the table's Δ column showed 0.0 and -0.0."""
    from ragkit.evaluate import round_metrics
    runs = runs_of(hybrid=[100, 0, 100, 0, 100, 0], dense=[100, 100, 100, 0, 100, 0])
    runs["dense"]["MRR"] = [1.0, 0.5, 1.0, 0.0, 1.0, 0.0]  # 0.583 against hybrid's 0.500
    table = method_table(runs, "hybrid", metric="MRR", n=2000)
    row = table.loc["dense"]
    assert row["Δ"] == pytest.approx(1 / 12)
    assert verdict(table).startswith(
        f"On this folder, `dense` scores highest, +0.083 MRR over `hybrid` (95 % CI "
        f"{row['95% CI low']:+.3f} … {row['95% CI high']:+.3f}, p = ")
    shown = round_metrics(table)
    assert shown.loc["dense", "Δ"] == 0.083 and shown.loc["hybrid", "95% CI low"] == ""
    assert shown.loc["dense", "95% CI high"] == f"{row['95% CI high']:.3f}"
    passes = round_metrics(method_table(runs, "hybrid", n=2000))  # Pass@5: one decimal
    assert passes.loc["dense", "Δ"] == 16.7


def test_when_every_configuration_ties_the_gain_figure_says_so_instead_of_failing():
    # a handful of easy questions: every rival scores exactly as the default does, so every
    # difference and interval is 0 -- the figure says that in words (it used to raise
    # UnreadableFigure: "the data reach 0.0% of the x axis"), and so does the verdict
    import matplotlib
    matplotlib.use("Agg")
    from ragkit.plots import gain_intervals
    runs = runs_of(hybrid=[100] * 7, dense=[100] * 7, bm25=[100] * 7)
    table = method_table(runs, "hybrid", n=2000)
    figure = gain_intervals(table, title="gains")
    (axes,) = figure.axes
    assert not axes.axison and not axes.patches
    assert [t.get_text() for t in axes.texts] == [
        "Every configuration ties with hybrid on these 7 questions:\n"
        "each difference in Pass@5, and each interval, is 0.\n"
        "More questions, or harder ones, are needed to tell them apart."]
    assert verdict(table) == (
        "On this folder, use `hybrid`: every configuration ties with it at Pass@5 100.0 on its 7 "
        "questions, so they cannot tell the configurations apart; more questions, harder ones, "
        "or smaller chunks (chunk_size) would.")  # it named "the best other, +0.0"


def test_rivals_tied_for_the_top_are_named_together_not_one_winner():
    """Four configurations at the same Pass@5 once read as "bm25 scores highest"."""
    runs = runs_of(hybrid=[100] * 27 + [0] * 2, bm25=[100] * 28 + [0], dense=[100] * 28 + [0],
                   rerank=[100] * 27 + [0] * 2)
    sentence = verdict(method_table(runs, "hybrid", n=2000))
    assert sentence.startswith("On this folder, `bm25` and `dense` tie for the highest Pass@5, "
                               "+3.4 Pass@5 over `hybrid` for `bm25` (95 % CI +0.0 … +10.3, "
                               "p = 1.000, Holm-adjusted 1.000), but on 29 questions")
    assert sentence.endswith("within noise: keep `hybrid`, or add questions before switching.")


def test_every_configuration_name_in_the_verdict_is_set_as_code():
    """Notebook 08's finding read "bm25, hybrid + rerank, `hybrid, no context` and hybrid
    weighted_rank tie …": one name of four set as code, because it held a comma."""
    runs = runs_of(hybrid=[100] * 27 + [0] * 2, bm25=[100] * 28 + [0],
                   **{"hybrid, no context": [100] * 28 + [0], "hybrid + rerank": [100] * 28 + [0]})
    assert verdict(method_table(runs, "hybrid", n=2000)).startswith(
        "On this folder, `bm25`, `hybrid, no context` and `hybrid + rerank` tie for the highest "
        "Pass@5, +3.4 Pass@5 over `hybrid` for `bm25` (95 % CI")


def test_with_metric_mrr_the_reports_table_shows_the_differences_thousandths():
    """notebook 08 with metric=MRR: report.html's table formatted Δ and its interval by the
    caption's "95 %" and read 0.1, 0.0 and -0.0 where the notebook showed 0.083."""
    import re

    from ragkit.record import table_json
    from ragkit.report_tables import table_html
    runs = runs_of(hybrid=[100, 0, 100, 0, 100, 0], dense=[100, 100, 100, 0, 100, 0])
    runs["dense"]["MRR"] = [1.0, 0.5, 1.0, 0.0, 1.0, 0.0]  # 0.583 against hybrid's 0.500
    table = method_table(runs, "hybrid", metric="MRR", n=2000)
    caption = "Every configuration against hybrid on docs: difference in MRR, 95 % interval"
    page = table_html(table_json(table, caption, ("MRR", "MRR")), "Table 1")
    cells = dict(zip(["name", *map(str, table.columns)],
                     re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>",
                                page.split("<tbody>")[1].split("</tr>")[0])))
    row = table.loc["dense"]
    assert cells["name"] == "dense" and cells["Δ"] == "0.083"
    assert cells["95% CI low"] == f"{row['95% CI low']:.3f}"
    assert cells["95% CI high"] == f"{row['95% CI high']:.3f}"
    passes = method_table(runs, "hybrid", n=2000)  # Pass@5: points, one decimal as before
    assert ">16.7<" in table_html(table_json(passes, caption.replace("MRR", "Pass@5")), "T")
