"""`ragkit cookbook run` on two tiny notebooks, one of which fails: results.json and its
schema, the report's sections, summary.md. Two notebook executions, shared by every test."""
import json
import re

import jsonschema
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ragkit.cli import main
from ragkit.report import cell_text, number_format
from ragkit.results import SCHEMA, validate

INTRO = """# 01 · Tiny retrieval

An introduction that the report leaves out.

What you will learn:

- how **BM25** compares with `dense`,
  on two questions;
- what a ladder looks like.

More prose."""
TABLES = """import pandas as pd
import matplotlib.pyplot as plt
from ragkit.cookbook import finding, record, record_metrics
table = pd.DataFrame({"Pass@5": [x * 10.0, 50.0], "MRR": [0.5, 1 / 3]}, index=["bm25", "dense"])
record_metrics("retrieval", table, ("Pass@5", "MRR"), caption="Two retrievers")
ladder = pd.DataFrame({"Pass@20": [80.0, 90.0], "Fail@20": [20.0, 10.0],
                       "reduction %": [0.0, 50.0], "article Fail@20": [5.7, 3.7],
                       "article reduction %": [0.0, 35.08772]},
                      index=["baseline embeddings", "+ contextual embeddings"])
record_metrics("ladder_tiny", ladder, ("Fail@20",), caption="The tiny ladder")
record("cost", pd.DataFrame({"cached $": [1.0234], "per call $": [0.011546]}, index=["haiku"]),
       caption="Cost in $")
band = pd.DataFrame({"Pass@5": [30.0], "95% low": [12.5]}, index=["bm25"])
record("intervals", pd.concat({"Pass@5": band}, axis=1), caption="With its interval")
finding(f"x was {x}; <b>BM25</b> wins")"""
FIGURE = "# Figure: Pass@5 against nothing\nplt.plot([1, 2], [3, 4])\nplt.show()"


def _write(path, cells, params):
    nb = new_notebook()
    first = new_code_cell(params)
    first.metadata["tags"] = ["parameters"]
    nb.cells = [cells[0], first, *cells[1:]]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("hello")
    ok = _write(root / "01_tiny.ipynb", [new_markdown_cell(INTRO), new_code_cell(TABLES),
                                         new_code_cell(FIGURE)], 'x = 1\ndata_dir = "data"')
    broken = _write(root / "02_broken.ipynb",
                    [new_markdown_cell("# 02 · Broken\n\nNo list here."),
                     new_code_cell("print('before')"), new_code_cell("ratio = 1 / y")], "y = 2")
    code = main(["cookbook", "run", "--notebook", str(ok), "--notebook", str(broken),
                 "-p", "x=3", "-p", "y=0", "--out", str(root / "out")])
    return code, root / "out"


def test_a_failed_notebook_exits_2_and_the_others_still_run(run):
    code, out = run
    assert code == 2
    assert {"01_tiny.ipynb", "02_broken.ipynb", "results.json", "report.html",
            "summary.md"} <= {p.name for p in out.iterdir()}


def test_results_json_follows_its_schema_with_the_recorded_values(run):
    doc = json.loads((run[1] / "results.json").read_text())
    validate(doc)
    tiny, broken = doc["notebooks"]
    assert tiny["status"] == "ok" and broken["status"] == "failed"
    assert tiny["parameters"] == {"x": 3, "data_dir": "data"}
    assert tiny["overridden"] == ["x"] and broken["parameters"] == {"y": 0}
    assert tiny["numbers"] == {"bm25 Pass@5": 30.0, "bm25 MRR": 0.5, "dense Pass@5": 50.0,
                               "dense MRR": 1 / 3, "baseline embeddings Fail@20": 20.0,
                               "+ contextual embeddings Fail@20": 10.0}
    assert tiny["tables"]["retrieval"]["data"] == [[30.0, 0.5], [50.0, 1 / 3]]
    assert tiny["tables"]["cost"]["caption"] == "Cost in $"
    assert tiny["tables"]["cost"]["data"] == [[1.0234, 0.011546]]  # stored exact
    assert tiny["tables"]["intervals"]["columns"] == ["Pass@5", "Pass@5 · 95% low"]
    assert tiny["tables"]["intervals"]["column_levels"] == [["Pass@5", "Pass@5"],
                                                            ["Pass@5", "95% low"]]
    assert tiny["finding"] == "x was 3; <b>BM25</b> wins"
    assert tiny["title"] == "01 · Tiny retrieval"
    assert tiny["learn"] == ["how **BM25** compares with `dense`, on two questions;",
                             "what a ladder looks like."]
    # the cell index in the executed notebook, after papermill's injected parameters cell
    assert tiny["figures"] == [{"cell": 4, "caption": "Pass@5 against nothing"}]
    # papermill injects its parameters cell: the failing cell is In [4]
    assert broken["error"]["line"] == "cell In [4]: ZeroDivisionError: division by zero"
    assert broken["error"]["source"] == "ratio = 1 / y"
    assert broken["finding"] is None and broken["learn"] == []
    run_ = doc["run"]
    assert run_["cpu_count"] >= 1 and run_["backends"]["anthropic"] in ("online", "offline")
    assert run_["packages"]["papermill"] and run_["packages"]["jupyterlab"]
    data = run_["datasets"]
    assert len(data) == 1 and next(iter(data.values()))["files"] == 1
    assert tiny["datasets"] == list(data)


