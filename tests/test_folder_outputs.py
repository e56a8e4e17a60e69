"""Folders ragkit wrote inside a documents folder — a `ragkit cookbook` results folder (report,
results.json, summary, records, a sweep's output), an index — are not read as documents, and
the folder summary says so. Read back, a report became chunks and notebook 08 wrote questions
about its own earlier report."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ragkit import file_summary, load_folder
from ragkit.notebook_runner import mark

RAGKIT = str(Path(sys.executable).parent / "ragkit")
REPORT = ("<html><body><h1>Cookbook report</h1><p>Pass@5 rose to 0.8 with reranking.</p>"
          "</body></html>")


def _results(folder: Path, command: str) -> None:
    """A results folder as `ragkit cookbook run` (or sweep) leaves it, its marker last."""
    folder.mkdir()
    (folder / "report.html").write_text(REPORT)
    (folder / "results.json").write_text(json.dumps({"notebooks": [{"finding": "0.8"}]}))
    (folder / "summary.md").write_text("# Summary\n\nEvery notebook ran; Pass@5 is 0.8.\n")
    (folder / "08_your_own_documents.records.json").write_text('{"records": []}')
    mark(folder, command)


def _index(docs: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([RAGKIT, "index", str(docs), "--out", str(out), "--embedder", "none"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RAGKIT_HOME": str(docs.parent / "home")})


def test_results_folders_and_an_index_inside_the_documents_are_left_out_and_listed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "depot.md").write_text("# Depot\n\nThe north gate of the depot opens at six.\n")
    _results(docs / "results", "run")
    _results(docs / "results" / "sweep_chunk_size", "sweep")  # a sweep saved inside a run's
    mark(docs / "results", "run")  # the run's marker lists the sweep folder too
    _results(docs / "sweep", "sweep")
    assert _index(docs, docs / "idx").returncode == 0
    done = _index(docs, tmp_path / "idx")  # docs/idx is now the first run's index
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"indexed 1 document as 1 chunk into {tmp_path / 'idx'}\n"
    rows = (json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open())
    assert sorted({row["doc_id"] for row in rows}) == ["depot.md"]
    (docs / "summary.md").symlink_to("results/summary.md")
    loaded = load_folder(docs, skip_bad=True, progress=False)
    assert [(row["file"], row["skipped"]) for row in file_summary(loaded)] == [
        ("depot.md", ""),
        ("idx", "a ragkit index folder, not read as documents"),
        ("results", "a ragkit results folder (ragkit cookbook run), not read as documents"),
        ("summary.md", "a symbolic link into a ragkit results folder (ragkit cookbook run), "
                       "whose files are not read"),
        ("sweep", "a ragkit results folder (ragkit cookbook sweep), not read as documents")]


def test_a_folder_with_a_file_of_that_name_but_no_marker_of_ragkit_is_read(tmp_path):
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    (docs / "results" / "summary.md").write_text("# Summary\n\nThe user's own summary.\n")
    (docs / "results" / ".ragkit-results").write_text("my notes about results\n")
    loaded = load_folder(docs, progress=False)
    assert [doc.id for doc in loaded] == ["results/summary.md"] and loaded.outputs == []


def test_a_results_folder_given_as_the_documents_is_refused_in_one_line(tmp_path):
    """An index folder given as the documents was refused, a results folder was read: its
    report, results and summary became the index's documents."""
    _results(tmp_path / "results", "run")
    done = _index(tmp_path / "results", tmp_path / "idx")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"ragkit: error: {tmp_path / 'results'}: a ragkit results folder "
                           f"(ragkit cookbook run), not documents; give the folder (or file) "
                           f"of documents it was run on\n")
    assert not (tmp_path / "idx").exists()
