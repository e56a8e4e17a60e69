"""Path arguments of the command line: an empty one is refused by the parser, naming the
argument, instead of meaning the current folder (`Path("")` is `.`)."""
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.cli import main
from ragkit.runs import read_trec


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
    _refused_by_the_parser(tmp_path, monkeypatch, capsys, argv, f"{named}: empty path")


def _refused_by_the_parser(tmp_path, monkeypatch, capsys, argv: list[str], said: str) -> None:
    """`ragkit ARGV` run in a folder holding refund.md: exit 2, the parser's last line ends in
    "argument SAID", and nothing is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refund.md").write_text("# Refunds\n\nRefunds are accepted within 7 days.\n")
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last.endswith(f": error: argument {said}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refund.md"]  # nothing written


@pytest.mark.parametrize("argv, named", [
    (["index", "refund.md", "--out", "-", "--embedder", "none"], "--out"),
    (["questions", "generate", "refund.md", "--out", "-"], "--out"),
    (["questions", "accept", "review.csv", "--golden", "g.jsonl", "--out", "-"], "--out"),
    (["tool", "notes_save", "--root", ".", "--notes", "-", "--approve"], "--notes"),
])
def test_a_dash_is_refused_where_standard_output_cannot_be_written(tmp_path, monkeypatch,
                                                                   capsys, argv, named):
    """'-' was written as a file or folder named "-"; where the output is a folder or a file
    read back later, it is refused by the parser, naming the argument."""
    _refused_by_the_parser(tmp_path, monkeypatch, capsys, argv,
                           f"{named}: '-' (standard output) is not supported here; name a "
                           f"file or folder")


def test_search_out_dash_writes_the_run_to_standard_output(tmp_path):
    """`ragkit search … --out - > run.trec` (or a pipe) gets the run alone: the summary goes
    to standard error, and no file named "-" is written."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "refund.md").write_text("# Refunds\n\nRefunds: within 7 days.\n")
    (tmp_path / "docs" / "ship.md").write_text("# Shipping\n\nParcels ship in 2 days.\n")
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "refunds within"}\n'
                                      '{"id": "q2", "text": "parcels ship"}\n')
    ragkit = str(Path(sys.executable).parent / "ragkit")
    subprocess.run([ragkit, "index", "docs", "--out", "idx", "--embedder", "none"],
                   cwd=tmp_path, check=True, capture_output=True)
    done = subprocess.run(f"'{ragkit}' search idx --queries q.jsonl --k 1 --out - > run.trec",
                          shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == ("wrote 2 queries × top 1 chunk to standard "
                                            "output")
    run = read_trec(tmp_path / "run.trec")
    assert {q: [chunk for chunk, _ in hits] for q, hits in run.items()} == {
        "q1": ["refund.md#0"], "q2": ["ship.md#0"]}
    assert not (tmp_path / "-").exists()