def test_the_schema_refuses_a_broken_document(run):
    doc = json.loads((run[1] / "results.json").read_text())
    doc["notebooks"][0]["status"] = "done"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)
    del doc["run"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)


def test_report_opens_with_the_headline_then_one_section_per_notebook(run):
    page = (run[1] / "report.html").read_text()
    order = [page.index(s) for s in ("id='headline'", "id='nb-01'", "id='nb-02'",
                                     "id='environment'")]
    assert order == sorted(order)
    headline = page[order[0]:order[1]]
    assert "1 of 2 notebooks failed: 02_broken.ipynb" in headline
    assert "<b>01 · tiny</b>: The tiny ladder" in headline
    assert "Anthropic&#x27;s article" in headline
    ladder_row = re.search(r"<tr><th>\+ contextual embeddings</th>(.*?)</tr>", headline)[1]
    assert re.findall(r"<td class='num'>(.*?)</td>", ladder_row) == ["10.0", "50.0 %", "3.7",
                                                                     "35.1 %"]
    assert "x was 3; &lt;b&gt;BM25&lt;/b&gt; wins" in headline  # a finding's HTML is text
    assert "failed at cell In [4]: ZeroDivisionError: division by zero</span>" in headline
    assert "<script" not in page and "src='http" not in page  # self-contained


def test_notebook_section_has_title_learn_params_tables_figures_link(run):
    page = (run[1] / "report.html").read_text()
    tiny = page[page.index("id='nb-01'"):page.index("id='nb-02'")]
    assert "<h2>01 · Tiny retrieval</h2>" in tiny
    assert "<li>how <strong>BM25</strong> compares with <code>dense</code>, on two questions;" \
        in tiny and "introduction" not in tiny
    assert ("<tr><th><code>x</code></th><td><code>3</code></td><td>set for this run</td>"
            in tiny)
    assert "<figcaption><b>Table 01.1.</b> Two retrievers</figcaption>" in tiny
    assert "<td class='num'>30.0</td><td class='num'>0.500</td>" in tiny  # Pass 1, MRR 3 dp
    assert "<td class='num'>0.333</td>" in tiny
    # dollars: 3 significant digits, so a cent's fraction still shows
    assert "<td class='num'>$1.02</td><td class='num'>$0.0115</td>" in tiny
    # a two-level header recorded in the kernel comes back as two header rows, no tuples
    assert ("<tr><th rowspan='2'></th><th class='num' colspan='2'>Pass@5</th></tr><tr>"
            "<th class='num'>Pass@5</th><th class='num'>95% low</th></tr>") in tiny
    assert "('" not in tiny and "&#x27;Pass@5" not in tiny
    assert re.search(r"<img alt='Pass@5 against nothing' src='data:image/png;base64,iVBOR", tiny)
    assert "<b>Figure 01.1.</b> Pass@5 against nothing" in tiny
    assert "<a href='01_tiny.ipynb'>executed notebook</a>" in tiny


def test_failed_notebook_section_shows_the_cell_and_its_error(run):
    page = (run[1] / "report.html").read_text()
    broken = page[page.index("id='nb-02'"):page.index("id='environment'")]
    assert "failed at cell In [4]: ZeroDivisionError: division by zero" in broken
    assert "<pre>ratio = 1 / y</pre>" in broken
    assert "ZeroDivisionError" in broken.split("<pre>")[2]  # the traceback


def test_summary_md_mirrors_the_headline(run):
    lines = (run[1] / "summary.md").read_text().splitlines()
    assert lines[0] == "# ragkit cookbook summary"
    assert "| 01_tiny.ipynb | ok |" in lines[6] and lines[6].endswith(
        "| x was 3; <b>BM25</b> wins |")
    assert lines[7].startswith("| 02_broken.ipynb | failed: cell In [4]: ZeroDivisionError: "
                               "division by zero |")
    assert "| + contextual embeddings | 10.0 | 50.0 | 3.7 | 35.1 |" in lines


