import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from ragkit import cli
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
    assert "2 judged queries of split test, 3 chunks" in out
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
        "bm25", "chunks.jsonl", "chunks.offsets.npy", "dense_owners.npy", "dense_vectors.npy",
        "index.json"]
    assert (tmp_path / "cache.sqlite").is_file()
    for mode in ("dense", "hybrid"):
        run = tmp_path / f"{mode}.trec"
        assert main(["search", str(tmp_path / "idx"), "--queries", str(queries),
                     "--mode", mode, "--k", "3", "--out", str(run)]) == 0
        rankings = read_trec(run)
        assert rankings["q1"][0][0] == "acme-q2#0", mode
        assert rankings["q2"][0][0] == "refund#0", mode


# --------------------------------------------------------------------------- evaluating own data

def _lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _run_file(path, rankings):
    """A TREC run from {qid: [doc, ...]}, scores strictly decreasing (no ties)."""
    return _lines(path, [f"{qid} Q0 {doc} {rank} {100 - rank} test"
                         for qid, docs in rankings.items()
                         for rank, doc in enumerate(docs, start=1)])


def _table(out):
    """The printed summary table as {column: value} of its single row."""
    lines = out.splitlines()
    header = lines[1].split()
    row = lines[2].split()
    return dict(zip(header, map(float, row[1:])))


def test_eval_run_against_trec_qrels_agrees_with_ir_measures(tmp_path, capsys):
    import ir_measures
    from ir_measures import RR, R, nDCG
    rankings = {"q1": ["d3", "d1", "d7", "d2", "d9", "d4", "d5", "d6", "d8", "d10", "d11", "d0"],
                "q2": ["d5", "d2", "d1", "d8", "d3", "d9", "d0", "d4"],
                "q3": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d0"]}
    run = _run_file(tmp_path / "run.trec", rankings)
    qrels = _lines(tmp_path / "qrels.txt", [
        "q1 0 d1 1", "q1 0 d2 1", "q1 0 d4 1", "q1 0 d11 1", "q1 0 d3 0",
        "q2 0 d5 1", "q2 0 d6 1",
        "q3 0 d0 1"])  # q3's only relevant document sits at rank 11: MRR over the top 10 is 0
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "10"]) == 0
    mine = _table(capsys.readouterr().out)
    assert list(mine) == ["Pass@5", "Pass@10", "R@5", "R@10", "MRR", "nDCG@10"]
    measures = [R @ 5, R @ 10, RR @ 10, nDCG @ 10]
    theirs = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(str(qrels)),
                                        ir_measures.read_trec_run(str(run)))
    assert mine["R@5"] == pytest.approx(theirs[R @ 5], abs=5e-4)
    assert mine["R@10"] == pytest.approx(theirs[R @ 10], abs=5e-4)
    assert mine["MRR"] == pytest.approx(theirs[RR @ 10], abs=5e-4)
    assert mine["nDCG@10"] == pytest.approx(theirs[nDCG @ 10], abs=5e-4)
    assert mine["Pass@10"] == pytest.approx(100 * theirs[R @ 10], abs=0.05)  # 1 decimal shown
    # by hand: q1 1/2, q2 1, q3 0
    assert mine["MRR"] == pytest.approx(0.5, abs=5e-4)


def test_eval_run_against_beir_qrels_by_hand_and_k5_drops_longer_cutoffs(tmp_path, capsys):
    run = _run_file(tmp_path / "run.trec", {"q1": ["d1", "d2", "d3"]})
    qrels = _lines(tmp_path / "test.tsv", ["query-id\tcorpus-id\tscore",
                                           "q1\td1\t0", "q1\td2\t1", "q1\td3\t2"])
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "5"]) == 0
    out = capsys.readouterr().out
    assert "1 judged query (0 without results, scored 0)" in out
    mine = _table(out)
    assert list(mine) == ["Pass@5", "R@5", "MRR", "nDCG@5"]  # no Pass@20 from a top 5
    # relevant d2, d3 at ranks 2, 3: DCG = 1/log2(3) + 1/log2(4); ideal = 1 + 1/log2(3)
    assert mine == pytest.approx({"Pass@5": 100.0, "R@5": 1.0, "MRR": 0.5,
                                  "nDCG@5": 0.693}, abs=5e-4)


