"""Path arguments of the command line: an empty one is refused by the parser, naming the
argument, instead of meaning the current folder (`Path("")` is `.`)."""
import pytest

from ragkit.cli import main


@pytest.mark.parametrize("argv, named", [
    (["index", "", "--out", "idx", "--embedder", "none"], "docs"),
    (["index", "docs.jsonl", "--out", "", "--embedder", "none"], "--out"),
    (["search", "", "--queries", "q.jsonl", "--out", "r.trec"], "index"),
    (["search", "idx", "--queries", "", "--out", "r.trec"], "--queries"),
    (["search", "idx", "--queries", "q.jsonl", "--out", ""], "--out"),
    (["ask", "--index", "", "refund deadline"], "--index"),
    (["ask", "--agent", "--root", "", "refund deadline"], "--root"),
    (["tool", "grep", "--root", "", "--args", '{"pattern": "refund"}'], "--root"),
    (["questions", "generate", "", "--out", "g.jsonl"], "docs"),
    (["questions", "accept", "review.csv", "--golden", "", "--out", "a.jsonl"], "--golden"),
    (["eval", ""], "dataset"),
    (["eval", "--run", "", "--qrels", "qrels.tsv"], "--run"),
    (["tune", "data", "--questions", ""], "--questions"),
    (["cookbook", "run", "--notebook", ""], "--notebook"),
])
def test_an_empty_path_is_refused_naming_its_argument(tmp_path, monkeypatch, capsys, argv,
                                                      named):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refund.md").write_text("# Refunds\n\nRefunds are accepted within 7 days.\n")
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last.endswith(f": error: argument {named}: empty path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refund.md"]  # nothing written