@pytest.mark.parametrize("column, caption, value, text", [
    ("Pass@20", "", 73.4234, "73.4"), ("MRR", "", 0.54321, "0.543"),
    ("nDCG@10", "", 0.5, "0.500"), ("reduction %", "", 49.12, "49.1"),
    ("BM25", "Pass@20 by question kind", 100.0, "100.0"), ("cached", "in $", 3.8412, "$3.84"),
    ("$ with cache", "", 0.01094, "$0.0109"), ("$/query", "", 0.0031, "$0.00310"),
    # a price per million tokens is dollars, not a token count (it printed 0 for $0.496)
    ("cached $/M doc tokens", "", 0.496, "$0.496"), ("$/M tokens", "", 1.4625, "$1.46"),
    ("documents", "in $", 131, "131"),
    ("queries", "", 12, "12"), ("tokens", "", 123456.7, "123,457"), ("x", "", 0.012345, "0.0123"),
    ("Pass@5", "", None, "–"), ("Pass@5", "", float("nan"), "–"), ("kind", "", "code", "code"),
    # p-values keep 3 decimals whatever the caption says (a "95 %" caption once made 0.126 "0.1")
    ("p", "Pass@5 against hybrid: 95 % interval, paired test", 0.12618738, "0.126"),
    ("Holm p", "95 % interval, Holm-adjusted p", 0.04, "0.040"), ("Holm p", "", 1.0, "1.000"),
])
def test_numbers_are_rounded_by_what_they_measure(column, caption, value, text):
    assert cell_text(value, number_format(column, caption)) == text


def _ladder(rows: list[tuple[str, float, float]]) -> dict:
    """A recorded ladder table: (rung, reduction %, article reduction %) per row."""
    return {"index": [r[0] for r in rows], "caption": "",
            "columns": ["Fail@20", "reduction %", "article Fail@20", "article reduction %"],
            "data": [[10.0, r[1], 3.0, r[2]] for r in rows]}


def test_the_headline_ladder_leads_with_the_cookbook_and_says_why_shipped_overstates():
    from ragkit.report import headline_html, ladder_rows, overstatement, summary_md
    rows = [("baseline embeddings", 0.0, 0.0), ("+ contextual BM25 (hybrid)", 95.9, 49.12)]
    nb = {"name": "02_contextual_retrieval.ipynb", "title": "02", "status": "ok",
          "error": None, "finding": "", "seconds": 1.0,
          "tables": {"ladder_shipped": _ladder(rows),
                     "ladder_cookbook": _ladder([("baseline embeddings", 0.0, 0.0),
                                                 ("+ contextual BM25 (hybrid)", 50.6, 49.12)])}}
    document = {"notebooks": [nb]}
    assert ladder_rows(document)[0] == ["02 · cookbook", "02 · shipped", "Anthropic's article"]
    note = ("The shipped data's column overstates the article's effect: its answers' company, "
            "quarter and product names sit in titles and front matter, so any context recovers "
            "them — 96 % fewer failures at “+ contextual BM25 (hybrid)” against the article's "
            "49 %; on the public cookbook set the same rung gives 51 %.")
    assert overstatement(document) == note
    assert "49 %; on the public cookbook set" in headline_html(document)
    del nb["tables"]["ladder_shipped"]
    assert overstatement(document) == ""  # nothing to say without the shipped column