def test_eval_run_with_an_id_holding_a_space_scores_the_same_against_trec_and_beir_qrels(
        tmp_path, capsys):
    docs = _jsonl(tmp_path / "docs.jsonl", [
        {"id": "my notes", "text": "the kettle boils water in two minutes"},
        {"id": "b", "text": "a toaster browns bread slices"},
        {"id": "c", "text": "the kettle has a blue light"}])
    queries = _jsonl(tmp_path / "q.jsonl", [{"id": "q1", "text": "kettle boil time"}])
    run = tmp_path / "run.trec"
    assert main(["index", str(docs), "--out", str(tmp_path / "ix"), "--embedder", "none"]) == 0
    assert main(["search", str(tmp_path / "ix"), "--queries", str(queries), "--k", "3",
                 "--mode", "bm25", "--out", str(run)]) == 0
    assert "my%20notes#0" in run.read_text()
    tsv = _lines(tmp_path / "qrels.tsv", ["q1\tmy notes#0\t1"])  # BEIR: the id as it is
    trec = _lines(tmp_path / "qrels.txt", ["q1 0 my%20notes#0 1"])  # TREC: as the run spells it
    capsys.readouterr()
    tables = []
    for qrels in (tsv, trec):
        assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "3"]) == 0
        tables.append(_table(capsys.readouterr().out))
    assert [c for c, _ in read_trec(run)["q1"]][:2] == ["c#0", "my notes#0"]
    # the relevant chunk at rank 2: MRR 1/2, nDCG 1/log2(3)
    assert tables[0] == tables[1] == {"Pass@3": 100.0, "R@3": 1.0, "MRR": 0.5, "nDCG@3": 0.631}


def test_eval_run_counts_and_warns_about_unmatched_queries(tmp_path, capsys):
    run = _run_file(tmp_path / "run.trec", {"q1": ["d1", "d2"], "extra": ["d1"]})
    qrels = _lines(tmp_path / "qrels.txt", ["q1 0 d2 1", "q3 0 d1 1"])
    assert main(["eval", "--run", str(run), "--qrels", str(qrels)]) == 0
    captured = capsys.readouterr()
    assert "2 judged queries (1 without results, scored 0), 1 run query without judgments " \
           "ignored" in captured.out
    assert _table(captured.out)["MRR"] == pytest.approx(0.25)  # q1: 1/2, q3 (no results): 0
    warnings = [line for line in captured.err.splitlines() if line.startswith("ragkit: warning")]
    assert len(warnings) == 2
    assert "ignored 1 query with no relevant judgment" in warnings[0] and "(extra)" in warnings[0]
    assert "no results for 1 judged query" in warnings[1] and "(q3)" in warnings[1]


