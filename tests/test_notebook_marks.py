"""`ragkit cookbook run -p …` marks the text cells of the notebooks it executes when a
parameter or the data is not the default: the text describes the default run. The banner at
the top said so once; a class read notebook 01's "dense … places them lowest (Pass@5 56.0,
MRR 0.484)" under a table of `chunk_size=256` where dense was 45.7 and above BM25."""
from __future__ import annotations

import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ragkit.cli import main
from ragkit.notebook_marks import NOTE

TEXTS = ["# 01 · Tiny\n\nIntro: before the parameters.", "## 1 · Data",
         "## 2 · Tuned (test split)", "Dense places them lowest (Pass@5 56.0).",
         "## 3 · Fusion\n\nThe weighted fusion wins.\nBy a point."]


def _notebook(path):
    nb = new_notebook()
    params = new_code_cell('x = 1\ndata_dir = "../data"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [new_markdown_cell(TEXTS[0]), params, new_markdown_cell(TEXTS[1]),
                new_code_cell("y = x * 2"), *map(new_markdown_cell, TEXTS[2:])]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


def _texts(out):
    cells = json.loads((out / "01_tiny.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def test_text_cells_say_they_describe_the_default_run(tmp_path, monkeypatch):
    nb = _notebook(tmp_path / "nb" / "01_tiny.ipynb")
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["cookbook", "run", "--notebook", str(nb), "--out", "same"]) == 0
    assert _texts(tmp_path / "same") == TEXTS  # the defaults: as written
    assert main(["cookbook", "run", "--notebook", str(nb), "-p", "data_dir=../data/.",
                 "--out", "same-data"]) == 0  # the same folder, written otherwise
    assert _texts(tmp_path / "same-data") == TEXTS

    assert main(["cookbook", "run", "--notebook", str(nb), "-p", "x=2", "-p",
                 "data_dir=../mine", "--out", "changed"]) == 0
    note = NOTE.format(changes="set `x = 2` and reads `mine`")
    assert note == ("> *This text describes the notebook's run with its defaults; this run "
                    "set `x = 2` and reads `mine`. Where the two differ, the tables, figures "
                    "and **Finding** lines are this run's.*")
    assert _texts(tmp_path / "changed") == [
        TEXTS[0], TEXTS[1],  # before the parameters; a bare heading
        f"## 2 · Tuned (test split)\n\n{note}",
        f"{note}\n\nDense places them lowest (Pass@5 56.0).",
        f"## 3 · Fusion\n\n{note}\n\nThe weighted fusion wins.\nBy a point."]


def test_a_check_of_the_default_question_is_recorded_only_when_it_was_asked(monkeypatch):
    """Notebook 05 asked "Where is the VAT rate defined?" recorded "cites
    orders/cancel.py:68": false, a check of the refund question's answer."""
    from ragkit.cookbook import unchanged
    from ragkit.notebook_params import CHANGED_ENV, SESSION_ENV
    monkeypatch.delenv(SESSION_ENV, raising=False)
    monkeypatch.delenv(CHANGED_ENV, raising=False)
    assert unchanged("question", "code_root")  # nbval, a plain kernel: the defaults
    monkeypatch.setenv(CHANGED_ENV, json.dumps({"question": "Where is the VAT rate defined?"}))
    assert not unchanged("question", "code_root")
    assert unchanged("max_turns")
    monkeypatch.setenv(CHANGED_ENV, "{}")  # `ragkit cookbook run` with the defaults
    assert unchanged("question", "code_root")


def test_papermills_failure_cell_is_not_marked_and_another_cookbook_set_is(tmp_path,
                                                                           monkeypatch):
    """A failed run: papermill's red "An Exception was encountered" cell got the note too.
    A run on another cookbook set (`cookbook_dir`, notebooks 02 and 04) got none."""
    nb = new_notebook()
    params = new_code_cell('cookbook_dir = "../cookbook"\nx = 1')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, new_markdown_cell("## 1 · Data (test split)"),
                new_code_cell("assert x == 1, 'x changed'")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "nb" / "01_tiny.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    monkeypatch.chdir(tmp_path)
    assert main(["cookbook", "run", "--notebook", str(path), "-p", "x=2", "--out", "failed"]
                ) == 2
    cells = json.loads((tmp_path / "failed" / "01_tiny.ipynb").read_text())["cells"]
    texts = {"".join(c["source"]): c["metadata"].get("tags", []) for c in cells
             if c["cell_type"] == "markdown"}
    failure = [text for text, tags in texts.items() if "papermill-error-cell-tag" in tags]
    assert failure and all("This text describes" not in text for text in failure)
    assert "## 1 · Data (test split)\n\n" + NOTE.format(changes="set `x = 2`") in texts
    assert main(["cookbook", "run", "--notebook", str(path), "-p", "cookbook_dir=/elsewhere",
                 "--out", "other"]) == 0
    assert _texts(tmp_path / "other") == [
        "## 1 · Data (test split)\n\n" + NOTE.format(changes="reads `elsewhere`")]
