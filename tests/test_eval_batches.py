"""`ragkit eval DATASET` scores its questions a batch at a time, as `ragkit search` searches
them: a batch's rankings are scored and dropped before the next batch is searched, and the
table and per-query CSV are the ones scoring every ranking at once gave."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_search_batches import recorded_batches

from ragkit.cli import main

WORDS = "refund shipping invoice support gift price order return account berlin".split()


def _beir(root: Path) -> Path:
    """30 documents, 25 questions over the same ten words: BM25 ranks most of the documents
    for each, so a top k of the whole index holds every document."""
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": " ".join(
        WORDS[(i * j) % len(WORDS)] for j in range(1, 8))}) + "\n" for i in range(30)))
    (root / "queries.jsonl").write_text("".join(json.dumps(
        {"_id": f"q{i}", "text": f"{WORDS[i % 10]} {WORDS[(3 * i) % 10]}"}) + "\n"
        for i in range(25)))
    (root / "qrels" / "test.tsv").write_text("".join(
        f"q{i}\td{(7 * i) % 30}\t1\nq{i}\td{(11 * i + 3) % 30}\t1\n" for i in range(25)))
    return root


@pytest.mark.parametrize(("options", "batches"), [
    (["--k", "5"], [12, 12, 1]),  # 60 results: 12 questions × top 5
    (["--k", "1000000"], [2] * 12 + [1]),  # 2 questions × the index's 30 chunks
    # the reranker's 20 candidates a question are what a batch holds, not its top 5
    (["--k", "5", "--rerank", "offline", "--rerank-candidates", "20"], [3] * 8 + [1])])
def test_eval_holds_a_batch_of_rankings_at_a_time(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  options: list[str], batches: list[int]
                                                  ) -> None:
    # 5,000 questions at a huge --k held every ranking before scoring: 1.4 GB for BM25 alone
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    data = _beir(tmp_path / "beir")
    args = ["eval", str(data), "--embedder", "none", "--mode", "bm25", *options, "--by-kind"]
    assert main([*args, "--per-query", str(tmp_path / "whole.csv")]) == 0
    whole = capsys.readouterr().out
    sizes = recorded_batches(monkeypatch, "run")
    assert main([*args, "--per-query", str(tmp_path / "batched.csv")]) == 0
    batched = capsys.readouterr().out
    assert sizes == batches
    assert batched.replace("batched.csv", "whole.csv") == whole
    assert (tmp_path / "batched.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    assert whole.splitlines()[0] == "beir: 25 judged queries of split test, 30 chunks"
