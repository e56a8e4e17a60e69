"""The figures of `ragkit cookbook sweep` (`ragkit.sweep.parameter_figure`, one per swept
parameter) pass the notebooks' readability check (`ragkit.figure_check.problems`) on the
numbers real sweeps recorded: every series in sight, the data filling their axes."""
import matplotlib

matplotlib.use("Agg")

import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from nbformat.v4 import new_code_cell, new_notebook  # noqa: E402

from ragkit.cli import main  # noqa: E402
from ragkit.figure_check import problems  # noqa: E402
from ragkit.sweep import metric_panels, parameter_figure  # noqa: E402

# notebook 03's BM25 chunkings (chunk size / overlap), Pass@5, swept over split=dev,test
CHUNKINGS = {"256/0": [76.44, 82.18], "256/32": [74.52, 77.99], "256/51": [72.12, 77.36],
             "512/0": [77.40, 83.75], "512/64": [81.73, 83.12], "512/102": [78.37, 81.87],
             "1024/0": [89.90, 91.61], "1024/128": [87.98, 86.16], "1024/205": [87.98, 86.27]}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_every_series_of_nine_keeps_a_style_of_its_own_and_none_is_hidden():
    """Styles came in a cycle of five: the sixth chunking (BM25 512/102, 81.87 on test) was
    drawn as the first (BM25 256/0, 82.18), marker for marker, and hid it."""
    table = pd.DataFrame({"split": ["dev", "test"]} |
                         {f"BM25 {name} Pass@5": values for name, values in CHUNKINGS.items()})
    panels = {"Pass@5 · chunking_bm25": [f"BM25 {name} Pass@5" for name in CHUNKINGS]}
    fig = parameter_figure(table, "split", panels)
    assert problems(fig) == []
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == [f"BM25 {name}" for name in CHUNKINGS]
    assert [line.get_marker() for line in lines] == ["o", "s", "^", "D", "v", "P", "X", "<",
                                                     ">"]
    assert [line.get_linestyle() for line in lines] == ["-", "--", "-.", ":", "--", "-", "--",
                                                        "-.", ":"]
    sizes = [line.get_markersize() for line in lines]
    assert sizes[0] == 10.0 and sizes[-1] == 3.0
    assert all(a > b for a, b in zip(sizes, sizes[1:]))  # each drawn over a larger one


def test_close_numbers_fill_their_axis():
    """Notebook 04 swept over rerank_candidates=50,150: MRR 0.8096 without the reranker and
    0.8147 / 0.8143 with it sat under and over a margin of 0.02 each (a ninth of the axis);
    the numbers now span a quarter of it at least, their spread 1.5 times under and over."""
    table = pd.DataFrame({"rerank_candidates": [50, 150], "no rerank Pass@5": [87.74, 87.74],
                          "rerank offline Pass@5": [93.87, 94.81],
                          "no rerank MRR": [0.80963, 0.80963],
                          "rerank offline MRR": [0.81473, 0.81431]})
    caption = "Hybrid with and without the offline reranker, shipped test split"
    panels = {f"{metric} · {caption}": [f"no rerank {metric}", f"rerank offline {metric}"]
              for metric in ("Pass@5", "MRR")}
    fig = parameter_figure(table, "rerank_candidates", panels)
    assert problems(fig) == []
    passes, mrr = fig.axes
    assert passes.get_ylim() == pytest.approx((87.74 - 2, 94.81 + 2))  # 2 % of 100, as before
    spread = 0.81473 - 0.80963
    assert mrr.get_ylim() == pytest.approx((0.80963 - 1.5 * spread, 0.81473 + 1.5 * spread))


