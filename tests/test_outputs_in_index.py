"""An output written inside an index folder is refused before any work, in one line naming
the folder and the option: `ragkit search idx --out idx/run.trec` was accepted, and the
next `ragkit index … --out idx` then refused ("idx/run.trec: not written by ragkit, but
inside the index folder"), the folder being replaced whole. Every command that writes a file
or folder checks it: search, eval --per-query, questions generate/review/accept, ask --trace,
cookbook run/sweep, and index itself (an index inside another)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragkit.cli import main

DOCS = [{"id": "refunds", "text": "A refund is possible within 14 days of the first payment."},
        {"id": "sync", "text": "Background sync runs every 15 minutes while the app is open."}]


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An index `idx` and its inputs, in the working folder."""
    monkeypatch.chdir(tmp_path)
    Path("docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), "utf-8")
    Path("q.jsonl").write_text('{"id": "q1", "text": "refund days"}\n', "utf-8")
    assert main(["index", "docs.jsonl", "--out", "idx", "--embedder", "none"]) == 0
    (tmp_path / "root").mkdir()
    return tmp_path


COMMANDS = {
    "search": (["search", "idx", "--queries", "q.jsonl", "--out", "idx/run.trec"],
               "idx/run.trec", "--out"),
    "eval": (["eval", "--run", "run.trec", "--qrels", "qrels.tsv", "--per-query",
              "idx/bm25/per-query.csv"], "idx/bm25/per-query.csv", "--per-query"),
    "generate": (["questions", "generate", "docs.jsonl", "--out", "idx/golden.jsonl"],
                 "idx/golden.jsonl", "--out"),
    "review": (["questions", "review", "golden.jsonl", "--out", "idx/review.csv"],
               "idx/review.csv", "--out"),
    "accept": (["questions", "accept", "review.csv", "--golden", "golden.jsonl", "--out",
                "idx/accepted.jsonl"], "idx/accepted.jsonl", "--out"),
    "ask": (["ask", "--agent", "--root", "root", "--trace", "idx/trace.jsonl", "refunds?"],
            "idx/trace.jsonl", "--trace"),
    "cookbook": (["cookbook", "run", "--notebook", "none.ipynb", "--out", "idx/results"],
                 "idx/results", "--out"),  # a notebook that is not there: nothing ever runs
    "index": (["index", "docs.jsonl", "--out", "idx/inner", "--embedder", "none"],
              "idx/inner", "--out"),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_inside_an_index_folder_is_refused_in_one_line(here, capsys, command):
    argv, path, option = COMMANDS[command]
    before = sorted(os.listdir("idx"))
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"ragkit: error: {path}: is inside the index folder idx, which re-indexing replaces "
        f"whole (and refuses what it did not write); give {option} a path outside it"]
    assert sorted(os.listdir("idx")) == before
    assert main(["index", "docs.jsonl", "--out", "idx", "--embedder", "none"]) == 0


def test_a_link_into_an_index_folder_is_seen_through_and_a_path_beside_it_is_fine(here,
                                                                                 capsys):
    os.symlink("idx", "shortcut")
    assert main(["search", "idx", "--queries", "q.jsonl", "--out", "shortcut/run.trec",
                 "--mode", "bm25", "--k", "1"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "ragkit: error: shortcut/run.trec: is inside the index folder idx, which re-indexing "
        "replaces whole (and refuses what it did not write); give --out a path outside it"]
    assert main(["search", "idx", "--queries", "q.jsonl", "--out", "idx-run.trec",
                 "--mode", "bm25", "--k", "1"]) == 0
    assert Path("idx-run.trec").read_text().split()[:3] == ["q1", "Q0", "refunds#0"]
