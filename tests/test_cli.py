import json
import shutil
import subprocess
import sys

import pytest

from ragkit.cli import main
from ragkit.runs import read_trec

DOCS = [
    {"id": "acme-q2", "title": "ACME Corp quarterly report, Q2 2023",
     "text": "Revenue grew 3 % over the previous quarter. Margins held steady."},
    {"id": "globex-q2", "title": "Globex quarterly report, Q2 2023",
     "text": "Revenue grew 5 % over the previous quarter. Costs fell sharply."},
    {"id": "refund", "title": "Refund policy",
     "text": "Refunds are accepted within seven days of purchase with a receipt."},
]
QUERIES = [{"id": "q1", "text": "ACME revenue growth"}, {"id": "q2", "text": "refund deadline days"}]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path):
    return _jsonl(tmp_path / "docs.jsonl", DOCS), _jsonl(tmp_path / "q.jsonl", QUERIES)


def test_index_then_search_writes_a_trec_run(files, tmp_path, capsys):
    docs, queries = files
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    assert "indexed 3 documents as 3 chunks" in capsys.readouterr().out
    chunks = [json.loads(l) for l in (tmp_path / "idx" / "chunks.jsonl").read_text().splitlines()]
    assert [c["id"] for c in chunks] == ["acme-q2#0", "globex-q2#0", "refund#0"]
    assert chunks[0]["context"].startswith("Document: ACME Corp quarterly report")
    run = tmp_path / "run.trec"
    assert main(["search", str(tmp_path / "idx"), "--queries", str(queries), "--k", "2",
                 "--mode", "bm25", "--out", str(run)]) == 0
    lines = run.read_text().splitlines()
    assert len(lines) == 3  # q2 shares words with one document only: no zero-score filler
    qid, q0, chunk, rank, score, tag = lines[0].split()
    assert (qid, q0, chunk, rank, tag) == ("q1", "Q0", "acme-q2#0", "1", "bm25")
    assert [ident for ident, _ in read_trec(run)["q2"]] == ["refund#0"]


def test_bad_input_exits_2_with_file_line_field_and_no_index(tmp_path, capsys):
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"id": "b"}\n')
    assert main(["index", str(bad), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 2
    assert "docs.jsonl:2: field 'text': missing" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


@pytest.mark.parametrize("option, value, message", [
    ("--contextualizer", "magic", "unknown contextualizer 'magic'"),
    ("--tokenizer", "klingon", "unknown tokenizer 'klingon'"),
    ("--chunk-size", "4", "chunk size must be at least 16"),
    ("--embedder", "word2vec", "unknown embedder 'word2vec'; known embedders: minilm"),
])
def test_unknown_names_are_clear_errors(files, tmp_path, capsys, option, value, message):
    docs, _ = files
    args = {"--embedder": "none", option: value}
    code = main(["index", str(docs), "--out", str(tmp_path / "idx"),
                 *[item for pair in args.items() for item in pair]])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()


def test_search_on_a_folder_that_is_not_an_index(files, tmp_path, capsys):
    _, queries = files
    assert main(["search", str(tmp_path), "--queries", str(queries), "--out",
                 str(tmp_path / "r")]) == 2
    assert "not a ragkit index" in capsys.readouterr().err


def test_eval_prints_the_metric_table(tmp_path, capsys):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "golden").mkdir()
    for doc in DOCS:
        (tmp_path / "corpus" / f"{doc['id']}.md").write_text(
            f"---\ntitle: {doc['title']}\n---\n{doc['text']}\n")
    _jsonl(tmp_path / "golden" / "en.jsonl", [
        {"id": "g1", "question": "ACME revenue growth", "split": "test",
         "golden": [{"doc_id": "acme-q2.md", "span": "Revenue grew 3 %"}]},
        {"id": "g2", "question": "refund deadline", "split": "test",
         "golden": [{"doc_id": "refund.md", "span": "within seven days"}]}])
    assert main(["eval", str(tmp_path), "--embedder", "none", "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "2 judged queries, 3 chunks" in out
    header, bm25 = out.splitlines()[1:3]
    assert header.split()[:3] == ["Pass@5", "Pass@10", "Pass@20"]
    assert bm25.split()[:4] == ["bm25", "100.0", "100.0", "100.0"]


def test_console_script_is_installed():
    exe = shutil.which("ragkit") or f"{sys.prefix}/bin/ragkit"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("index", "search", "eval", "models", "cookbook"):
        assert command in out


def test_index_and_search_with_the_local_model(files, tmp_path, monkeypatch):
    """The default path end to end: MiniLM vectors, hybrid search, a cached second run."""
    from ragkit import embed, models
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    docs, queries = files
    assert main(["index", str(docs), "--out", str(tmp_path / "idx")]) == 0
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [
        "bm25", "chunks.jsonl", "dense_owners.npy", "dense_vectors.npy", "index.json"]
    assert (tmp_path / "cache.sqlite").is_file()
    for mode in ("dense", "hybrid"):
        run = tmp_path / f"{mode}.trec"
        assert main(["search", str(tmp_path / "idx"), "--queries", str(queries),
                     "--mode", mode, "--k", "3", "--out", str(run)]) == 0
        rankings = read_trec(run)
        assert rankings["q1"][0][0] == "acme-q2#0", mode
        assert rankings["q2"][0][0] == "refund#0", mode


@pytest.mark.parametrize("value, message", [
    ("0", "argument --k: must be at least 1, got 0"),
    ("-5", "argument --k: must be at least 1, got -5"),
    ("two", "argument --k: expected a whole number ≥ 1, got 'two'"),
])
def test_non_positive_k_is_refused_by_the_parser(files, tmp_path, capsys, value, message):
    _, queries = files
    for argv in (["search", str(tmp_path), "--queries", str(queries), "--out", str(tmp_path / "r")],
                 ["eval", str(tmp_path)]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, "--k", value])
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_mode_and_fusion_choices_come_from_the_package(monkeypatch, capsys):
    from ragkit import fusion, pipeline
    from ragkit.cli import build_parser
    monkeypatch.setattr(fusion, "FUSIONS", (*fusion.FUSIONS, "borda"))
    monkeypatch.setattr(pipeline, "MODES", ("bm25", "colbert"))
    args = build_parser().parse_args(["search", "idx", "--queries", "q.jsonl", "--out", "r",
                                      "--fusion", "borda", "--mode", "colbert"])
    assert (args.fusion, args.mode) == ("borda", "colbert")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "data", "--mode", "hybrid"])
    err = capsys.readouterr().err
    assert "invalid choice: 'hybrid'" in err and "colbert" in err
