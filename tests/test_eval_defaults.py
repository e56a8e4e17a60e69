"""`ragkit eval DATASET`'s defaults: the test split when there is one (the offline reranker and
the fusion weights were fitted on dev), said in the output; the stack `ragkit search` uses."""
import csv
import json

import pytest

from ragkit.cli import main

DOCS = {"kettle.md": "The kettle boils water in two minutes.",
        "toaster.md": "A toaster browns bread slices evenly.",
        "fridge.md": "The fridge keeps milk cold for a week."}
GOLDEN = [("t1", "test", "kettle water", "kettle.md", "boils water"),
          ("t2", "test", "cold milk", "fridge.md", "keeps milk cold"),
          ("d1", "dev", "browned bread", "toaster.md", "browns bread")]


def _data(root, splits=True):
    (root / "corpus").mkdir(parents=True)
    (root / "golden").mkdir()
    for name, text in DOCS.items():
        (root / "corpus" / name).write_text(text + "\n")
    (root / "golden" / "en.jsonl").write_text("".join(
        json.dumps({"id": qid, "question": question, "split": split if splits else "dev",
                    "kind": "lexical", "golden": [{"doc_id": doc, "span": span}]}) + "\n"
        for qid, split, question, doc, span in GOLDEN))
    return root


def _scored(capsys, argv, tmp_path):
    rows = tmp_path / "rows.csv"
    assert main([*argv, "--per-query", str(rows)]) == 0
    out = capsys.readouterr().out
    return out.splitlines()[0], sorted({r["query"] for r in csv.DictReader(rows.open())})


def test_eval_scores_the_test_split_by_default_and_says_which(tmp_path, capsys):
    data = _data(tmp_path / "data")
    base = ["eval", str(data), "--embedder", "none"]
    assert _scored(capsys, base, tmp_path) == (
        "data: 2 judged queries of split test, 3 chunks", ["t1", "t2"])
    assert _scored(capsys, [*base, "--split", "dev"], tmp_path) == (
        "data: 1 judged query of split dev, 3 chunks", ["d1"])
    assert _scored(capsys, [*base, "--split", "all"], tmp_path) == (
        "data: 3 judged queries of all splits (dev, test), 3 chunks", ["d1", "t1", "t2"])


def test_eval_without_a_test_split_scores_every_query(tmp_path, capsys):
    data = _data(tmp_path / "data", splits=False)
    assert _scored(capsys, ["eval", str(data), "--embedder", "none"], tmp_path) == (
        "data: 3 judged queries of all splits (dev), 3 chunks", ["d1", "t1", "t2"])


def test_eval_says_the_unanswerable_questions_are_not_scored(tmp_path, capsys):
    """"2 judged queries" for a file of 4 read like lost questions: the 2 with no golden
    items (unanswerable) have nothing to rank against, and the count says so."""
    data = _data(tmp_path / "data")
    with (data / "golden" / "en.jsonl").open("a") as f:
        for qid in ("u1", "u2"):
            f.write(json.dumps({"id": qid, "question": "Which oven bakes pizza?",
                                "split": "test", "kind": "unanswerable", "golden": []}) + "\n")
    assert _scored(capsys, ["eval", str(data), "--embedder", "none"], tmp_path) == (
        ("data: 2 judged queries of split test, 3 chunks; 2 unanswerable questions (no golden "
         "items) not scored"), ["t1", "t2"])


def _rows(out):
    """The method names of the printed summary table (rows after its header line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Pass@5"]) + 1
    names = []
    for line in lines[start:]:
        if not line.strip() or not line[0].isalpha() or line.startswith("reranker"):
            break
        names.append(line.split()[0])
    return names


def test_eval_uses_the_search_stack_unless_told_otherwise(tmp_path, capsys):
    """Hybrid is reranked by the offline reranker, as `ragkit search` does by default."""
    from ragkit import models
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    data = _data(tmp_path / "data")
    assert main(["index", str(data), "--out", str(tmp_path / "idx")]) == 0
    base = ["eval", str(data), "--index", str(tmp_path / "idx"), "--k", "5"]
    capsys.readouterr()
    assert main(base) == 0
    captured = capsys.readouterr()
    assert _rows(captured.out) == ["bm25", "dense", "hybrid+offline"]
    assert "reranker offline: reranked 2 queries" in captured.out
    assert "first-stage order" not in captured.out + captured.err
    assert main([*base, "--rerank", "none"]) == 0
    assert _rows(capsys.readouterr().out) == ["bm25", "dense", "hybrid"]
    assert main([*base, "--mode", "bm25", "--mode", "hybrid", "--rerank", "offline"]) == 0
    assert _rows(capsys.readouterr().out) == ["bm25+offline", "hybrid+offline"]


def test_eval_and_tune_with_an_index_refuse_an_index_option_it_was_not_built_with(tmp_path,
                                                                                  capsys):
    """`eval DATA --index IDX --embedder minilm` scored IDX's own vectors under a table
    labelled `dense`, the option silently ignored."""
    data = _data(tmp_path / "data")
    assert main(["index", str(data), "--out", str(tmp_path / "ix"), "--embedder", "none"]) == 0
    capsys.readouterr()
    for command in ("eval", "tune"):
        assert main([command, str(data), "--index", str(tmp_path / "ix"), "--chunk-size",
                     "64"]) == 2
        assert capsys.readouterr().err == (
            f"ragkit: error: {tmp_path / 'ix'}: --index is searched as built, and --chunk-size "
            f"64 differs from its 512; rebuild the index to change it\n")
    assert main(["eval", str(data), "--index", str(tmp_path / "ix"), "--embedder", "none",
                 "--chunk-size", "512"]) == 0  # the index's own: no objection
