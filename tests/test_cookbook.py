"""Papermill run / sweep / refresh on a tiny notebook (a real kernel, a few seconds each)."""
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from ragkit.cookbook import refresh, run_cookbook, sweep
from ragkit.documents import RagkitError


def _notebook(path, body="record('double', x * 2)"):
    nb = new_notebook()
    params = new_code_cell("x = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, new_code_cell(
        "import pandas as pd\nfrom ragkit.cookbook import record, record_metrics\n"
        "record_metrics('table', pd.DataFrame({'Pass@5': [x * 10.0]}, index=['bm25']),"
        " ('Pass@5',))\n" + body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def test_run_writes_executed_notebook_report_and_summary(tmp_path, monkeypatch):
    (tmp_path / "nb").mkdir()
    nb = _notebook(tmp_path / "nb" / "01_tiny.ipynb")
    monkeypatch.chdir(tmp_path)  # a relative --out, while the kernel runs in nb/
    report = run_cookbook("out", notebooks=[str(nb)], parameters={"x": 3})
    assert report == Path("out") / "report.html"
    assert "<h3>table</h3>" in report.read_text() and "<td>30</td>" in report.read_text()
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| 01_tiny.ipynb | ok |" in summary
    assert "| bm25 |       30 |" in summary  # 3 significant digits
    assert json.loads((tmp_path / "out" / "01_tiny.records.json").read_text())["double"] == 6


def test_sweep_tabulates_each_point(tmp_path):
    nb = _notebook(tmp_path / "01_tiny.ipynb")
    table = sweep(str(nb), tmp_path / "sweep", {"x": ["1", "2"]})
    csv = (tmp_path / "sweep" / "sweep.csv").read_text().splitlines()
    assert csv[0] == "x,bm25 Pass@5,double,error"
    assert csv[1:] == ["1,10.0,2,", "2,20.0,4,"]
    assert table.name == "sweep.md"


def test_failed_notebook_is_reported_and_raises(tmp_path):
    nb = _notebook(tmp_path / "01_bad.ipynb", body="raise ValueError('boom')")
    with pytest.raises(RagkitError, match="notebooks failed: 01_bad.ipynb"):
        run_cookbook(tmp_path / "out", notebooks=[str(nb)])
    assert "failed: PapermillExecutionError" in (tmp_path / "out" / "summary.md").read_text()


def test_refresh_rewrites_in_place_without_run_metadata(tmp_path):
    nb = _notebook(tmp_path / "01_tiny.ipynb", body="print(x + 1)")
    refresh([str(nb)])
    data = json.loads(nb.read_text())
    assert "papermill" not in data["metadata"]
    assert "".join(data["cells"][1]["outputs"][0]["text"]) == "2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["01_tiny.ipynb"]
