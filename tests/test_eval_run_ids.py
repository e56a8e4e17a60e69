"""`ragkit eval --run RUN --qrels QRELS` matches a run's ids to the judged ones as trec_eval
would, found by scoring hand-made runs against trec_eval's numbers (pytrec_eval):

- an id written in Unicode's composed and decomposed forms is one id (ragkit reads both in
  NFC), so the same id twice in a run or in qrels is refused as a repeat — it was merged after
  the check for repeats: nDCG@10 1.631, or a relevant judgment silently overridden;
- another tool's run of a BEIR corpus writes an id with a `%` as it is (`AT%26T`), where
  ragkit %-decodes its own runs' ids: that run's documents were scored as never found."""
from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from ragkit.cli import main
from ragkit.runs import write_trec

COMPOSED, DECOMPOSED = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))


def _eval(tmp_path: Path, run: str, qrels: str, qrels_name: str = "qrels.txt") -> int:
    (tmp_path / "run.trec").write_text(run, encoding="utf-8")
    (tmp_path / qrels_name).write_text(qrels, encoding="utf-8")
    return main(["eval", "--run", str(tmp_path / "run.trec"), "--qrels",
                 str(tmp_path / qrels_name), "--k", "20"])


def _row(out: str) -> dict[str, str]:
    """The metrics row of `eval`'s table, by column."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Pass@5"])
    return dict(zip(lines[at].split(), lines[at + 1].split()[1:]))


def test_one_id_in_two_unicode_forms_in_a_run_is_refused_as_listed_twice(tmp_path, capsys):
    run = f"q1 Q0 {COMPOSED} 1 3 t\nq1 Q0 {DECOMPOSED} 2 2 t\n"
    assert _eval(tmp_path, run, f"q1 0 {COMPOSED} 1\n") == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {tmp_path / 'run.trec'}:2: field 'doc_id': '{COMPOSED}' is listed for "
        f"query 'q1' already (line 1)\n")


@pytest.mark.parametrize("qrels_name, field, line", [("qrels.txt", "docid", "q1 0 {} {}\n"),
                                                     ("qrels.tsv", "corpus-id", "q1\t{}\t{}\n")])
def test_one_id_in_two_unicode_forms_in_qrels_is_refused_as_judged_twice(tmp_path, capsys,
                                                                         qrels_name, field,
                                                                         line):
    """The last grade won: the relevant `café` became non-relevant, MRR 0 where trec_eval
    gives 1.0."""
    qrels = "".join(line.format(doc, grade)
                    for doc, grade in ((COMPOSED, 1), (DECOMPOSED, 0), ("other", 1)))
    assert _eval(tmp_path, f"q1 Q0 {COMPOSED} 1 3 t\n", qrels, qrels_name) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {tmp_path / qrels_name}:2: field '{field}': '{COMPOSED}' is judged "
        f"for query 'q1' already (line 1); keep one of the two lines\n")


def test_another_tools_run_of_a_beir_corpus_matches_ids_holding_a_percent(tmp_path, capsys):
    """R@20 and MRR were 0.5: `AT%26T` was read as `AT&T`; trec_eval gives 1.0 and 1.0."""
    qrels = "query-id\tcorpus-id\tscore\nq1\tAT%26T\t1\nq1\tother\t1\n"
    assert _eval(tmp_path, "q1 Q0 AT%26T 1 2 t\nq1 Q0 other 2 1 t\n", qrels, "qrels.tsv") == 0
    row = _row(capsys.readouterr().out)
    assert (row["R@20"], row["MRR"], row["nDCG@10"]) == ("1.000", "1.000", "1.000")


def test_ragkits_own_run_of_the_same_corpus_still_matches_its_escaped_ids(tmp_path, capsys):
    """ragkit writes the id `AT%26T` as `AT%2526T` and reads it back decoded."""
    write_trec(tmp_path / "run.trec", {"q1": [("other", 2.0), ("AT%26T", 1.0)]})
    assert "AT%2526T" in (tmp_path / "run.trec").read_text()
    (tmp_path / "qrels.tsv").write_text("q1\tAT%26T\t1\nq1\tnever\t1\n")
    assert main(["eval", "--run", str(tmp_path / "run.trec"), "--qrels",
                 str(tmp_path / "qrels.tsv")]) == 0
    row = _row(capsys.readouterr().out)
    assert (row["R@20"], row["MRR"]) == ("0.500", "0.500")


def test_a_foreign_run_that_only_reads_as_written_is_read_so(tmp_path, capsys):
    """`caf%e9` is no %-escape of UTF-8, and `AT%26T` beside `AT&T` is one id twice once
    decoded: both runs were refused before their as-written ids, which match the BEIR
    qrels, were tried."""
    qrels = "q1\tcaf%e9\t1\nq1\tAT%26T\t1\n"
    assert _eval(tmp_path, "q1 Q0 caf%e9 1 2 t\nq1 Q0 AT%26T 2 1 t\n", qrels, "qrels.tsv") == 0
    assert _row(capsys.readouterr().out)["R@20"] == "1.000"
    assert _eval(tmp_path, "q1 Q0 AT%26T 1 2 t\nq1 Q0 AT&T 2 1 t\n", qrels, "qrels.tsv") == 0
    assert _row(capsys.readouterr().out)["R@20"] == "0.500"
