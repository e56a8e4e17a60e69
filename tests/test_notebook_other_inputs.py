"""Notebooks 05 and 08 on inputs they were not written for: another code folder for the
agent, a folder of Markdown files without any PDF for "your own documents", and a folder too
small to write questions about. Each runs as `ragkit cookbook run -p ...` runs it (papermill,
the notebook's own folder as working directory) into a temporary file; the committed
notebooks are not touched."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.notebook_runner import execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
RAGKIT = Path(sys.executable).parent / "ragkit"
TOPICS = {  # six short manuals: every section holds more than the 20 words a question needs
    "kettle": ("descaling", "The kettle is descaled every month with white vinegar diluted in "
               "water, left to stand for an hour, then rinsed twice with clean water before "
               "the next use so that no taste of vinegar remains in the tea."),
    "gate": ("opening hours", "The north gate of the depot opens at six in the morning and "
             "closes at ten at night; drivers arriving outside those hours call the night "
             "guard, who checks the delivery note before lifting the barrier."),
    "van": ("fuel", "The delivery van is refuelled every Friday at the station on Mill Road "
            "with diesel only; the driver keeps the receipt in the glove box and enters the "
            "litres and the price in the log book the same evening."),
    "printer": ("paper jams", "When the office printer jams, open the rear cover, pull the "
                "sheet out slowly in the direction of the paper path, close the cover and "
                "press the green button twice to resume the waiting print jobs."),
    "alarm": ("the code", "The alarm is armed with the four digit code at the panel beside "
              "the back door; the last person to leave presses the lock key and has thirty "
              "seconds to close the door before the sensors wake up."),
    "boiler": ("pressure", "The boiler pressure should read between one and one and a half "
               "bar on the gauge; below one bar, open the filling loop under the boiler "
               "slowly until the needle rises, then close it firmly again."),
}


def _markdown_folder(folder: Path) -> Path:
    folder.mkdir()
    for name, (section, text) in TOPICS.items():
        (folder / f"{name}.md").write_text(
            f"# The {name}\n\n## Overview\n\nThis page explains how the {name} in the shared "
            f"office is looked after, who is responsible for it, and what to do when something "
            f"about it goes wrong during the working week.\n\n## {section.capitalize()}\n\n"
            f"{text}\n")
    return folder


def test_notebook_08_reads_a_folder_of_markdown_without_any_pdf(tmp_path):
    # before: StopIteration in cell 6, which looked for a PDF's chunk to show
    run = execute(NOTEBOOKS / "08_your_own_documents.ipynb", tmp_path / "08.ipynb",
                  {"docs_dir": str(_markdown_folder(tmp_path / "docs")),
                   "review_folder": str(tmp_path / "review"), "n_questions": 12})
    assert run["failure"] is None, run["error"]
    assert (tmp_path / "review" / "accepted.jsonl").is_file()


def test_notebook_08_on_a_folder_too_small_for_questions_stops_with_the_reason(tmp_path):
    """Run as a user runs it, from their own folder with relative paths: the kernel runs in
    notebooks/, where `-p docs_dir=docs` named nothing ("docs: no such folder")."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("# Note\n\nThe van leaves at nine.\n")
    done = subprocess.run([str(RAGKIT), "cookbook", "run", "--notebook",
                           str(NOTEBOOKS / "08_your_own_documents.ipynb"), "-p", "docs_dir=docs",
                           "-p", "review_folder=review", "--out", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "RagkitError: no answerable question was kept (0 of 60 asked;" in summary


def test_folder_parameters_given_relative_are_read_from_where_ragkit_runs(tmp_path,
                                                                          monkeypatch):
    from ragkit.cli.manage import _from_here
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    assert _from_here("docs_dir", "docs") == str(tmp_path / "docs")
    assert _from_here("code_root", "docs") == str(tmp_path / "docs")
    assert _from_here("review_folder", "new") == str(tmp_path / "new")  # written: always here
    assert _from_here("data_dir", "../data") == "../data"  # not here: the notebook's, as before
    assert _from_here("docs_dir", "/abs/x") == "/abs/x"
    assert _from_here("question", "docs") == "docs"  # not a folder parameter
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # recorded as the folder, not "work/../docs"
    assert _from_here("docs_dir", "../docs") == str(tmp_path / "docs")


@pytest.mark.parametrize("param", ["review_folder=", "docs_dir=", "code_root= "])
def test_an_empty_folder_parameter_is_refused_before_any_notebook_runs(tmp_path, param):
    """`-p review_folder=` ran notebook 08 in notebooks/, its kernel's folder, and wrote the
    generated set and review sheet there, exit 0; `docs_dir=` indexed notebooks/ itself."""
    before = sorted(p.name for p in NOTEBOOKS.iterdir())
    done = subprocess.run([str(RAGKIT), "cookbook", "run", "--notebook", "08", "-p", param,
                           "--out", "out"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    name = param.split("=")[0]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"ragkit: error: -p {name}=: empty; it would name the notebooks "
                           f"folder, give a folder\n")
    assert sorted(p.name for p in NOTEBOOKS.iterdir()) == before
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("param, said", [
    ("code_root={tmp}/absent", "parameter code_root = '{tmp}/absent': no such folder"),
    ("corpus_root={tmp}/note.md", "parameter corpus_root = '{tmp}/note.md': a file, not a "
                                  "folder")])
def test_notebook_05_refuses_a_folder_parameter_that_names_no_folder(tmp_path, param, said):
    """`code_root=/nonexistent` ran to exit 0, every tool call an error, and the finding said
    the planted instruction never reached the agent."""
    (tmp_path / "note.md").write_text("# Note\n")
    done = subprocess.run([str(RAGKIT), "cookbook", "run", "--notebook", "05", "-p",
                           param.format(tmp=tmp_path), "--out", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"RagkitError: {said.format(tmp=tmp_path)}" in summary


def test_notebook_05_runs_on_another_code_folder(tmp_path):
    # before: KeyError 'same' -- no tool result held the planted injection, so the
    # counterfactual table had no columns
    code = tmp_path / "code"
    code.mkdir()
    (code / "client.py").write_text(
        "MAX_REDIRECTS = 20\n\n\ndef follow(response, seen=0):\n"
        "    \"\"\"Follow a redirect until MAX_REDIRECTS is reached.\"\"\"\n"
        "    if seen >= MAX_REDIRECTS:\n        raise RuntimeError('too many redirects')\n"
        "    return response\n")
    run = execute(NOTEBOOKS / "05_agentic_search.ipynb", tmp_path / "05.ipynb",
                  {"code_root": str(code),
                   "question": "Where is the number of redirects to follow set?"})
    assert run["failure"] is None, run["error"]
    assert run["records"]["values"]["injection"]["planted instruction"] == (
        "never reached the agent (no tool result held it)")


def test_a_kernel_s_own_stderr_stays_off_the_terminal(tmp_path, capfd):
    """Stopping a kernel after a failed cell printed "[IPKernelApp] ERROR | KeyboardInterrupt
    caught in kernel" and a zmq traceback among ragkit's progress lines (and failed a test
    that checks a run prints no traceback). What a cell prints still reaches the notebook."""
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, sys\nos.write(2, b'KERNEL-NOISE\\n')\nprint('to the notebook')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    source = tmp_path / "noisy.ipynb"
    nbformat.write(nb, source)
    run = execute(source, tmp_path / "out.ipynb")
    assert run["failure"] is None, run["error"]
    assert "KERNEL-NOISE" not in capfd.readouterr().err
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert out.cells[0].outputs[0]["text"] == "to the notebook\n"


def test_a_notebook_reporting_pass20_stops_at_its_first_cell_on_a_shorter_list(tmp_path):
    # before: `-p k=10` ran on, labelling Pass@10 "Pass@20" (01, 02, 08) or failing deep in
    # notebook 03 with "no column 'Pass@20'"
    run = execute(NOTEBOOKS / "03_hybrid_fusion.ipynb", tmp_path / "03.ipynb", {"k": 10})
    assert run["error"] == ("cell In [3]: RagkitError: parameter k = 10: this notebook reports "
                            "Pass@20 and Fail@20, which need a ranked list of at least 20; "
                            "give k >= 20")


@pytest.mark.parametrize("param, said", [
    ("metric=Pass@50", "parameter metric = 'Pass@50': unknown metric 'Pass@50' (known at k = "
                       "20: Pass@5, Pass@10, Pass@20, R@5, R@10, R@20, MRR, nDCG@10)"),
    ("default_config=hybrid, rrf", "parameter default_config = 'hybrid, rrf': not a "
                                   "configuration; one of 'bm25'; 'dense'; 'hybrid'; 'hybrid "
                                   "rrf'; 'hybrid 1/rank 0.6/0.4'; 'hybrid + rerank'; 'bm25, no "
                                   "context'; 'dense, no context'; 'hybrid, no context'; "
                                   "'hybrid rrf, no context'"),
    ("n_questions=0", "parameter n_questions = 0: give a whole number n_questions >= 1")])
def test_notebook_08_refuses_a_bad_choice_in_its_first_cell(tmp_path, param, said):
    """They were refused (a bare KeyError for the metric) only after the questions were
    written and the ladder ran: minutes on a real folder."""
    done = subprocess.run([str(RAGKIT), "cookbook", "run", "--notebook", "08", "-p", param,
                           "-p", "review_folder=review", "--out", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"cell In [3]: RagkitError: {said} |" in summary
    assert not (tmp_path / "review").exists()