@pytest.mark.parametrize("qrels_lines, message", [
    (["other 0 d1 1"], "share no query id"),
    (["q1 0 acme 1"], "retrieves none of the ids judged"),
])
def test_eval_run_with_no_overlap_is_an_error(tmp_path, capsys, qrels_lines, message):
    run = _run_file(tmp_path / "run.trec", {"q1": ["acme#0", "acme#1"]})
    qrels = _lines(tmp_path / "qrels.txt", qrels_lines)
    assert main(["eval", "--run", str(run), "--qrels", str(qrels)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragkit: error: ") and message in err and len(err.splitlines()) == 1


def test_eval_run_per_query_csv(tmp_path, capsys):
    import csv
    run = _run_file(tmp_path / "mine.trec", {"q1": ["d1", "d2", "d3"], "q2": ["d4", "d5"]})
    qrels = _lines(tmp_path / "qrels.txt", ["q1 0 d3 1", "q2 0 d9 1"])
    out = tmp_path / "per_query.csv"
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "10",
                 "--per-query", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == ["query", "method", "kind", "first_relevant_rank", "Pass@5",
                             "Pass@10", "R@5", "R@10", "MRR", "nDCG@10"]
    assert [(r["query"], r["method"], r["kind"], r["first_relevant_rank"]) for r in rows] == [
        ("q1", "mine", "", "3"), ("q2", "mine", "", "")]
    assert float(rows[0]["MRR"]) == pytest.approx(1 / 3)
    assert float(rows[1]["Pass@10"]) == 0.0
    # ragkit's own CSV may be replaced; a user's file may not
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--per-query", str(out)]) == 0
    user = _lines(tmp_path / "notes.csv", ["name,value"])
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--per-query", str(user)]) == 2
    assert "is not a per-query CSV" in capsys.readouterr().err
    assert user.read_text() == "name,value\n"


def test_search_level_doc_lists_each_document_once_at_its_best_chunk(tmp_path, capsys):
    docs = _jsonl(tmp_path / "docs.jsonl", [
        {"id": "manual", "text": "Refund requests need a receipt and the refund form.\n\n"
                                 "A refund is paid back to the card used for the refund.\n\n"
                                 "Refund refund refund: the refund desk handles refund mail.\n\n"
                                 "Shipping takes three days within the country."},
        {"id": "policy", "text": "Returns are accepted within seven days of purchase."},
        {"id": "faq", "text": "Questions about a refund go to the help desk."}])
    queries = _jsonl(tmp_path / "q.jsonl", [{"id": "q1", "text": "refund"}])
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none",
                 "--contextualizer", "none", "--chunk-size", "16", "--overlap", "0"]) == 0
    common = ["search", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25"]
    assert main([*common, "--k", "10", "--out", str(tmp_path / "chunks.trec")]) == 0
    chunks = read_trec(tmp_path / "chunks.trec")["q1"]
    # manual#0 and manual#1 tie (same length, two "refund" each): id descending
    assert [c for c, _ in chunks][:3] == ["manual#2", "manual#1", "manual#0"]
    assert [c for c, _ in chunks][3] == "faq#0"
    # the top 2 chunks are both the manual's: filling 2 documents needs a deeper search
    assert main([*common, "--k", "2", "--level", "doc", "--out", str(tmp_path / "doc.trec")]) == 0
    assert "top 2 documents" in capsys.readouterr().out
    assert read_trec(tmp_path / "doc.trec")["q1"] == [("manual", chunks[0][1]),
                                                      ("faq", chunks[3][1])]
    # the index's chunk table gives the documents without building every Chunk (at a
    # million chunks that took 40 s of a one-query search)
    from ragkit.eval_runs import docs_of
    from ragkit.pipeline import Pipeline
    table = Pipeline.load(tmp_path / "idx").chunks
    docs, doc_of = docs_of(table)
    assert docs == ["manual"] * 4 + ["policy", "faq"] and table._all is None
    assert doc_of(table.ids_at(np.array([5, 2]))[0]) == "faq"


def _shipped_dir(root):
    (root / "corpus").mkdir(parents=True)
    (root / "golden").mkdir()
    for doc in DOCS:
        (root / "corpus" / f"{doc['id']}.md").write_text(
            f"---\ntitle: {doc['title']}\n---\n{doc['text']}\n")
    _jsonl(root / "golden" / "en.jsonl", [
        {"id": "g1", "question": "ACME revenue growth", "split": "test", "kind": "lexical",
         "golden": [{"doc_id": "acme-q2.md", "span": "Revenue grew 3 %"}]},
        {"id": "g2", "question": "refund deadline", "split": "test", "kind": "lexical",
         "golden": [{"doc_id": "refund.md", "span": "within seven days"}]}])
    return root


def test_eval_dataset_k5_and_per_query_ranks(tmp_path, capsys):
    import csv
    data = _shipped_dir(tmp_path / "data")
    out = tmp_path / "rows.csv"
    assert main(["eval", str(data), "--embedder", "none", "--k", "5",
                 "--per-query", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["Pass@5", "R@5", "MRR", "nDCG@5"]
    rows = list(csv.DictReader(out.open()))
    assert [(r["query"], r["method"], r["kind"], r["first_relevant_rank"]) for r in rows] == [
        ("g1", "bm25", "lexical", "1"), ("g2", "bm25", "lexical", "1")]


def test_eval_with_an_index_of_other_data_is_an_error(files, tmp_path, capsys):
    docs, _ = files
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    data = _shipped_dir(tmp_path / "data")  # its document ids are file names: acme-q2.md, ...
    assert main(["eval", str(data), "--index", str(tmp_path / "idx")]) == 2
    assert "index built from other data" in capsys.readouterr().err


def test_eval_beir_split_reads_its_qrels_and_warns_about_missing_queries(tmp_path, capsys):
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": d["id"], "title": d["title"], "text": d["text"]}
                                       for d in DOCS])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "t1", "text": "ACME revenue growth"},
                                        {"_id": "v1", "text": "refund within seven days"}])
    (tmp_path / "qrels").mkdir()
    _lines(tmp_path / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "t1\tacme-q2\t1"])
    _lines(tmp_path / "qrels" / "dev.tsv", ["v1\trefund\t1", "v2\tacme-q2\t1"])
    assert main(["eval", str(tmp_path), "--split", "dev", "--embedder", "none"]) == 0
    captured = capsys.readouterr()
    assert "1 judged query of split dev, 3 chunks" in captured.out
    assert _table(captured.out)["MRR"] == 1.0  # v1 finds the refund policy first
    assert "ragkit: warning: " in captured.err
    assert "left out 1 judged query not in" in captured.err and "(v2)" in captured.err
    assert main(["eval", str(tmp_path), "--split", "train", "--embedder", "none"]) == 2
    assert "splits with qrels: dev, test" in capsys.readouterr().err


