"""`ragkit eval DOCS --questions PATH` as a user meets it, each run its own process: a review
folder (notebook 08's, or `ragkit questions accept --out accepted.jsonl` beside its sheet)
scores its accepted set; a question about a file `--skip-bad` left out is left out too, as
it is from a shipped-layout data set's `golden/` (`corpus/` beside it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RAGKIT = Path(sys.executable).parent / "ragkit"
DOCS = {"kettle.md": "# Kettle\n\nThe kettle boils a litre of water in two minutes.\n",
        "toaster.md": "# Toaster\n\nThe toaster browns four slices of bread at once.\n",
        "fridge.md": "# Fridge\n\nThe fridge keeps milk cold for a week.\n"}


def _question(number: int, doc: str, span: str) -> dict:
    return {"id": f"gen-{number:03d}", "question": f"What does {doc} say?", "kind": "lexical",
            "split": "test", "golden": [{"doc_id": doc, "span": span}]}


QUESTIONS = [_question(1, "kettle.md", "boils a litre of water"),
             _question(2, "toaster.md", "browns four slices"),
             _question(3, "fridge.md", "keeps milk cold")]


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    return subprocess.run([str(RAGKIT), "eval", *args, "--mode", "bm25", "--embedder", "none",
                           "--k", "3"], env=env, capture_output=True, text=True, timeout=120)


def test_a_review_folder_scores_its_accepted_questions(tmp_path, docs):
    """Notebook 08's review folder holds generated.jsonl and accepted.jsonl (the same ids):
    `--questions FOLDER` read both and stopped at "duplicate query id 'gen-001' (first at
    accepted.jsonl:1)"."""
    _scores_accepted(tmp_path, docs, "review.csv")


def _scores_accepted(tmp_path: Path, docs: Path, sheet_name: str) -> Path:
    """A review folder whose sheet is `sheet_name`, scored by `eval --questions FOLDER`: the
    two accepted questions, said so on stderr."""
    review = tmp_path / "review"
    review.mkdir()
    _jsonl(review / "generated.jsonl", QUESTIONS)
    (review / sheet_name).write_text("id,question,answer_span,answer_span_2,source,kind,keep,"
                                     "notes\n")
    _jsonl(review / "accepted.jsonl", QUESTIONS[:2])  # the expert kept two
    done = _eval(tmp_path, str(docs), "--questions", str(review))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"ragkit: {review}: a review folder; scoring accepted.jsonl, the reviewed questions "
        f"(not generated.jsonl)")
    assert done.stdout.splitlines()[0] == "docs: 2 judged queries of split test, 3 chunks"
    return review