def test_a_rank_measure_keeps_its_scale_when_the_caption_names_a_percentage():
    """Notebook 08 swept over seed=0,1: its MRR panel, captioned "Every configuration against
    hybrid …: difference in Pass@5, …", was scaled as a percentage (0 … 2.86), every MRR
    squeezed into a flat band at the foot of the axis."""
    table = pd.DataFrame({"seed": [0, 1], "bm25 MRR": [0.844246, 0.862103],
                          "dense MRR": [0.635957, 0.606506]})
    caption = ("Every configuration against hybrid on mixed: difference in Pass@5, 95 % "
               "interval, paired test, Holm-adjusted p")
    fig = parameter_figure(table, "seed", {f"MRR · {caption}": ["bm25 MRR", "dense MRR"]})
    assert problems(fig) == []
    spread = 0.862103 - 0.606506
    assert fig.axes[0].get_ylim() == pytest.approx((0.606506 - 0.15 * spread,
                                                     0.862103 + 0.15 * spread))


def test_doubling_chunk_sizes_stand_apart_on_a_log_axis():
    """Notebook 01 swept over chunk_size=128,256,512,1024,2048 (overlap=32): on a linear
    axis "128" ran into "256" in every panel, and the check refused the figure."""
    table = pd.DataFrame({"chunk_size": [128, 256, 512, 1024, 2048],
                          "BM25 Pass@5": [45.3, 54.4, 58.9, 73.7, 97.0],
                          "dense Pass@5": [41.8, 47.0, 56.2, 73.0, 91.8]})
    fig = parameter_figure(table, "chunk_size", {"Pass@5 · retrieval": ["BM25 Pass@5",
                                                                        "dense Pass@5"]})
    assert problems(fig) == []
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["128", "256", "512", "1024", "2048"]
    assert list(ax.get_xticks()) == [128, 256, 512, 1024, 2048]


def test_long_folder_names_wrap_and_the_legend_stays_under_them():
    """A sweep over data_dir with long folder names: the names ran into each other; wrapped
    onto two lines, a legend at a fixed distance below the axes covered them."""
    table = pd.DataFrame({"data_dir": ["data/customer-support-emails",
                                       "data/product-manuals-2024", "data/legal"],
                          "BM25 Pass@5": [61.0, 55.5, 70.2], "dense Pass@5": [58.1, 60.4, 66.0]})
    fig = parameter_figure(table, "data_dir", {"Pass@5 · retrieval": ["BM25 Pass@5",
                                                                      "dense Pass@5"]})
    assert problems(fig) == []
    (ax,) = fig.axes
    ticks = ax.get_xticklabels()
    assert [t.get_text() for t in ticks] == ["data/customer-\nsupport-emails",
                                             "data/product-\nmanuals-2024", "data/legal"]
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.y1 <= min(t.get_window_extent(renderer).y0 for t in ticks)
    assert legend.y1 <= ax.xaxis.label.get_window_extent(renderer).y0


