"""The shipped corpus and golden sets keep their promises (see data/README.md)."""
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ragkit.chunking import chunk_documents
from ragkit.datasets import load_shipped
from ragkit.documents import load_golden

DATA = Path(__file__).resolve().parent.parent / "data"
KINDS = {"lexical", "paraphrase", "contextual", "multi-hop", "code", "korean", "distractor",
         "negation", "unanswerable"}
QUARTER = re.compile(r"\bQ([1-4]) (20\d\d)\b")


@pytest.fixture(scope="module")
def shipped():
    return load_shipped(DATA)  # validates every span and doc id, raising on the first bad one


def test_sizes(shipped):
    assert len(shipped.documents) >= 60
    assert len(chunk_documents(shipped.documents)) >= 400
    assert len(shipped.queries) >= 150
    assert sum(q.kind == "korean" for q in shipped.queries) >= 20


def test_every_span_is_verbatim_and_unique_in_its_document(shipped):
    texts = {d.id: d.text for d in shipped.documents}
    for query in shipped.queries:
        for gold in query.golden:
            assert texts[gold.doc_id].count(gold.span) == 1, (query.id, gold.span)
            assert 0 < len(gold.span) <= 300, query.id


def test_kinds_splits_and_answers(shipped):
    assert {q.kind for q in shipped.queries} == KINDS
    by_split = {s: {q.kind for q in shipped.queries if q.split == s} for s in ("dev", "test")}
    assert by_split["dev"] == by_split["test"] == KINDS
    assert Counter(q.split for q in shipped.queries).keys() == {"dev", "test"}
    for query in shipped.queries:
        assert query.answer, query.id
        assert (query.kind == "unanswerable") == (not query.golden), query.id
        if query.kind == "multi-hop":
            assert len({g.doc_id for g in query.golden}) >= 2, query.id


def test_the_data_card_counts_the_questions_there_are(shipped):
    """data/README.md's table of kinds: each row's dev and test counts, and the total."""
    card = (DATA / "README.md").read_text(encoding="utf-8")
    card = card[card.index("| kind | dev | test |"):]  # not the corpus table above it
    row = re.compile(r"^\| \**([a-z-]+)\** \| \**(\d+)\** \| \**(\d+)\** \|", re.M)
    rows = {kind: (int(dev), int(test)) for kind, dev, test in row.findall(card)}
    counted = Counter((q.kind, q.split) for q in shipped.queries)
    assert {k: rows[k] for k in KINDS} == {k: (counted[k, "dev"], counted[k, "test"])
                                           for k in KINDS}
    assert rows["all"] == (sum(q.split == "dev" for q in shipped.queries),
                           sum(q.split == "test" for q in shipped.queries))


def _reports(shipped) -> dict[str, set[tuple[int, int]]]:
    """Company name -> the (year, quarter) pairs it has a report for."""
    out: dict[str, set[tuple[int, int]]] = {}
    for doc in shipped.documents:
        if doc.metadata.get("kind") == "report":
            year, quarter = doc.metadata["quarter"].split("-Q")
            out.setdefault(doc.metadata["company"], set()).add((int(year), int(quarter)))
    return out


def test_a_missing_quarter_is_not_restated_by_a_later_report(shipped):
    """An unanswerable question about a quarter with no report must not be answerable either
    from the next quarter's report ("revenue in the previous quarter was …") or from the
    report a year later (the year-over-year change)."""
    reports = _reports(shipped)
    for query in shipped.queries:
        if query.kind != "unanswerable":
            continue
        for company, quarters in reports.items():
            for q, year in QUARTER.findall(query.text) if company in query.text else ():
                year, q = int(year), int(q)
                if (year, q) in quarters:
                    continue
                later = {(year + q // 4, q % 4 + 1), (year + 1, q)}
                assert not later & quarters, (query.id, company, later & quarters)


def test_distractor_report_questions_name_the_quarter_only_by_its_event(shipped):
    """A report distractor must not name its quarter: seven sibling reports of the same
    company carry the same sentence with other numbers, and only the event tells them apart."""
    reports = _reports(shipped)
    for query in shipped.queries:
        docs = {g.doc_id for g in query.golden}
        if query.kind == "distractor" and docs and all(d.startswith("reports/") for d in docs):
            assert not QUARTER.search(query.text), query.id
            assert len(docs) == 1 and len(query.golden) == 2, query.id
            company = next(c for c in reports if c in query.text)
            assert len(reports[company]) == 8, query.id


def test_query_ids_unique_across_files():
    ids = [q.id for q in load_golden(DATA / "golden")]
    assert len(ids) == len(set(ids))


def test_corpus_parts_are_present(shipped):
    kinds = Counter(d.metadata.get("kind", d.id.split("/")[0]) for d in shipped.documents)
    assert kinds["report"] >= 40 and kinds["hostile"] >= 2 and kinds["code"] >= 25
    assert any(d.metadata.get("lang") == "ko" for d in shipped.documents)
    refund = DATA / "corpus" / "code" / "shopcore" / "orders" / "cancel.py"
    assert "discount_total" in refund.read_text()


@pytest.mark.parametrize("script", sorted((DATA / "generators").glob("make_*.py")),
                         ids=lambda p: p.name)
def test_generated_files_match_their_generator(script):
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                            text=True, cwd=DATA.parent)
    assert result.returncode == 0, result.stdout + result.stderr
