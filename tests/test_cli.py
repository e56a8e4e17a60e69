import json
import shutil
import subprocess
import sys

import pytest

from ragkit.cli import main
from ragkit.runs import is_trec_run, read_trec

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


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("ragkit: error: ") and err.count("\n") == 1, err
    return err


def test_out_folder_with_user_files_is_refused_before_any_work(files, tmp_path, capsys):
    docs, _ = files
    user = tmp_path / "home"
    user.mkdir()
    (user / "thesis.tex").write_text("years of work")
    # the documents path does not even exist: the refusal comes before reading them
    assert main(["index", str(tmp_path / "absent.jsonl"), "--out", str(user)]) == 2
    assert "home: exists and is not a ragkit index; refusing" in _one_line_error(capsys)
    assert main(["index", str(docs), "--out", str(user), "--embedder", "none"]) == 2
    assert (user / "thesis.tex").read_text() == "years of work"
    assert [p.name for p in user.iterdir()] == ["thesis.tex"]


def test_out_that_is_a_file_is_refused_and_unchanged(files, tmp_path, capsys):
    docs, _ = files
    assert main(["index", str(docs), "--out", str(docs), "--embedder", "none"]) == 2
    assert "docs.jsonl: exists and is a file, not a ragkit index" in _one_line_error(capsys)
    assert docs.read_text() == "".join(json.dumps(r) + "\n" for r in DOCS)


def test_out_that_is_an_index_is_replaced(files, tmp_path, capsys):
    docs, _ = files
    out = str(tmp_path / "idx")
    assert main(["index", str(docs), "--out", out, "--embedder", "none"]) == 0
    fewer = _jsonl(tmp_path / "fewer.jsonl", DOCS[:2])
    assert main(["index", str(fewer), "--out", out, "--embedder", "none"]) == 0
    assert "indexed 2 documents as 2 chunks" in capsys.readouterr().out
    rows = (tmp_path / "idx" / "chunks.jsonl").read_text().splitlines()
    assert [json.loads(r)["id"] for r in rows] == ["acme-q2#0", "globex-q2#0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "docs.jsonl", "fewer.jsonl", "idx", "q.jsonl"]  # no temporary or old folder left


def test_out_under_a_file_is_a_clear_error(files, tmp_path, capsys):
    docs, _ = files
    assert main(["index", str(docs), "--out", str(docs / "idx"), "--embedder", "none"]) == 2
    assert f"cannot write here, {docs} is a file" in _one_line_error(capsys)


def test_search_out_replaces_only_a_trec_run(files, tmp_path, capsys):
    docs, queries = files
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    capsys.readouterr()  # drop the progress bars of the build
    notes = tmp_path / "notes.txt"
    notes.write_text("meeting at 10\n")
    search = ["search", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25"]
    assert main([*search, "--out", str(notes)]) == 2
    assert "notes.txt: exists and is not a TREC run; refusing" in _one_line_error(capsys)
    assert notes.read_text() == "meeting at 10\n"
    run = tmp_path / "run.trec"
    run.write_text("q9 Q0 old#0 1 1.000000 old\n")
    assert main([*search, "--out", str(run)]) == 0
    assert set(read_trec(run)) == {"q1", "q2"}


def test_corrupt_index_is_one_line_error(files, tmp_path, capsys):
    docs, queries = files
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    capsys.readouterr()  # drop the progress bars of the build
    (tmp_path / "idx" / "index.json").write_text("{not json")
    assert main(["search", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25",
                 "--out", str(tmp_path / "run.trec")]) == 2
    assert "idx/index.json:1: invalid JSON" in _one_line_error(capsys)
    assert not (tmp_path / "run.trec").exists()
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 2
    assert "idx: exists and is not a ragkit index" in _one_line_error(capsys)


@pytest.mark.parametrize("content, is_run", [
    (b"", True),
    (b"q1 Q0 a#0 1 0.5 bm25\n\nq1 Q0 b#0 2 0.25 bm25\n", True),
    (b"q1 Q0 a#0 1 0.5\n", False),               # 5 fields
    (b"q1 0 a#0 1\n", False),                     # a qrels line, not a run
    (b"q1 X a#0 1 0.5 bm25\n", False),
    (b"\xff\xfe binary", False),
])
def test_what_counts_as_a_trec_run(tmp_path, content, is_run):
    path = tmp_path / "run"
    path.write_bytes(content)
    assert is_trec_run(path) is is_run