def test_the_headline_counts_a_folders_failed_questions_and_says_when_too_few_to_reduce():
    """Notebook 08's column of the headline read "2.4" then "7.1, -200.0 %" and nothing
    more: 1 failed question of 42 become 3. A ladder recorded with its counts shows them
    beside Fail@20, and a line under the table says its reduction means little."""
    import pandas as pd

    from ragkit.ladder import default_rungs, ladder_table
    from ragkit.record import table_json
    from ragkit.report import headline_html, summary_md
    rungs = default_rungs(rerank="offline")
    runs = {rung.name: pd.DataFrame({"Pass@5": [100.0] * (42 - n) + [0.0] * n,
                                     "Pass@20": [100.0] * (42 - n) + [0.0] * n})
            for rung, n in zip(rungs, (1, 3, 0, 0))}
    nb = {"name": "08_your_own_documents.ipynb", "title": "08", "status": "ok",
          "error": None, "finding": "", "seconds": 1.0, "parameters": {},
          "tables": {"ladder_your_folder": table_json(
              ladder_table(runs, rungs, counts=True), "The ladder on the sample folder")}}
    document = {"notebooks": [nb]}
    cells = re.findall(r"<td class='num'>([^<]*)</td>", headline_html(document))
    assert cells[:4] == ["2.4 (1 question failed)", "0.0 %", "5.7", "0.0 %"]
    assert cells[4:6] == ["7.1 (3 questions failed)", "-200.0 %"]
    note = ("08 · the PDF, HTML and Word sample: the first rung fails 1 question, too few "
            "for a relative "
            "reduction to mean anything: one question more or less moves it by 100 %; read "
            "its failed questions, not its reduction.")
    assert f"<p>{note}</p>" in headline_html(document)
    run = {"started": "2026-12-02T10:00:00+00:00", "ragkit": "0.1.0", "python": "3.11",
           "git": {"commit": None, "dirty": None}, "cpu_count": 2, "backends": {},
           "seconds": 1.0}
    text = summary_md({"run": run, **document})
    assert "| + contextual embeddings | 7.1 (3 questions failed) | -200.0 | 3.7 | 35.1 |" in text
    assert text.endswith(note + "\n")
    # any other folder by its name, as notebook 08's captions name it ("your folder" before)
    nb["parameters"] = {"docs_dir": "/home/me/manuals"}
    assert "<p>08 · manuals: the first rung fails 1 question" in headline_html(document)


def test_notebook_05_records_the_hashes_of_its_corpus_and_code_folders():
    """Notebook 05 reads `corpus_root` and `code_root`; a run records both folders' hashes
    as it does every `*_dir` notebook's data."""
    from ragkit.cookbook import notebook_paths
    from ragkit.notebook_params import effective_parameters
    from ragkit.results import datasets_of
    (notebook,) = notebook_paths(["05"])
    found = datasets_of(notebook, effective_parameters(notebook, {}))
    assert sorted(found) == ["data/corpus", "data/corpus/code/shopcore"]
    assert all(path.is_dir() for path in found.values())


def test_an_error_or_finding_quoting_the_datas_escape_sequences_reaches_no_terminal():
    """A golden file's doc id "\\x1b]0;…\\x07\\x1b[2J" in a failing cell's error cleared the
    screen from the run's stderr line and from `cat summary.md`; so did a folder name holding
    an escape in a finding."""
    from papermill.exceptions import PapermillExecutionError

    from ragkit.notebook_runner import _failure
    from ragkit.report import summary_md
    hostile = "no document '\x1b]0;title\x07\x1b[2J\u202emissing.md'"
    cell = _failure(PapermillExecutionError(3, 4, "load()", "RagkitError", hostile, []))
    other = _failure(RuntimeError(hostile))
    for failure in (cell, other):
        assert "\x1b" not in failure["line"] and "\u202e" not in failure["line"]
        assert "\\x1b]0;title\\x07\\x1b[2J\\u202emissing.md" in failure["line"]
    assert cell["evalue"] == hostile  # results.json keeps the exact error
    run = {"started": "2026-12-02T10:00:00+00:00", "ragkit": "0.1.0", "python": "3.11",
           "git": {"commit": None, "dirty": None}, "cpu_count": 2, "backends": {},
           "seconds": 1.0}
    notebook = {"name": "01_a.ipynb", "error": None, "seconds": 1.0, "tables": {},
                "finding": "Pass@20 100.0 on the data\x1b[8m hidden split"}
    text = summary_md({"run": run, "notebooks": [notebook, dict(notebook, error=cell)]})
    assert "\x1b" not in text and "data\\x1b[8m hidden" in text


def test_a_report_cell_rounds_as_the_notebooks_table_does():
    """Notebook 03 with `-p split=dev -p tune_split=test`: a "chosen %" of 0.05 showed 0.0
    in the notebook (`round_metrics`, numpy's rounding) and 0.1 in report.html."""
    import pandas as pd

    from ragkit import round_metrics
    from ragkit.report_tables import cell_text
    values = [0.05, 0.15, 0.25, 2.675, 87.65, 12345.25]
    shown = round_metrics(pd.DataFrame({"chosen %": values}))["chosen %"]
    assert [cell_text(v, ".1f") for v in values] == [f"{v:,.1f}" for v in shown] == [
        "0.0", "0.2", "0.2", "2.7", "87.6", "12,345.2"]
    assert [cell_text(v, ".1f") for v in (-0.04, 1e308)] == ["0.0", f"{1e308:,.1f}"]