def _accept(tmp_path: Path, review: Path, sheet: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    return subprocess.run([str(RAGKIT), "questions", "accept", str(sheet), "--golden",
                           str(review / "generated.jsonl"), "--out",
                           str(tmp_path / "out.jsonl")],
                          check=False, env=env, capture_output=True, text=True, timeout=120)


def test_a_review_folder_whose_sheet_was_renamed_or_deleted_says_so_in_one_line(tmp_path, docs):
    """Without `review.csv` the folder was read whole and stopped at "duplicate query id
    'gen-001' (first at accepted.jsonl:1)", and `questions accept` said only "a folder, not
    a file" or "no such file". A sheet saved under another name still marks the folder; a
    deleted one is named, with the file to give."""
    review = _scores_accepted(tmp_path, docs, "review-final.csv")  # saved as … by a spreadsheet
    sheet = review / "review-final.csv"
    for given, said in [
            (review / "review.csv", (f"{review / 'review.csv'}: no such file; the review "
                                     f"sheet beside it: {sheet} (renamed?)")),
            (review, f"{review}: a folder, not a file; its review sheet: {sheet}")]:
        done = _accept(tmp_path, review, given)
        assert (done.returncode, done.stderr) == (2, f"ragkit: error: {said}\n")
    sheet.unlink()
    done = _eval(tmp_path, str(docs), "--questions", str(review))
    assert (done.returncode, done.stderr) == (2, (
        f"ragkit: error: {review}: accepted.jsonl and generated.jsonl both hold question "
        f"'gen-001', and no review sheet is beside them to say accepted.jsonl is the reviewed "
        f"set (review.csv deleted?); give --questions {review / 'accepted.jsonl'}\n"))
    (review / "generated.jsonl").rename(review / "GENERATED.JSONL")  # a name in capitals
    done = _eval(tmp_path, str(docs), "--questions", str(review))  # was "duplicate query id"
    assert (done.returncode, done.stderr) == (2, (
        f"ragkit: error: {review}: accepted.jsonl and GENERATED.JSONL both hold question "
        f"'gen-001', and no review sheet is beside them to say accepted.jsonl is the reviewed "
        f"set (review.csv deleted?); give --questions {review / 'accepted.jsonl'}\n"))
    (review / "GENERATED.JSONL").rename(review / "generated.jsonl")
    done = _accept(tmp_path, review, review / "review.csv")
    assert (done.returncode, done.stderr) == (2, (
        f"ragkit: error: {review / 'review.csv'}: no such file; no review sheet is beside it; "
        f"`ragkit questions review {review / 'generated.jsonl'} --out {review / 'review.csv'}` "
        f"writes one\n"))
    assert not (tmp_path / "out.jsonl").exists()
    (review / "generated.jsonl").unlink()  # no twin: a folder of golden files, read whole
    done = _eval(tmp_path, str(docs), "--questions", str(review))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "docs: 2 judged queries of split test, 3 chunks"


def test_a_question_about_a_file_skip_bad_left_out_is_left_out_with_a_warning(tmp_path, docs):
    """It stopped at "no document 'fridge.md'", not saying --skip-bad had skipped the file."""
    (docs / "fridge.md").write_bytes(b"\x00\x01binary")
    golden = _jsonl(tmp_path / "accepted.jsonl", QUESTIONS)
    done = _eval(tmp_path, str(docs), "--questions", str(golden), "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert (f"ragkit: warning: {golden}: left out 1 question about 1 file --skip-bad skipped: "
            f"fridge.md") in done.stderr.splitlines()
    assert done.stdout.splitlines()[0] == "docs: 2 judged queries of split test, 2 chunks"


def test_a_shipped_golden_question_about_a_file_skip_bad_left_out_is_left_out(tmp_path, docs):
    """A data set of `corpus/` and `golden/` stopped at "no document 'fridge.md'" under
    --skip-bad, as --questions did; its questions about the skipped file are left out now."""
    (docs / "fridge.md").write_bytes(b"\x00\x01binary")
    docs.rename(tmp_path / "corpus")
    (tmp_path / "golden").mkdir()
    golden = _jsonl(tmp_path / "golden" / "test.jsonl", QUESTIONS)
    done = _eval(tmp_path, str(tmp_path), "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[:2] == [
        f"ragkit: warning: skipped {tmp_path / 'corpus' / 'fridge.md'}: looks binary, not text",
        f"ragkit: warning: {golden.parent}: left out 1 question about 1 file --skip-bad "
        f"skipped: fridge.md"]
    assert done.stdout.splitlines()[0] == f"{tmp_path.name}: 2 judged queries of split test, " \
                                          "2 chunks"
    kept = _eval(tmp_path, str(tmp_path))  # without the option: the first bad file, exit 2
    assert kept.returncode == 2 and kept.stderr.splitlines() == [
        f"ragkit: error: {tmp_path / 'corpus' / 'fridge.md'}: looks binary, not text"]


@pytest.mark.parametrize("how", ["null", "absent"])
def test_a_question_without_a_split_left_out_of_the_split_scored_is_warned_of(tmp_path, docs,
                                                                               how):
    """`"split": null` beside questions of split test: the default split, test, dropped it
    without a word (3 questions, "2 judged queries"). One warning line names its file, line
    and field; `--split all` scores it and says nothing."""
    rows = [dict(q) for q in QUESTIONS]
    rows[1]["split"] = None
    if how == "absent":
        del rows[1]["split"]
    golden = _jsonl(tmp_path / "golden.jsonl", rows)
    done = _eval(tmp_path, str(docs), "--questions", str(golden))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"ragkit: warning: {golden}:2: field 'split': null or missing, so split 'test' leaves "
        f"this question out; give each question a split, or score every one with --split all"]
    assert done.stdout.splitlines()[0] == "docs: 2 judged queries of split test, 3 chunks"
    every = _eval(tmp_path, str(docs), "--questions", str(golden), "--split", "all")
    assert (every.returncode, every.stderr) == (0, "")
    assert every.stdout.splitlines()[0] == "docs: 3 judged queries of all splits (test), 3 chunks"


@pytest.mark.parametrize("command", ["eval", "tune"])
def test_a_missing_questions_file_is_refused_before_the_documents_load(tmp_path, capsys,
                                                                       command):
    """`eval DOCS --questions nothere.jsonl` loaded a folder of 134 files (ten seconds)
    before it said the questions file was not there. Here the documents are a file that
    would fail to load: the questions file is named first."""
    from ragkit.cli import main
    (tmp_path / "docs.jsonl").write_text("not json\n")
    assert main([command, str(tmp_path / "docs.jsonl"), "--questions",
                 str(tmp_path / "nothere.jsonl")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ragkit: error: {tmp_path / 'nothere.jsonl'}: no such file")