def test_eval_needs_a_dataset_or_a_run_with_qrels(tmp_path, capsys):
    assert main(["eval"]) == 2
    assert main(["eval", "--run", str(tmp_path / "r.trec")]) == 2
    assert "--run and --qrels go together" in capsys.readouterr().err


def _subparser(parser, name: str):
    import argparse
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("command", ["index", "search", "eval", "cookbook run",
                                     "cookbook sweep"])
def test_help_shows_every_default(command, capsys):
    import argparse
    from ragkit.cli import build_parser
    parser = build_parser()
    for name in command.split():
        parser = _subparser(parser, name)
    with pytest.raises(SystemExit):
        main([*command.split(), "--help"])
    text = " ".join(capsys.readouterr().out.split())  # undo line wrapping
    shown = [a for a in parser._actions if a.option_strings
             and a.default not in (None, False, "", argparse.SUPPRESS)]
    assert shown
    for action in shown:
        assert f"(default: {action.default})" in text, action.option_strings
    if command in ("search", "eval"):
        assert "--k K results per query (default: 20)" in text


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
    assert "idx/index.json:1: malformed JSON" in _one_line_error(capsys)
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
    from ragkit import config
    from ragkit.cli import build_parser
    monkeypatch.setattr(config, "FUSIONS", (*config.FUSIONS, "borda"))
    monkeypatch.setattr(config, "MODES", ("bm25", "colbert"))
    args = build_parser().parse_args(["search", "idx", "--queries", "q.jsonl", "--out", "r",
                                      "--fusion", "borda", "--mode", "colbert"])
    assert (args.fusion, args.mode) == ("borda", "colbert")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "data", "--mode", "hybrid"])
    err = capsys.readouterr().err
    assert "invalid choice: 'hybrid'" in err and "colbert" in err


def test_eval_of_a_folder_without_golden_questions_says_what_is_missing(tmp_path):
    """A corpus folder with no golden/ (or an empty one) is one line saying the questions are
    missing, not "no queries in split 'dev' (splits: [])"."""
    from cli_errors import one_error_line
    (tmp_path / "mine" / "corpus").mkdir(parents=True)
    (tmp_path / "mine" / "corpus" / "a.md").write_text("hello world\n")
    for _ in range(2):  # no golden/, then an empty golden/
        done = subprocess.run([sys.executable, "-m", "ragkit.cli", "eval", str(tmp_path / "mine"),
                               "--split", "dev", "--mode", "bm25"],
                              capture_output=True, text=True)
        assert one_error_line(done) == ("ragkit: error: mine: no questions to score (a labelled "
                                        "folder needs golden/*.jsonl beside its documents)")
        (tmp_path / "mine" / "golden").mkdir(exist_ok=True)


