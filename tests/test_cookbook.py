"""Papermill run / sweep / refresh on tiny notebooks.

Eight notebook executions in all (a real kernel, a few seconds each); every refusal is checked
before anything executes, so those tests run no kernel. The report itself: test_report.py.
"""
import json
import re
import subprocess
import sys

import pandas as pd
import pytest
import zmq

from ragkit import notebook_runner
from ragkit.cli import main
from ragkit.cookbook import (MARKER, is_results, notebook_paths, parameters_for,
                             parse_value, refresh, run_cookbook, sweep)
from ragkit.documents import RagkitError
from ragkit.notebook_runner import CHECKPOINTS
from tiny_dataset import write_tiny_dataset
from tiny_notebooks import tiny_notebook as _notebook

TABLE = ("import pandas as pd\nfrom ragkit.cookbook import record, record_metrics\n"
         "record_metrics('table', pd.DataFrame({'Pass@5': [x * 10.0]}, index=['bm25']),"
         " ('Pass@5',))\nrecord('double', x * 2)")


def _results(folder, *files):
    """A results folder as an earlier run left it."""
    folder.mkdir()
    for name in files:
        (folder / name).write_text("old")
    (folder / MARKER).write_text(json.dumps({"files": list(files)}))
    return folder


def test_run_parses_values_reports_the_failing_cell_and_exits_2(tmp_path, monkeypatch, capsys):
    nb = _notebook(tmp_path / "nb" / "01_tiny.ipynb", TABLE,
                   "assert x < 3, f'x too large: {x!r}'")
    monkeypatch.chdir(tmp_path)  # a relative --out, while the kernel runs in nb/
    _results(tmp_path / "out", "00_old.ipynb")  # an earlier run's results are replaced
    code = main(["cookbook", "run", "--notebook", str(nb), "-p", "x=3", "--out", "out"])
    assert code == 2
    assert "notebooks failed: 01_tiny.ipynb (see out/summary.md)" in capsys.readouterr().err
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        MARKER, "01_tiny.ipynb", "01_tiny.records.json", "report.html", "results.json",
        "summary.md"]
    assert is_results(out)
    records = json.loads((out / "01_tiny.records.json").read_text())
    assert records["numbers"] == {"bm25 Pass@5": 30.0, "double": 6}  # 3, not "3"
    summary = (out / "summary.md").read_text()
    assert "| 01_tiny.ipynb | failed: cell In [4]: AssertionError: x too large: 3 |" in summary
    report = (out / "report.html").read_text()
    assert "<td class='num'>30.0</td>" in report
    assert "failed at cell In [4]: AssertionError: x too large: 3" in report


