"""`ragkit eval BEIR --split all` scores the questions of every qrels file, and its first line
names the files read: it printed "all splits (test)" and scored qrels/test.tsv alone; `ragkit
tune` reads a BEIR folder by split as well."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit import embed, models
from ragkit.cli import main
from ragkit.datasets import load_beir
from ragkit.questions import documents_of

RAGKIT = Path(sys.executable).parent / "ragkit"
DOCS = {"d1": "alpha apple", "d2": "bravo banana", "d3": "charlie cherry", "d4": "delta date"}
# each question's words are in one document only, so BM25 retrieves exactly that one
QUESTIONS = {"q1": "alpha", "q2": "bravo", "q3": "charlie", "q4": "echo"}
QRELS = {"test": ["q1\td1\t1", "q2\td2\t1"],
         "dev": ["q3\td3\t1", "q2\td4\t1", "q1\td4\t0"],  # q2 judged in test and dev
         "train": ["q4\td1\t1"]}


def _beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": i, "text": t}) + "\n" for i, t in DOCS.items()))
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUESTIONS.items()))
    for name, lines in QRELS.items():
        (root / "qrels" / f"{name}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{line}\n" for line in lines))
    return root


def _eval(data: Path, split: str | None, rows: Path) -> tuple[str, dict[str, str]]:
    given = ["--split", split] if split else []
    done = subprocess.run([str(RAGKIT), "eval", str(data), *given, "--embedder",
                           "none", "--mode", "bm25", "--k", "5", "--per-query", str(rows)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    summary = dict(zip(lines[1].split(), lines[2].split()[1:]))
    return lines[0], summary


def test_split_all_scores_the_union_of_every_qrels_file(tmp_path: Path) -> None:
    data = _beir(tmp_path / "beir")
    rows = tmp_path / "rows.csv"
    first, summary = _eval(data, "all", rows)
    assert first == ("beir: 4 judged queries of all splits (qrels/dev.tsv, qrels/test.tsv, "
                     "qrels/train.tsv), 4 chunks")
    # q1 100, q2 50 (d2 of test found, d4 of dev not), q3 100, q4 0
    assert summary["Pass@5"] == "62.5"
    assert {r["query"]: r["Pass@5"] for r in csv.DictReader(rows.open())} == {
        "q1": "100.0", "q2": "50.0", "q3": "100.0", "q4": "0.0"}
    first, summary = _eval(data, "test", rows)
    assert (first, summary["Pass@5"]) == ("beir: 2 judged queries of split test, 4 chunks",
                                          "100.0")
    first, summary = _eval(data, "dev", rows)
    assert (first, summary["Pass@5"]) == ("beir: 2 judged queries of split dev, 4 chunks",
                                          "50.0")


def test_a_beir_folder_without_test_judgments_is_scored_whole_by_default(
        tmp_path: Path) -> None:
    """Without --split, a BEIR folder judged in dev and train only stopped with
    "qrels/test.tsv: no such file"; a data set without a test split is scored whole."""
    data = _beir(tmp_path / "beir")
    first, summary = _eval(data, None, tmp_path / "rows.csv")
    assert (first, summary["Pass@5"]) == ("beir: 2 judged queries of split test, 4 chunks",
                                          "100.0")
    (data / "qrels" / "test.tsv").unlink()
    first, summary = _eval(data, None, tmp_path / "rows.csv")
    assert first == ("beir: 3 judged queries of all splits (qrels/dev.tsv, qrels/train.tsv), "
                     "4 chunks")
    assert summary["Pass@5"] == "33.3"  # q2 0 (its dev document d4 not found), q3 100, q4 0


def test_load_beir_all_unions_the_judgments_and_names_their_files(tmp_path: Path) -> None:
    data = load_beir(_beir(tmp_path / "beir"), "all")
    assert [(q.id, q.split, [g.doc_id for g in q.golden]) for q in data.queries] == [
        ("q1", "test", ["d1"]), ("q2", "dev+test", ["d4", "d2"]), ("q3", "dev", ["d3"]),
        ("q4", "train", ["d1"])]
    assert data.judged_by == ("qrels/dev.tsv", "qrels/test.tsv", "qrels/train.tsv")
    assert load_beir(tmp_path / "beir", "dev").judged_by == ("qrels/dev.tsv",)


def test_tune_reads_a_beir_folder_by_split(tmp_path: Path, capsys: pytest.CaptureFixture,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragkit tune BEIR` tuned on qrels/test.tsv, called "all splits (test)", with --split
    all or none; it tunes on dev when there is one (as on other data sets), else every file."""
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    data = _beir(tmp_path / "beir")
    base = ["tune", str(data), "--embedder", "minilm", "--alphas", "0:1:0.5", "--rrf-ks", "60"]

    def first(*more: str) -> str:
        assert main([*base, *more]) == 0
        return capsys.readouterr().out.splitlines()[0]

    assert first() == "beir: 2 judged queries of split dev, 4 chunks"
    assert first("--split", "all") == ("beir: 4 judged queries of all splits (qrels/dev.tsv, "
                                       "qrels/test.tsv, qrels/train.tsv), 4 chunks")
    (data / "qrels" / "dev.tsv").unlink()
    assert first() == ("beir: 3 judged queries of all splits (qrels/test.tsv, "
                       "qrels/train.tsv), 4 chunks")


