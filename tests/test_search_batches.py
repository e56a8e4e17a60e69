"""`ragkit search` holds a bounded number of results: queries are searched a batch at a time
and the run is written as each batch comes, the same run as one search of them all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragkit.cli import main
from ragkit.cli import retrieval
from ragkit.pipeline import Pipeline
from ragkit.runs import read_trec

WORDS = "refund shipping invoice support gift price order return account berlin".split()


@pytest.fixture
def small_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index of 30 documents built without embeddings, and a private RAGKIT_HOME."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": " ".join(
        WORDS[(i * j) % len(WORDS)] for j in range(1, 8))}) + "\n" for i in range(30)))
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    return tmp_path / "idx"


def _queries(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "text": f"{WORDS[i % 10]} "
                                        f"{WORDS[(3 * i) % 10]}"}) + "\n" for i in range(count)))
    return path


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_search_holds_a_batch_of_results_at_a_time(small_index: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   level: str) -> None:
    # a huge --k over many queries held every ranking at once: 100 queries × top 1M of a 1M
    # index grew past 14 GB; now at most SEARCH_HITS results are searched together
    queries = _queries(tmp_path / "q.jsonl", 25)
    args = ["search", str(small_index), "--queries", str(queries), "--mode", "bm25",
            "--k", "1000000", "--level", level]
    assert main(args + ["--out", str(tmp_path / "whole.trec")]) == 0
    sizes: list[int] = []
    search = Pipeline.search

    def recorded(self: Pipeline, texts, k=20, config=None):  # type: ignore[no-untyped-def]
        sizes.append(len(texts) * k)
        return search(self, texts, k, config)

    monkeypatch.setattr(Pipeline, "search", recorded)
    monkeypatch.setattr(retrieval, "SEARCH_HITS", 60)
    assert main(args + ["--out", str(tmp_path / "batched.trec")]) == 0
    assert len(sizes) > 1 and max(sizes) <= 60
    assert read_trec(tmp_path / "batched.trec") == read_trec(tmp_path / "whole.trec")
    assert (tmp_path / "batched.trec").read_bytes() == (tmp_path / "whole.trec").read_bytes()


def test_batch_size_is_whole_dense_blocks_or_one_query() -> None:
    assert retrieval.batch_size(20) == 9984  # 39 blocks of 256 queries
    assert retrieval.batch_size(1_000_000) == 1
    assert retrieval.batch_size(1000) == 200


def test_a_batch_counts_the_reranker_candidates_each_query_holds(
        small_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches were sized by --k alone: at the default k 20 a query holds the reranker's 150
    candidates (and a hybrid's), 7.5 times what the batch was sized for."""
    queries = _queries(tmp_path / "q.jsonl", 25)
    args = ["search", str(small_index), "--queries", str(queries), "--mode", "bm25",
            "--rerank", "offline", "--rerank-candidates", "30", "--k", "5"]
    assert main(args + ["--out", str(tmp_path / "whole.trec")]) == 0
    batches = recorded_batches(monkeypatch, "search")
    assert main(args + ["--out", str(tmp_path / "batched.trec")]) == 0
    assert batches == [2] * 12 + [1]  # 60 results / 30 candidates each: 2 queries a batch
    assert (tmp_path / "batched.trec").read_bytes() == (tmp_path / "whole.trec").read_bytes()


def recorded_batches(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Batches of about 60 results from now on, and the list `Pipeline.<method>` (search or
    run) appends each call's number of queries to."""
    sizes: list[int] = []
    original = getattr(Pipeline, method)

    def recorded(self: Pipeline, queries, k=20, config=None):  # type: ignore[no-untyped-def]
        sizes.append(len(queries))
        return original(self, queries, k, config)

    monkeypatch.setattr(Pipeline, method, recorded)
    monkeypatch.setattr(retrieval, "SEARCH_HITS", 60)
    return sizes