def test_eval_prints_each_metric_at_one_precision(tmp_path, capsys):
    """Pass@5 printed 100.000 / 96.429 beside Pass@20 100.0 (pandas rounded the whole table
    to 3 decimals and dropped the zeros of a column that happened to round whole)."""
    run = _lines(tmp_path / "run.trec", [f"q{q} Q0 d{d} {d + 1} {10 - d} t"
                                        for q in range(7) for d in range(6)])
    qrels = _lines(tmp_path / "qrels.txt", [f"q{q} 0 d{q % 7} 1" for q in range(7)])
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "5"]) == 0
    header, row = capsys.readouterr().out.splitlines()[-2:]
    cells = dict(zip(header.split(), row.split()[1:]))
    assert cells["Pass@5"] == "71.4" and cells["MRR"] == "0.326"  # 5 of 7; (1+½+⅓+¼+⅕)/7


@pytest.mark.parametrize("option, message", [
    (["--embedder", "e5-smal"], "unknown embedder 'e5-smal'; known embedders: "),
    (["--tokenizer", "wordz"], "unknown tokenizer 'wordz'; known tokenizers: "),
    (["--contextualizer", "structual"], "unknown contextualizer 'structual' (known: ")])
def test_a_mistyped_name_is_refused_before_any_document_is_read(tmp_path, capsys, option,
                                                                message):
    """On a big folder the typo was reported only after every file was loaded: here the
    folder's one file is not UTF-8, and that error used to come first."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_bytes(b"caf\xe9 menu\n")
    assert main(["index", str(docs), "--out", str(tmp_path / "ix"), *option]) == 2
    assert capsys.readouterr().err.startswith(f"ragkit: error: {message}")


def test_a_count_of_one_is_singular():
    """"indexed 1 documents as 1 chunks", "1 tool calls", "reranked 1 queries"."""
    from ragkit.rerank import RerankStage
    from ragkit.rerank.offline import OfflineReranker
    from ragkit.text_stats import counted
    assert [counted(n, "chunk") for n in (0, 1, 2)] == ["0 chunks", "1 chunk", "2 chunks"]
    assert [counted(n, "query", "queries") for n in (1, 2)] == ["1 query", "2 queries"]
    # a large count is read at a glance: "indexed 8931 chunks" was not
    assert counted(8931, "chunk") == "8,931 chunks"
    stage = RerankStage(OfflineReranker())
    stage.queries = 1
    assert stage.summary() == "reranker offline: reranked 1 query"


def test_a_mistyped_index_path_is_named_as_missing(tmp_path, capsys):
    """It said "not a ragkit index (no index.json)" of a folder that does not exist."""
    assert main(["ask", "--index", str(tmp_path / "nonexist"), "hello"]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {tmp_path / 'nonexist'}: no such "
                                       f"index folder\n")


def test_eval_without_data_and_an_agent_root_that_is_a_file_say_so(tmp_path, capsys):
    assert main(["eval"]) == 2  # it said "(not both)" when neither was given
    assert capsys.readouterr().err == ("ragkit: error: give a DATASET folder, or --run RUN "
                                       "--qrels QRELS\n")
    (tmp_path / "a.txt").write_text("x")
    assert main(["ask", "--agent", "--root", str(tmp_path / "a.txt"), "q"]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {tmp_path / 'a.txt'}: --root: a file, "
                                       f"not a folder\n")


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """`ragkit eval --run … | head -1` printed a BrokenPipeError traceback."""
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "r.run").write_text("".join(f"q{i} Q0 d1 1 3.0 t\n" for i in range(3000)))
    (tmp_path / "r.qrels").write_text("".join(f"q{i} 0 d1 1\n" for i in range(3000)))
    ragkit = Path(sys.executable).parent / "ragkit"
    proc = subprocess.Popen([str(ragkit), "tool", "glob", "--root", str(Path(__file__).parent),
                             "--args", '{"pattern": "**/*"}'], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # as `head -c 10` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 141) and "Traceback" not in err, err
    shell = subprocess.run(f"'{ragkit}' eval --run r.run --qrels r.qrels --per-query - | head -1",
                           shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr, shell.stderr


def test_an_escape_sequence_in_an_id_is_shown_escaped_not_obeyed(tmp_path, capsys):
    """A qrels id `q\\x1b[31mRED` reached the terminal raw in eval's warning."""
    from ragkit.cli import main
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 3.0 t\n")
    (tmp_path / "e.qrels").write_text("q\x1b[31mRED 0 d1 1\nq1 0 d1 1\n")
    assert main(["eval", "--run", str(tmp_path / "r.run"), "--qrels",
                 str(tmp_path / "e.qrels")]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "(q\\x1b[31mRED)" in err


def test_an_escape_sequence_in_a_document_id_is_percent_encoded_in_the_run(tmp_path):
    """A JSONL id `x ESC ]0;pwned BEL y` went raw into the TREC run: `cat run.txt` retitled
    the terminal. Encoded as the run format encodes white space, it reads back as the id."""
    from ragkit.cli import main
    from ragkit.runs import read_trec
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "x\\u001b]0;pwned\\u0007y", "text": "The refund policy allows '
                    'returns."}\n')
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "refund"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    assert main(["search", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.jsonl"),
                 "--out", str(tmp_path / "run.txt"), "--mode", "bm25"]) == 0
    line = (tmp_path / "run.txt").read_text()
    assert line.startswith("q1 Q0 x%1B]0;pwned%07y#0 1 ") and "\x1b" not in line
    assert read_trec(tmp_path / "run.txt")["q1"][0][0] == "x\x1b]0;pwned\x07y#0"


