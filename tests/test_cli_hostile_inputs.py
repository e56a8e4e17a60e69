"""Inputs a user gets wrong, each one error line naming the file (exit 2), never a traceback
nor a result that silently leaves questions out: an input without read permission, a golden
file that is a link to nothing or a FIFO, a line with a different `text` and `question`, an
id of megabytes in an error, standard output on a full device or closed."""
from __future__ import annotations

import builtins
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from ragkit.cli import main

RAGKIT = Path(sys.executable).parent / "ragkit"
DOC = {"id": "refund", "text": "Refunds are paid within seven days of the return."}
QUESTION = {"id": "q1", "text": "refunds seven days", "golden": [{"doc_id": "refund"}],
            "split": "test"}


def _run(*args: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    return subprocess.run([str(RAGKIT), *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, env={**env, "RAGKIT_HOME": str(cwd / "home")})


def _dataset(folder: Path, *questions: dict) -> Path:
    (folder / "golden").mkdir(parents=True)
    (folder / "documents.jsonl").write_text(json.dumps(DOC) + "\n")
    (folder / "golden" / "a.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return folder


@pytest.fixture
def unreadable(monkeypatch):
    """Make a file unreadable: chmod 000 where that binds (not root), else every open of it
    fails as it would (EACCES, the file named)."""
    def make(path: Path) -> None:
        if os.geteuid() != 0:
            path.chmod(0)
            return
        real = builtins.open

        def refusing(file, *args, **kwargs):
            if isinstance(file, (str, Path)) and Path(file).resolve() == path.resolve():
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return real(file, *args, **kwargs)
        monkeypatch.setattr(builtins, "open", refusing)
        monkeypatch.setattr(Path, "open", lambda self, *a, **k: refusing(self, *a, **k))
    return make


def test_a_run_file_without_read_permission_is_one_line(tmp_path, monkeypatch, capsys,
                                                        unreadable):
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 refund 1 1.0 x\n")
    qrels.write_text("q1 0 refund 1\n")
    unreadable(run)
    assert main(["eval", "--run", str(run), "--qrels", str(qrels)]) == 2
    assert capsys.readouterr().err == f"ragkit: error: {run}: Permission denied\n"


def test_an_unreadable_documents_file_is_named_not_the_index_being_written(
        tmp_path, monkeypatch, capsys, unreadable):
    """It was "out/ix: cannot write a ragkit index (Permission denied)": the output blamed."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps(DOC) + "\n")
    unreadable(docs)
    out = tmp_path / "out" / "ix"
    assert main(["index", str(docs), "--out", str(out), "--embedder", "none"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ragkit: error: {docs}: Permission denied; {out}: nothing was replaced")
    assert not out.exists()


@pytest.mark.parametrize("entry", ["link to nothing", "fifo"])
def test_a_golden_file_that_cannot_be_read_is_refused_not_skipped(tmp_path, entry):
    """A link whose file was moved, or a FIFO, among the golden files was left out without a
    word: the other file's questions were scored alone, exit 0."""
    data = _dataset(tmp_path / "ds", QUESTION)
    odd = data / "golden" / "b.jsonl"
    if entry == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to(tmp_path / "moved" / "b.jsonl")
    done = _run("eval", str(data), "--embedder", "none", "--mode", "bm25", "--rerank", "none",
                cwd=tmp_path)
    expected = ("not a regular file (a pipe, a device or a socket); save it to a file and "
                "give that" if entry == "fifo" else "no such file")
    assert one_error_line(done) == f"ragkit: error: {odd}: {expected}"


def test_a_question_line_with_a_different_text_and_question_is_refused(tmp_path):
    """`text` was scored and `question` silently ignored (Pass@1 0, exit 0)."""
    data = _dataset(tmp_path / "ds", {**QUESTION, "question": "how long is the warranty"})
    done = _run("eval", str(data), "--embedder", "none", "--mode", "bm25", "--rerank", "none",
                cwd=tmp_path)
    assert one_error_line(done) == (
        f"ragkit: error: {data / 'golden' / 'a.jsonl'}:1: field 'text': differs from "
        f"'question' on its line (a query has one text: keep one)")
    same = _dataset(tmp_path / "same", {**QUESTION, "question": QUESTION["text"]})
    assert _run("eval", str(same), "--embedder", "none", "--mode", "bm25", "--rerank", "none",
                cwd=tmp_path).returncode == 0


def test_an_error_naming_an_id_of_megabytes_stays_a_line_of_about_10000_characters(tmp_path):
    """A 20 MB duplicate id made a 20 MB error line."""
    docs = tmp_path / "docs.jsonl"
    big = "x" * 2_000_000
    docs.write_text(json.dumps({**DOC, "id": big}) + "\n" + json.dumps({**DOC, "id": big})
                    + "\n")
    line = one_error_line(_run("index", str(docs), "--out", str(tmp_path / "ix"), "--embedder",
                               "none", cwd=tmp_path))
    assert len(line) < 10_100 and line.startswith(f"ragkit: error: {docs}:2: field 'id': ")
    assert "characters left out) …" in line


def test_standard_output_on_a_full_device_or_closed_is_no_traceback(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps(DOC) + "\n")
    assert _run("index", str(docs), "--out", "ix", "--embedder", "none",
                cwd=tmp_path).returncode == 0
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "a", "text": "refunds"}) + "\n")
    search = ("search", "ix", "--queries", str(queries), "--out", "-", "--mode", "bm25",
              "--k", "1")
    with open("/dev/full", "w") as full:
        done = _run(*search, cwd=tmp_path, stdout=full)
    assert (done.returncode, done.stderr) == (
        2, "ragkit: error: cannot write the output (No space left on device)\n")
    closed = subprocess.run(["bash", "-c", f"{RAGKIT} {' '.join(search)} >&-"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")})
    # it said "wrote 1 query × top 1 … to standard output", exit 0, and the run was lost
    assert (closed.returncode, closed.stderr) == (
        2, "ragkit: error: --out -: standard output is closed, so the output would be lost; "
           "name a file\n")
    closed = subprocess.run(["bash", "-c", f"{RAGKIT} eval --help >&-"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert (closed.returncode, closed.stderr) == (0, "")  # no '-' output: nothing refused


def test_a_per_query_csv_named_dash_goes_to_standard_output(tmp_path):
    """`eval --per-query -` wrote a file named "-" (the table said "per-query metrics: -"),
    where `search --out -` writes to standard output. The CSV alone is on stdout now, so a
    pipe reads it; the table and the other lines are on stderr."""
    folder = tmp_path / "data"
    (folder / "golden").mkdir(parents=True)
    (folder / "documents.jsonl").write_text(json.dumps(DOC) + "\n")
    (folder / "golden" / "q.jsonl").write_text(json.dumps(QUESTION) + "\n")
    done = _run("eval", "data", "--embedder", "none", "--k", "5", "--per-query", "-",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "query,method,kind,first_relevant_rank,Pass@5,R@5,MRR,nDCG@5",
        "q1,bm25,,1,100.0,1.0,1.0,1.0"]
    assert "Pass@5" in done.stderr and done.stderr.endswith("per-query metrics: standard output\n")
    assert not (tmp_path / "-").exists()
    closed = subprocess.run(["bash", "-c", f"{RAGKIT} eval data --embedder none --per-query - "
                             f">&-"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")})
    assert (closed.returncode, closed.stderr) == (
        2, "ragkit: error: --per-query -: standard output is closed, so the output would be "
           "lost; name a file\n")


def test_settings_that_name_a_file_instead_of_a_folder_are_said_by_name(tmp_path):
    """RAGKIT_HOME set to a file: every build said the model "is not installed" there and
    sent the user to `ragkit models install`, which failed too; RAGKIT_INDEX_CACHE set to a
    file said "…: File exists", naming no setting."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps(DOC) + "\n")
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}

    def run(*args: str, **settings: str) -> tuple[int, str]:
        done = subprocess.run([str(RAGKIT), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env={**env, **settings})
        return done.returncode, done.stderr
    home = (2, f"ragkit: error: RAGKIT_HOME={afile} is not a folder: ragkit keeps its models "
               f"and caches there\n")
    assert run("index", str(docs), "--out", "ix", RAGKIT_HOME=str(afile)) == home
    assert run("models", "install", "e5-small", RAGKIT_HOME=str(afile)) == home
    assert run("index", str(docs), "--out", "ix", "--embedder", "none",
               RAGKIT_HOME=str(tmp_path / "home"), RAGKIT_INDEX_CACHE=str(afile)) == (
        2, f"ragkit: error: RAGKIT_INDEX_CACHE={afile} is not a folder: it names where "
           f"indexes built once are shared; unset it or name a folder\n")
    assert afile.read_text() == "mine\n" and not (tmp_path / "ix").exists()