def test_a_beir_folder_without_judgments_is_one_line_that_names_no_missing_option(
        tmp_path: Path) -> None:
    """A BEIR folder without qrels/*.tsv stopped an eval not given --split with "no *.tsv
    file of judgments (--split all reads every one)"."""
    data = _beir(tmp_path / "beir")
    for tsv in (data / "qrels").iterdir():
        tsv.unlink()
    line = (f"ragkit: error: {data / 'qrels'}: no judgments (no *.tsv file; the queries of a "
            f"BEIR folder are judged by qrels/SPLIT.tsv)")
    for command in (["eval", str(data), "--embedder", "none"],
                    ["eval", str(data), "--embedder", "none", "--split", "all"]):
        done = subprocess.run([str(RAGKIT), *command], capture_output=True, text=True,
                              timeout=300)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n"), command


@pytest.mark.parametrize("judgments", ["no qrels folder", "an empty qrels folder"])
def test_ragkit_index_indexes_a_beir_folder_without_judgments(tmp_path: Path,
                                                             judgments: str) -> None:
    """Indexing needs only corpus.jsonl: `ragkit index` of a BEIR folder without qrels/*.tsv
    stopped with "qrels: no judgments", and a search of the index finds its documents."""
    data = _beir(tmp_path / "beir")
    for tsv in (data / "qrels").iterdir():
        tsv.unlink()
    if judgments == "no qrels folder":
        (data / "qrels").rmdir()
    index = tmp_path / "ix"
    done = subprocess.run([str(RAGKIT), "index", str(data), "--out", str(index), "--embedder",
                           "none"], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"indexed 4 documents as 4 chunks into {index}\n", "")
    run = tmp_path / "run.trec"
    found = subprocess.run([str(RAGKIT), "search", str(index), "--queries",
                            str(data / "queries.jsonl"), "--level", "doc", "--k", "1", "--out",
                            str(run)], capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    assert [line.split()[:3] for line in run.read_text().splitlines()] == [
        ["q1", "Q0", "d1"], ["q2", "Q0", "d2"], ["q3", "Q0", "d3"]]  # q4 "echo": no match
    (data / "corpus.jsonl").write_text((data / "corpus.jsonl").read_text()
                                       + json.dumps({"_id": "d5", "text": "echo"}) + "\n")
    updated = subprocess.run([str(RAGKIT), "index", str(data), "--out", str(index), "--update"],
                             capture_output=True, text=True, timeout=300)
    assert (updated.returncode, updated.stdout) == (
        0, f"updated {index}: 1 document added or changed, 0 removed, 4 unchanged; "
           f"5 chunks\n"), updated.stderr


def test_questions_read_the_documents_of_a_beir_folder_without_judgments(
        tmp_path: Path) -> None:
    """`ragkit questions generate` reads DOCS as `ragkit index` does: a BEIR folder's corpus
    without its queries or qrels (it was refused for want of qrels/*.tsv)."""
    data = _beir(tmp_path / "beir")
    shutil.rmtree(data / "qrels")
    documents, chunks = documents_of(data)
    assert ([(d.id, d.text) for d in documents], chunks) == (list(DOCS.items()), None)


def test_a_beir_corpus_without_a_document_is_named(tmp_path: Path) -> None:
    """A BEIR folder whose corpus.jsonl holds no document (empty, or blank lines) stopped
    `ragkit index` with "BM25 needs at least one document; the corpus is empty", naming no
    file, once its qrels were no longer read first. It is named, as an empty documents JSONL
    is, by index and eval alike, and no index is written."""
    data = _beir(tmp_path / "beir")
    for corpus in ("", "\n\n"):
        (data / "corpus.jsonl").write_text(corpus)
        for command in (["index", str(data), "--out", str(tmp_path / "ix"), "--embedder",
                         "none"], ["eval", str(data), "--embedder", "none"]):
            done = subprocess.run([str(RAGKIT), *command], capture_output=True, text=True,
                                  timeout=300)
            assert (done.returncode, done.stdout, done.stderr) == (
                2, "", f"ragkit: error: {data / 'corpus.jsonl'}: no documents\n"), command
    assert not (tmp_path / "ix").exists()