def test_an_index_is_not_written_over_the_folder_the_user_is_in(tmp_path, monkeypatch, capsys):
    """`ragkit index ../docs --out .` in an empty folder said it indexed, and left the shell
    in the deleted old folder (the new one replaced it): `ls` showed nothing."""
    from ragkit.cli import main
    docs, here = tmp_path / "docs", tmp_path / "here"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n")
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["index", str(docs), "--out", ".", "--embedder", "none"]) == 2
    assert capsys.readouterr().err == ("ragkit: error: .: is the folder you are in (or holds "
                                       "it), which writing a ragkit index replaces; give "
                                       "another path, or run from elsewhere\n")
    assert here.is_dir() and list(here.iterdir()) == []
    monkeypatch.chdir(tmp_path)
    assert main(["index", str(docs), "--out", "here", "--embedder", "none"]) == 0


def test_an_empty_questions_file_or_folder_is_named(tmp_path, capsys):
    """An empty --questions folder said "DATASET: no queries … give labelled questions with
    --questions FILE", to a user who had given one."""
    from ragkit.cli import main
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n")
    (tmp_path / "none").mkdir()
    (tmp_path / "empty.jsonl").write_text("")
    for given, why in (("none", "no questions (no *.jsonl file in this folder)"),
                       ("empty.jsonl", "no questions")):
        assert main(["eval", str(docs), "--questions", str(tmp_path / given), "--mode", "bm25",
                     "--embedder", "none"]) == 2
        assert capsys.readouterr().err == f"ragkit: error: {tmp_path / given}: {why}\n"


def test_search_reads_an_index_without_vectors_with_bm25_by_default(tmp_path, capsys):
    """`ragkit search` stopped with "use mode 'bm25'" on an index built with --embedder none,
    where `eval` showed its bm25 row and `ask` used BM25."""
    from ragkit.cli import main
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Kettle\n\nThe kettle boils water.\n")
    (docs / "b.md").write_text("# Toaster\n\nThe toaster browns bread.\n")
    (docs / "c.md").write_text("# Fridge\n\nThe fridge keeps milk cold.\n")
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "toaster bread"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "ix"), "--embedder", "none"]) == 0
    argv = ["search", str(tmp_path / "ix"), "--queries", str(tmp_path / "q.jsonl"), "--k", "1",
            "--out", str(tmp_path / "run.trec")]
    assert main(argv) == 0
    line = (tmp_path / "run.trec").read_text().split()
    assert line[:4] + line[5:] == ["q1", "Q0", "b.md#0", "1", "bm25"]
    assert main([*argv, "--mode", "hybrid"]) == 2  # asked for, still refused in one line
    assert "no dense vectors" in capsys.readouterr().err