def test_a_sweep_whose_figure_cannot_be_read_keeps_its_tables_and_says_why_in_one_line(
        tmp_path, monkeypatch, capsys):
    """x = 0, 1 and 1000 crowd "0" onto "1" on any axis (0 rules out a log one): the sweep's
    figure was drawn unreadable and unchecked. Now it is left out, sweep.md and a warning line
    say why, the tables are written whole and the sweep succeeds (its numbers are whole)."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell(
        "import pandas as pd\nfrom ragkit.cookbook import record_metrics\n"
        "record_metrics('table', pd.DataFrame({'Pass@5': [50.0 + x / 100]}, index=['bm25']),"
        " ('Pass@5',))")])
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "01_tiny.ipynb")
    out = tmp_path / "sweep"
    assert main(["cookbook", "sweep", "--notebook", str(tmp_path / "01_tiny.ipynb"),
                 "-p", "x=0,1,1000", "--out", str(out)]) == 0
    problem = ("unreadable figure: x tick labels '0' and '1' overlap (Pass@5 · table)")
    assert (f"ragkit: warning: sweep_x.png: {problem} (not drawn; the tables are in "
            f"{out / 'sweep.md'})") in capsys.readouterr().err.splitlines()
    assert (out / "sweep.csv").read_text().splitlines() == [
        "x,bm25 Pass@5,error", "0,50.0,", "1,50.01,", "1000,60.0,"]
    md = (out / "sweep.md").read_text()
    assert md.endswith(f"\n\nsweep_x.png not drawn, {problem}\n")
    assert not (out / "sweep_x.png").exists()


def test_a_panel_is_titled_by_its_metric_and_the_captions_subject_not_its_other_columns():
    """Notebook 08 swept over chunk_size: the panels of absolute Pass@5 and MRR were titled
    "… difference in Pass@5, 95 % interval, paired test, Holm-adjusted p", the Fail@20 panel
    "… Pass@k over the 5 answerable of the 6 accepted questions". The caption's subject (before
    its ": ") is the title now; two tables of one subject are told apart by their names."""
    def point(size: int) -> dict:
        return {"chunk_size": size, "numbers": {}, "tables": {
            "ladder_your_folder": {
                "caption": "The ladder on docs: Pass@k over the 5 answerable of the 6 accepted "
                           "questions",
                "metrics": ["Pass@5", "Fail@20"], "index": ["baseline", "+ rerank"]},
            "folder_configurations": {
                "caption": "Every configuration against hybrid on docs: difference in Pass@5, "
                           "95 % interval, paired test, Holm-adjusted p",
                "metrics": ["Pass@5", "MRR"], "index": ["bm25", "hybrid"]},
            "twin": {"caption": "The ladder on docs: Pass@k of another set",
                     "metrics": ["MRR"], "index": ["bm25"]}}}
    panels = metric_panels([point(128), point(256)])
    assert panels == {
        "Pass@5 · The ladder on docs (ladder_your_folder)": ["baseline Pass@5", "+ rerank Pass@5"],
        "Fail@20 · The ladder on docs (ladder_your_folder)": ["baseline Fail@20",
                                                              "+ rerank Fail@20"],
        "Pass@5 · Every configuration against hybrid on docs": ["bm25 Pass@5", "hybrid Pass@5"],
        "MRR · Every configuration against hybrid on docs": ["bm25 MRR", "hybrid MRR"],
        "MRR · The ladder on docs (twin)": ["bm25 MRR"]}
    table = pd.DataFrame({"chunk_size": [128, 256]} | {
        name: [90.0, 100.0] if "@" in name else [0.8, 0.9]
        for names in panels.values() for name in names})
    fig = parameter_figure(table, "chunk_size", panels)
    assert [ax.get_title().replace("\n", " ") for ax in fig.axes] == list(panels)


def test_a_parameter_figure_says_what_it_averages_and_which_panels_do_not_move():
    """The README's sweep of notebook 01 (chunk_size × tokenizer): BM25 at chunk 256 was
    drawn at 46.8, the mean of 41.9 (words) and 51.7 (auto), with nothing saying so; the
    Korean section, which compares both tokenizers whatever `tokenizer` is, drew level
    lines that read as "no effect"; and a Pass@20 of 100 lay on the axes' frame."""
    table = pd.DataFrame({"chunk_size": [256, 256, 512, 512],
                          "tokenizer": ["words", "auto", "words", "auto"],
                          "BM25 Pass@5": [41.9, 51.7, 50.0, 56.0],
                          "BM25 · auto Pass@20": [100.0, 100.0, 100.0, 100.0],
                          "BM25 · words Pass@20": [66.7, 66.7, 66.7, 66.7]})
    panels = {"Pass@5 · Three retrievers": ["BM25 Pass@5"],
              "Pass@20 · BM25 on the Korean test questions": ["BM25 · auto Pass@20",
                                                               "BM25 · words Pass@20"]}
    fig = parameter_figure(table, "tokenizer", panels, averaged=["chunk_size"])
    assert problems(fig) == []
    moved, level = fig.axes
    assert [y for y in moved.get_lines()[0].get_ydata()] == [pytest.approx(45.95),
                                                             pytest.approx(53.85)]
    assert moved.get_xlabel() == "tokenizer\n(each point: the mean over chunk_size)"
    assert moved.get_title() == "Pass@5 · Three retrievers"
    assert level.get_title() == ("Pass@20 · BM25 on the Korean test questions (the\n"
                                 "same at every tokenizer)")
    assert level.get_ylim()[1] > 100 and max(level.get_yticks()) == 100
    alone = parameter_figure(table, "chunk_size", panels)  # nothing else swept
    assert alone.axes[0].get_xlabel() == "chunk_size"