def test_sweep_runs_every_point_plots_reuses_and_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))  # the completed-points cache
    nb = _notebook(tmp_path / "01_tiny.ipynb", TABLE, "record('inverse', 1 / x)",
                   "open('executed.txt', 'a').write(f'{x}\\n')")
    with pytest.raises(RagkitError, match=r"1 of 2 sweep points failed: x=0 \(see .*sweep.md\)"):
        sweep(str(nb), tmp_path / "sweep", {"x": ["2", "0"]})
    csv = (tmp_path / "sweep" / "sweep.csv").read_text().splitlines()
    assert csv == ["x,bm25 Pass@5,double,inverse,error",
                   "2,20.0,4,0.5,",
                   "0,0.0,0,,cell In [4]: ZeroDivisionError: division by zero"]
    md = (tmp_path / "sweep" / "sweep.md").read_text()
    assert "| error " in md.splitlines()[0]
    assert "cell In [4]: ZeroDivisionError: division by zero |" in md
    # each metric at its column's decimals in every row (it read "20" over "85.7")
    assert [line.split("|")[2].strip() for line in md.splitlines()[2:4]] == ["20.0", "0.0"]
    assert "2 points, 0 reused from earlier runs, 2 executed." in md
    assert "![recorded metrics against x](sweep_x.png)" in md
    assert (tmp_path / "sweep" / "sweep_x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert is_results(tmp_path / "sweep")
    assert {"01_tiny__x=2.ipynb", "01_tiny__x=0.ipynb"} <= {
        p.name for p in (tmp_path / "sweep").iterdir()}
    assert (tmp_path / "executed.txt").read_text() == "2\n"  # x=0 failed before it
    # a re-run reuses the completed point and executes the failed one again
    with pytest.raises(RagkitError, match="1 of 2 sweep points failed"):
        sweep(str(nb), tmp_path / "sweep", {"x": ["2", "0"]})
    assert "2 points, 1 reused from earlier runs, 1 executed." in (
        tmp_path / "sweep" / "sweep.md").read_text()
    assert (tmp_path / "sweep" / "sweep.csv").read_text().splitlines() == csv
    assert (tmp_path / "executed.txt").read_text() == "2\n"


def test_sweep_points_are_keyed_by_notebook_and_parameters(tmp_path, monkeypatch):
    from ragkit.sweep import point_key, source_fingerprint
    nb = _notebook(tmp_path / "01_tiny.ipynb", "print(x)")
    key = point_key(nb, {"x": 2}, source_fingerprint())
    assert key == point_key(nb, {"x": 2}, source_fingerprint())
    assert key != point_key(nb, {"x": 3}, source_fingerprint())
    assert key != point_key(nb, {"x": 2}, "another ragkit")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert key != point_key(nb, {"x": 2}, source_fingerprint())  # online is another result
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    _notebook(nb, "print(x + 1)")
    assert key != point_key(nb, {"x": 2}, source_fingerprint())


def test_a_sweep_says_when_its_points_scored_different_question_sets(tmp_path, monkeypatch):
    """Notebook 08 swept over chunk_size generates questions per point (47 kept at 256, 43
    at 512, not the same ones), and sweep.md presented the gap as the chunk size's effect."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    note = "The points were scored on different question sets (each generated its own)"
    own = _notebook(tmp_path / "01_own.ipynb", TABLE, "record('question_set', f'set{x}')")
    sweep(str(own), tmp_path / "own", {"x": ["1", "2"]})
    assert note in (tmp_path / "own" / "sweep.md").read_text()
    one = _notebook(tmp_path / "01_one.ipynb", TABLE, "record('question_set', 'the set')")
    sweep(str(one), tmp_path / "one", {"x": ["1", "2"]})
    assert note not in (tmp_path / "one" / "sweep.md").read_text()


def test_a_sweep_point_is_run_again_when_its_review_sheet_was_edited(tmp_path):
    """Notebook 08's review sheet edited, the sweep re-run: every point was reused ("2
    reused, 0 executed") and the edit ignored. The sheet as its notebook wrote it, or
    another folder's, keeps the points' keys."""
    from ragkit.questions import write_review
    from ragkit.sweep import point_key, source_fingerprint
    nb = _notebook(tmp_path / "08_tiny.ipynb", "print(x)",
                   params="x = 1\nreview_folder = 'review'")
    question = {"id": "gen-001", "question": "How long is the warranty?",
                "golden": [{"doc_id": "a.md", "span": "two years"}], "kind": "lexical",
                "metadata": {}}
    fingerprint = source_fingerprint()
    before = point_key(nb, {"x": 2}, fingerprint)
    sheet = write_review([question], tmp_path / "review" / "review.csv")
    assert point_key(nb, {"x": 2}, fingerprint) == before  # as written: no review yet
    sheet.write_text(sheet.read_text(encoding="utf-8-sig").replace(",yes,", ",no,"),
                     encoding="utf-8")
    edited = point_key(nb, {"x": 2}, fingerprint)
    assert edited != before
    assert point_key(nb, {"x": 2, "review_folder": "elsewhere"}, fingerprint) != edited


def test_refresh_rewrites_in_place_without_run_metadata(tmp_path):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "print(x + 1)")
    assert refresh([str(nb)]) == [nb]
    data = json.loads(nb.read_text())
    assert "papermill" not in data["metadata"]
    assert "".join(data["cells"][1]["outputs"][0]["text"]) == "2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["01_tiny.ipynb"]


def test_two_jobs_run_notebooks_side_by_side_and_report_in_order(tmp_path, capfd):
    # each notebook waits (up to a minute) until both have started: run side by side, both
    # end after both started, however long a loaded machine takes to start a kernel; run one
    # after the other, the first ends before the second starts (a fixed 2 s sleep failed
    # when the second kernel took 3 s longer to start on a loaded machine)
    meet = tmp_path / "meet"
    meet.mkdir()
    stamp = ("import os, pathlib, time\nfrom ragkit.cookbook import record\n"
             f"meet = pathlib.Path({str(meet)!r})\n"
             "record('started', time.time()); (meet / str(os.getpid())).touch()\n"
             "deadline = time.time() + 60\n"
             "while len(list(meet.iterdir())) < 2 and time.time() < deadline:\n"
             "    time.sleep(0.05)\n"
             "record('ended', time.time()); record('worker', os.getppid())")
    first = _notebook(tmp_path / "nb" / "01_a.ipynb", stamp)
    second = _notebook(tmp_path / "nb" / "02_b.ipynb", stamp, "assert x == 2, 'x is 1'")
    with pytest.raises(RagkitError, match=r"notebooks failed: 02_b.ipynb"):
        run_cookbook(tmp_path / "out", [str(first), str(second)], jobs=2)
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [nb["name"] for nb in document["notebooks"]] == ["01_a.ipynb", "02_b.ipynb"]
    assert [nb["status"] for nb in document["notebooks"]] == ["ok", "failed"]
    a, b = (nb["numbers"] for nb in document["notebooks"])
    assert a["started"] < b["ended"] and b["started"] < a["ended"]  # at the same time
    assert a["worker"] != b["worker"]  # in two worker processes
    assert document["run"]["jobs"] == 2
    assert "2 notebooks at a time" in (tmp_path / "out" / "report.html").read_text()
    err = capfd.readouterr().err  # printed by the workers
    assert "[2/2] 02_b.ipynb: cell In [3]: AssertionError: x is 1" in err
    if zmq.has("curve"):  # kernels on encrypted sockets print no plain-TCP warning
        assert "without encryption" not in err


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_bad_jobs_exit_2_before_anything_runs(tmp_path, capsys, jobs):
    assert main(["cookbook", "run", "--out", str(tmp_path / "out"), "--jobs", jobs]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("1.5", 1.5), ("true", True), ("null", None), ("256,512", "256,512"),
    ("words", "words"), ('"3"', "3"), ("", ""), (7, 7)])
def test_values_are_read_as_json_else_text(text, value):
    assert parse_value(text) == value and type(parse_value(text)) is type(value)


def test_each_notebook_gets_only_the_parameters_it_declares(tmp_path):
    a = _notebook(tmp_path / "01_a.ipynb", params="x = 1")
    b = _notebook(tmp_path / "02_b.ipynb", params="z = 'a'\nk = 20  # results per query")
    assert parameters_for([a, b], {"x": "3", "z": "abc"}) == {a: {"x": 3}, b: {"z": "abc"}}
    with pytest.raises(RagkitError, match="01_a.ipynb, 02_b.ipynb: no parameter 'y'; "
                                          "declared parameters: k, x, z"):
        parameters_for([a, b], {"x": "3", "y": "1"})


@pytest.mark.parametrize("given, value", [
    ({"k": "10"}, 10), ({"k": 10}, 10), ({"rate": "2"}, 2.0), ({"rate": "0.5"}, 0.5),
    ({"name": "3"}, "3"), ({"name": "words"}, "words"), ({"flag": "false"}, False),
    ({"anything": "[1, 2]"}, [1, 2]), ({"anything": "text"}, "text")])
def test_values_take_their_defaults_type(tmp_path, given, value):
    nb = _notebook(tmp_path / "01_a.ipynb", params="k = 20\nrate = 1.0\nname = 'auto'\n"
                                                   "flag = True\nanything = None")
    assert parameters_for([nb], given) == {nb: {next(iter(given)): value}}


@pytest.mark.parametrize("given, message", [
    ({"k": "abc"}, "field 'k': expects a whole number (its default is 20), got 'abc'"),
    ({"k": "2.5"}, "field 'k': expects a whole number"),
    ({"k": "true"}, "field 'k': expects a whole number"),
    ({"k": ""}, "field 'k': expects a whole number (its default is 20), got ''"),
    ({"rate": "fast"}, "field 'rate': expects a number (its default is 1.0), got 'fast'"),
    ({"flag": "1"}, "field 'flag': expects true or false"),
])
def test_a_value_of_the_wrong_type_is_refused(tmp_path, given, message):
    nb = _notebook(tmp_path / "01_a.ipynb", params="k = 20\nrate = 1.0\nflag = True")
    with pytest.raises(RagkitError, match=re.escape(f"{nb}: {message}")):
        parameters_for([nb], given)


def test_wrong_type_exits_2_before_anything_runs(tmp_path, capsys):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "raise SystemExit('must not run')")
    for command in ("run", "sweep"):
        assert main(["cookbook", command, "--notebook", str(nb), "-p", "x=one",
                     "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"ragkit: error: {nb}: field 'x': expects a whole number (its default "
                       f"is 1), got 'one'"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_tiny.ipynb"]


@pytest.mark.parametrize("param, message", [
    ("x=", "--param x=: a sweep needs values, e.g. x=V1,V2 (no empty ones)"),
    ("x=1,,2", "--param x=1,,2: a sweep needs values"),
    ("x=1,2,1", "--param x=1,2,1: 1 is given twice"),  # it ran the same point twice
])
def test_sweep_grid_without_values_exits_2(tmp_path, capsys, param, message):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "raise SystemExit('must not run')")
    assert main(["cookbook", "sweep", "--notebook", str(nb), "-p", param,
                 "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_tiny.ipynb"]


def test_notebooks_are_found_by_path_name_or_number(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(notebook_runner, "NOTEBOOKS", tmp_path)
    one = _notebook(tmp_path / "01_first.ipynb")
    ten = _notebook(tmp_path / "10_tenth.ipynb")
    assert notebook_paths(["01"]) == [one]
    assert notebook_paths(["10_tenth", str(one)]) == [ten, one]
    assert notebook_paths(["01_first.ipynb"]) == [one]
    with pytest.raises(RagkitError, match=r"no such notebook: 1, 07_missing \(give a path, or "
                                          r"one of: 01_first, 10_tenth\)"):
        notebook_paths(["1", "07_missing", "10"])
    assert main(["cookbook", "run", "--notebook", "nope.ipynb", "--out",
                 str(tmp_path / "out")]) == 2
    assert "ragkit: error: no such notebook: nope.ipynb" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_undeclared_parameter_is_refused_before_anything_runs(tmp_path, capsys):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "raise SystemExit('must not run')")
    assert main(["cookbook", "run", "--notebook", str(nb), "-p", "y=1",
                 "--out", str(tmp_path / "out")]) == 2
    assert (f"{nb}: no parameter 'y'; declared parameters: x"
            in capsys.readouterr().err)
    with pytest.raises(RagkitError, match="no parameter 'chunk_size'; declared parameters: x"):
        sweep(str(nb), tmp_path / "sweep", {"chunk_size": ["256", "512"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_tiny.ipynb"]


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.mkdir()])
def test_no_notebooks_found_says_where_and_writes_nothing(tmp_path, monkeypatch, make):
    make(tmp_path / "notebooks")
    monkeypatch.setattr(notebook_runner, "NOTEBOOKS", tmp_path / "notebooks")
    with pytest.raises(RagkitError, match=r"no notebooks found in .*notebooks .*ship with the "
                                          r"source checkout"):
        run_cookbook(tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("setup, message", [
    (lambda out: out.write_text("my notes"), "exists and is a file"),
    (lambda out: (out.mkdir(), (out / "thesis.tex").write_text("mine")),
     "exists and is not a ragkit results folder"),
    (lambda out: (_results(out, "report.html"), (out / "thesis.tex").write_text("mine")),
     "out/thesis.tex: not written by ragkit cookbook, but inside the results folder"),
    (lambda out: (_results(out, "report.html"), _results(out / "sweep", "sweep.md")),
     "out/sweep: the results of another ragkit cookbook command, but inside the results "
     "folder"),
])
def test_out_is_refused_unless_empty_or_ragkit_results(tmp_path, capsys, command, setup,
                                                        message):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "raise SystemExit('must not run')")
    out = tmp_path / "out"
    setup(out)
    before = sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_text()
    assert main(["cookbook", command, "--notebook", str(nb), "-p",
                 "x=1" if command == "run" else "x=1,2", "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert (sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_tiny.ipynb", "out"]


def test_a_run_replaces_a_results_folder_jupyterlab_opened(tmp_path, capsys):
    """Opening an executed notebook in JupyterLab makes `.ipynb_checkpoints` in the results
    folder; the next `make cookbook` refused the folder as "not a ragkit results folder"."""
    nb = _notebook(tmp_path / "01_tiny.ipynb", "print(x)")
    out = tmp_path / "out"
    assert main(["cookbook", "run", "--notebook", str(nb), "--out", str(out)]) == 0
    (out / CHECKPOINTS).mkdir()
    (out / CHECKPOINTS / "01_tiny-checkpoint.ipynb").write_text("{}")
    assert main(["cookbook", "run", "--notebook", str(nb), "--out", str(out)]) == 0, \
        capsys.readouterr().err
    assert not (out / CHECKPOINTS).exists() and (out / "01_tiny.ipynb").is_file()


def test_results_folder_recognised_by_its_marker(tmp_path):
    assert is_results(_results(tmp_path / "a", "report.html", "summary.md"))
    (tmp_path / "a" / ".ipynb_checkpoints").mkdir()  # JupyterLab opened a notebook of it
    (tmp_path / "a" / ".ipynb_checkpoints" / "01_x-checkpoint.ipynb").write_text("{}")
    assert is_results(tmp_path / "a")
    _results(tmp_path / "a" / "sweep", "sweep.md")  # a sweep saved inside: not this run's
    with pytest.raises(RagkitError, match=r"a/sweep: the results of another ragkit cookbook "
                                          r"command, but inside the results folder"):
        is_results(tmp_path / "a")
    assert not is_results(tmp_path)  # no marker
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / MARKER).write_text("not json")
    assert not is_results(tmp_path / "b")


@pytest.mark.parametrize("args, message", [
    (["-p", "x"], "--param expects NAME=VALUE, got 'x'"),
    (["-p", "=3"], "--param expects NAME=VALUE, got '=3'"),
    (["-p", "x=1", "--param", "x=2"], "--param x given twice"),
])
def test_bad_param_options_exit_2(tmp_path, capsys, args, message):
    assert main(["cookbook", "run", "--out", str(tmp_path / "out"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_record_metrics_stores_the_table_and_its_metric_cells(tmp_path, monkeypatch):
    from ragkit.record import load_records, record, record_metrics
    monkeypatch.setenv("RAGKIT_RECORD", str(tmp_path / "r.json"))
    table = pd.DataFrame({"Pass@5": [61.234, 50.0], "MRR": [0.5, 0.25]}, index=["a", "b"])
    record_metrics("t", table, ("Pass@5",), caption="Two methods")
    record_metrics("cost", pd.DataFrame({"$/query": [0.00306]}, index=["rag"]), ("$/query",))
    record("n", 3)
    record("cost", pd.DataFrame({"$": [1.5]}, index=["x"]), caption="Cost")
    records = load_records(tmp_path / "r.json")
    # exact: rounded to 2 decimals, a cost of $0.00306 was recorded as 0.0
    assert records["numbers"] == {"a Pass@5": 61.234, "b Pass@5": 50.0,
                                  "rag $/query": 0.00306, "n": 3}
    assert records["tables"]["t"] == {"caption": "Two methods", "metrics": ["Pass@5"],
                                      "index_name": None, "index": ["a", "b"],
                                      "columns": ["Pass@5", "MRR"],
                                      "data": [[61.234, 0.5], [50.0, 0.25]]}
    assert records["tables"]["cost"]["metrics"] == []
    with pytest.raises(RagkitError, match="record_metrics 't': no column 'Pass@20'; "
                                          "columns: Pass@5, MRR"):
        record_metrics("t", table, ("Pass@5", "Pass@20"))


def test_run_prints_cells_done_per_notebook_and_names_its_outputs_last(tmp_path):
    """The installed CLI, two notebooks side by side: each says how many of its cells are
    done every RAGKIT_PROGRESS_SECONDS while it runs, and the run's last line names the
    three outputs."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    slow = "import time\ntime.sleep(2.5)"
    _notebook(tmp_path / "nb" / "01_a.ipynb", slow, "x + 1")
    _notebook(tmp_path / "nb" / "02_b.ipynb", slow, "x + 2")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "RAGKIT_HOME": str(home), "RAGKIT_PROGRESS_SECONDS": "1"}
    ragkit = Path(sys.executable).with_name("ragkit")
    done = subprocess.run([str(ragkit), "cookbook", "run", "--notebook", "nb/01_a.ipynb",
                           "--notebook", "nb/02_b.ipynb", "--out", "out", "--jobs", "2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    for label in ("[1/2] 01_a.ipynb", "[2/2] 02_b.ipynb"):
        progress = [line for line in err if re.fullmatch(
            re.escape(label) + r": \d/3 cells done \(\d+ s\)", line)]
        assert progress, err  # at least one line while the 2.5 s cell runs
        assert f"{label}: 1/3 cells done" in "\n".join(progress)  # the parameters cell ran
        assert any(line.startswith(f"{label}: ok (") for line in err)
    assert done.stdout.splitlines()[-1] == ("report: out/report.html, summary: "
                                            "out/summary.md, results: out/results.json")
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "report.html", "summary.md", "results.json"}


def test_a_bad_progress_interval_exits_2_before_anything_runs(tmp_path, monkeypatch, capsys):
    nb = _notebook(tmp_path / "nb" / "01_a.ipynb", "x + 1")
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", "soon")
    assert main(["cookbook", "run", "--notebook", str(nb), "--out",
                 str(tmp_path / "out")]) == 2
    assert ("RAGKIT_PROGRESS_SECONDS: expects a number of seconds > 0, got 'soon'"
            in capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_sweep_prints_the_running_points_cells_done(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", "1")
    monkeypatch.setattr("ragkit.sweep.source_fingerprint", lambda: "this ragkit")
    nb = _notebook(tmp_path / "01_tiny.ipynb", "import time\ntime.sleep(2.5)")
    sweep(str(nb), tmp_path / "sweep", {"x": ["2"]})
    out, err = capfd.readouterr()
    assert "cells done" not in out  # on a terminal, stderr: stdout is a command's data
    # the parameters cell and papermill's injected one are done while the sleep runs
    assert re.search(r"^01_tiny x=2: 2/3 cells done \(\d+ s\)$", err, re.M), err
    # a notebook that records nothing still makes a sweep (and a reusable point)
    assert (tmp_path / "sweep" / "sweep.csv").read_text().splitlines() == ["x,error", "2,"]
    sweep(str(nb), tmp_path / "sweep", {"x": ["2"]})
    assert "1 point, 1 reused from earlier runs, 0 executed." in (
        tmp_path / "sweep" / "sweep.md").read_text()


def test_a_parameter_held_at_one_value_is_tabulated_but_not_plotted(tmp_path):
    """`-p data_dir=DIR` beside a swept parameter once got its own one-point plot."""
    import pandas as pd
    from ragkit.sweep import _write_tables
    table = pd.DataFrame({"x": ["2", "3"], "data_dir": ["/d", "/d"], "double": [4, 6],
                          "error": ["", ""], "reused": [False, False]})
    _write_tables(tmp_path, table, {"x": ["2", "3"], "data_dir": ["/d"]}, {"double": ["double"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.csv", "sweep.md", "sweep_x.png"]
    md = (tmp_path / "sweep.md").read_text()
    assert "![recorded metrics against x](sweep_x.png)" in md and "against data_dir" not in md
    assert md.splitlines()[0] == "|   x | data_dir   |   double | error   |"


def test_sweep_md_keeps_the_swept_values_and_writes_each_column_one_way(tmp_path):
    """α 0.55 and 0.65 both read 0.6 (round_metrics rounded the swept column too), a count
    read 147.0, and a metric column mixed "100" and "85.7"."""
    from ragkit.sweep import _write_tables
    table = pd.DataFrame({"alpha": [0.55, 0.65], "hybrid Pass@5": [100.0, 85.7],
                          "hybrid MRR": [0.71, float("nan")], "chunks": [147.0, 147.0],
                          "error": ["", ""], "reused": [False, False]})
    _write_tables(tmp_path, table, {"alpha": [0.55, 0.65]}, {})
    rows = [[cell.strip() for cell in line.split("|")[1:-1]]
            for line in (tmp_path / "sweep.md").read_text().splitlines()[2:4]]
    assert rows == [["0.55", "100.0", "0.710", "147", ""], ["0.65", "85.7", "", "147", ""]]


def test_a_swept_value_holding_a_pipe_or_a_line_break_keeps_its_row_of_sweep_md(tmp_path):
    """A data folder named `x|y` split its row: every number of the point stood under the
    next column's name."""
    from ragkit.sweep import _write_tables
    table = pd.DataFrame({"data_dir": ["/d/x|y", "/d/a\nb"], "hybrid Pass@5": [100.0, 85.7],
                          "error": ["", "cell In [4]: E: a|b"], "reused": [False, False]})
    _write_tables(tmp_path, table, {"data_dir": ["/d/x|y", "/d/a\nb"]}, {})
    lines = (tmp_path / "sweep.md").read_text().splitlines()
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[2:4]]
    assert rows == [["/d/x\\|y", "100.0", ""], ["/d/a b", "85.7", "cell In [4]: E: a\\|b"]]
    assert lines[4] == "" and "x|y" in (tmp_path / "sweep.csv").read_text()

def test_a_sweep_point_no_chunker_takes_is_refused_before_any_point_runs(tmp_path,
                                                                        monkeypatch):
    """chunk_size 64 with the notebook's overlap 64 failed only after the sweep had run."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    nb = _notebook(tmp_path / "01_tiny.ipynb", "open('ran.txt', 'a').write('x')",
                   params="chunk_size = 512\noverlap = 64")
    with pytest.raises(RagkitError) as caught:
        sweep(str(nb), tmp_path / "sweep", {"chunk_size": ["512", "64"]})
    assert str(caught.value) == ("sweep point chunk_size=64: overlap must be between 0 and half "
                                 "the chunk size (32), got 64; sweep overlap too (--param "
                                 "overlap=...) or drop the point")
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "sweep").exists()


def test_a_sweep_over_a_split_the_data_lacks_is_refused_before_any_point_runs(tmp_path,
                                                                             monkeypatch):
    """The split is read from the data folder the notebook names (relative to the notebook);
    a point asking for one its questions lack is one line, and nothing runs."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    write_tiny_dataset(tmp_path / "tiny")
    nb = _notebook(tmp_path / "01_tiny.ipynb", "open('ran.txt', 'a').write('x')",
                   params='data_dir = "tiny"\nsplit = "dev"')
    with pytest.raises(RagkitError) as caught:
        sweep(str(nb), tmp_path / "sweep", {"split": ["dev", "test"]})
    assert str(caught.value) == ("tiny: no queries in split 'test' (splits: ['dev']), asked "
                                 "for by 01_tiny.ipynb (split)")
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "sweep").exists()


def test_a_caption_naming_a_swept_value_makes_one_panel_titled_by_the_table():
    """A sweep over split: notebook 01's caption "Three retrievers on the dev split" and
    "… on the test split" made two identical panels, each the mean of both splits, one of
    them titled "dev"."""
    from ragkit.sweep import metric_panels

    def point(split: str) -> dict:
        return {"tables": {"retrieval": {"caption": f"Three retrievers on the {split} split",
                                         "metrics": ["Pass@5"], "index": ["BM25", "dense"]},
                           "fixed": {"caption": "The same everywhere", "metrics": ["MRR"],
                                     "index": ["BM25"]}},
                "numbers": {}}
    assert metric_panels([point("dev"), point("test")]) == {
        "Pass@5 · retrieval": ["BM25 Pass@5", "dense Pass@5"],
        "MRR · The same everywhere": ["BM25 MRR"]}
    assert list(metric_panels([point("dev")])) == [
        "Pass@5 · Three retrievers on the dev split", "MRR · The same everywhere"]


def test_the_sweep_plot_keeps_metrics_in_range_legends_off_the_lines_and_titles_whole(tmp_path):
    """From a user's sweep: Pass@5 axes ran to 104 and Fail@20 to −0.04, the MRR panel's
    legend covered a line, and a long caption was cut ("The ladder on docs (19 accepted ques…")."""
    from matplotlib import image

    from ragkit.sweep import parameter_figure, plot_parameter
    table = pd.DataFrame({"seed": [0, 1], "hybrid Pass@5": [100.0, 100.0],
                          "dense Pass@5": [95.0, 100.0], "hybrid MRR": [0.969, 0.938],
                          "dense MRR": [0.89, 0.92], "hybrid Fail@20": [0.0, 0.0]})
    caption = "The ladder on docs (19 accepted questions), Pass@5 per configuration"
    panels = {caption: ["hybrid Pass@5", "dense Pass@5"], "MRR": ["hybrid MRR", "dense MRR"],
              "Fail@20": ["hybrid Fail@20"]}
    path = plot_parameter(table, "seed", panels, tmp_path / "sweep_seed.png")
    assert image.imread(path).shape[0] > 100
    fig = parameter_figure(table, "seed", panels)
    passes, mrr, fail = fig.axes
    # 100 % a sliver below the frame (a line there lay on it), no tick past it
    assert 100.0 < passes.get_ylim()[1] < 100.5 and max(passes.get_yticks()) == 100.0
    assert 0.0 <= fail.get_ylim()[0] < fail.get_ylim()[1]
    assert 0.0 <= mrr.get_ylim()[0] and mrr.get_ylim()[1] <= 1.0
    assert passes.get_title() == ("The ladder on docs (19 accepted questions),\n"
                                  "Pass@5 per configuration")
    renderer = fig.canvas.get_renderer()
    legend = mrr.get_legend().get_window_extent(renderer)
    assert legend.y1 <= mrr.get_window_extent(renderer).y0  # below the axes, not over lines
    # series that tie everywhere stay visible: each its own marker and dash, a smaller
    # marker drawn over a larger one (two lines of 100 % were drawn as one)
    tied = passes.get_lines()
    assert [(line.get_marker(), line.get_linestyle()) for line in tied] == [("o", "-"),
                                                                           ("s", "--")]
    assert tied[0].get_markersize() > tied[1].get_markersize()


@pytest.mark.parametrize("action, shown, absent", [
    ("run", ("--out", "--notebook", "--param", "--jobs"), ("--fresh",)),
    ("sweep", ("--out", "--notebook", "--param", "--fresh"), ("--jobs",)),
    ("refresh", ("--notebook", "--jobs"), ("--out", "--param", "--fresh")),
])
def test_each_cookbook_action_shows_its_own_options(capsys, action, shown, absent):
    with pytest.raises(SystemExit) as done:
        main(["cookbook", action, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: ragkit cookbook {action} ")
    assert all(option in text for option in shown)
    assert not any(option in text for option in absent)


@pytest.mark.parametrize("args", [["refresh", "-p", "x=1"], ["refresh", "--out", "o"],
                                  ["run", "--fresh"], ["sweep", "--jobs", "2"]])
def test_an_option_the_action_would_ignore_is_refused(tmp_path, monkeypatch, capsys, args):
    nb = _notebook(tmp_path / "01_tiny.ipynb", "raise SystemExit('must not run')")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["cookbook", *args, "--notebook", str(nb)])
    assert done.value.code == 2
    assert f"unrecognized arguments: {' '.join(args[1:])}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_tiny.ipynb"]


def test_sweep_usage_shows_notebook_required(tmp_path, capsys):
    """The usage line says what the help text says: a sweep needs --notebook."""
    with pytest.raises(SystemExit) as exit_:
        main(["cookbook", "sweep", "-p", "x=1,2", "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert " --notebook NOTEBOOK " in err.splitlines()[0]  # not "[--notebook NOTEBOOK]"
    assert err.rstrip().endswith("the following arguments are required: --notebook")
    assert not (tmp_path / "out").exists()


def test_the_sweep_plot_draws_dollar_signs_of_folder_names_and_captions_as_written(tmp_path):
    """A sweep over data folders named with `$` (or a caption naming one) stopped after
    every point had run, on matplotlib's ParseException: "a$b_$c" read as TeX math."""
    from ragkit.sweep import parameter_figure, plot_parameter
    table = pd.DataFrame({"data_dir": ["data/a$b_$c", "data/plain"],
                          "hybrid Pass@5": [90.0, 95.0], "dense Pass@5": [85.0, 80.0]})
    panels = {"Pass@5 · The ladder on the $5_$ split": ["hybrid Pass@5", "dense Pass@5"]}
    assert plot_parameter(table, "data_dir", panels, tmp_path / "sweep_data_dir.png").is_file()
    (ax,) = parameter_figure(table, "data_dir", panels).axes
    assert ax.get_title() == "Pass@5 · The ladder on the $5_$ split"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["data/a$b_$c", "data/plain"]


@pytest.mark.parametrize("name, content, why", [
    ("passwd", b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/sh\n",
     "not a Jupyter notebook (its text is not a JSON object)"),
    ("list.ipynb", b"[1, 2]", "not a Jupyter notebook (its text is not a JSON object)"),
    ("data.ipynb", b'{"rows": [1, 2]}', "not a Jupyter notebook (no list of cells)"),
    ("image.ipynb", b"\x89PNG\r\n\x1a\n\xb4\x00", "not a Jupyter notebook (its bytes are not "
                                                  "UTF-8 text)"),
])
def test_a_file_that_is_no_notebook_is_one_clean_line_without_its_content(
        tmp_path, monkeypatch, name, content, why):
    """`cookbook run --notebook /etc/passwd`: papermill's UserWarning about the extension and
    its source line reached stderr before the error, which quoted the file's first bytes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(content)
    done = subprocess.run([sys.executable, "-c", "import sys; from ragkit.cli import main; "
                           "sys.exit(main())", "cookbook", "run", "--notebook", name, "--out",
                           "results"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"ragkit: error: {name}: {why}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