def test_a_kind_label_with_an_escape_sequence_prints_escaped_in_the_by_kind_table(tmp_path,
                                                                                 capsys):
    from ragkit.cli import main
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The cat sat on the mat.\n")
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "question": "Where did the cat sit?", '
                                      '"kind": "\\u001b[31mRED", "golden": [{"doc_id": '
                                      '"a.txt", "span": "the mat"}]}\n')
    assert main(["eval", str(docs), "--questions", str(tmp_path / "g.jsonl"), "--mode", "bm25",
                 "--by-kind", "--embedder", "none", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mRED" in out


def test_the_by_kind_table_lines_up_korean_kind_labels(tmp_path, capsys):
    """A Hangul letter takes two terminal columns: pandas counted one, so a row labelled
    "어휘" ended two columns past the header and the rows of ASCII labels."""
    import unicodedata
    from ragkit.cli import main
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The cat sat on the mat.\n")
    (tmp_path / "g.jsonl").write_text(
        '{"id": "q1", "question": "Where did the cat sit?", "kind": "어휘", "golden": '
        '[{"doc_id": "a.txt", "span": "the mat"}]}\n{"id": "q2", "question": "What sat?", '
        '"kind": "paraphrase", "golden": [{"doc_id": "a.txt", "span": "The cat"}]}\n',
        encoding="utf-8")
    assert main(["eval", str(docs), "--questions", str(tmp_path / "g.jsonl"), "--mode", "bm25",
                 "--by-kind", "--embedder", "none", "--k", "1"]) == 0
    table = capsys.readouterr().out.split("by query kind\n")[1].splitlines()[:4]
    widths = {sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
              for line in table}
    assert any("어휘" in line for line in table) and len(widths) == 1, table


def test_ragkit_tool_prints_bidi_overrides_and_c1_controls_escaped_as_json(tmp_path, capsys):
    """A file's U+202E turned the printed tool_result around in the terminal and its U+009B
    (a C1 escape) was printed raw; Korean stays as written and the JSON reads back whole."""
    root = tmp_path / "root"
    root.mkdir()
    text = "규정 gate \u202eopens\u202c at six \u009b31m red\n"
    (root / "note\u2067.md").write_text(text, encoding="utf-8")
    assert main(["tool", "read_file", "--root", str(root), "--args",
                 json.dumps({"path": "note\u2067.md"})]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\u202e\u202c\u2067\u009b")
    assert "규정" in out and "\\u202e" in out and "\\u009b" in out
    assert "\u202eopens\u202c" in json.loads(out)["content"]


def test_main_leaves_sys_warnoptions_as_it_found_them(tmp_path, capsys, monkeypatch):
    """The resource tracker's -W option was appended to `sys.warnoptions` for the rest of the
    process: a caller's own spawned workers and interpreters inherited it after `main`
    returned. It is there while a command runs (when a pool may start the tracker), only."""
    run = _run_file(tmp_path / "run.trec", {"q1": ["d1", "d2"]})
    qrels = _lines(tmp_path / "qrels.txt", ["q1 0 d1 1"])
    monkeypatch.setattr(sys, "warnoptions", ["default::DeprecationWarning"])
    seen = []
    apply = cli.apply_api_options
    monkeypatch.setattr(cli, "apply_api_options",
                        lambda args: (seen.append(list(sys.warnoptions)), apply(args)))
    for _ in range(2):
        assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--k", "5"]) == 0
        assert sys.warnoptions == ["default::DeprecationWarning"]
    assert main(["eval", "--run", str(tmp_path / "missing.trec"), "--qrels", str(qrels)]) == 2
    assert sys.warnoptions == ["default::DeprecationWarning"]
    assert seen == [["default::DeprecationWarning", cli.QUIET_TRACKER]] * 3
    capsys.readouterr()
