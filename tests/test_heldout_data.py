"""The held-out scikit-learn set keeps its promises (see data/heldout/README.md).

The corpus is extracted from the installed scikit-learn into a temporary folder, so these
tests skip (with the reason) when the installed version is not the one the questions were
written against: another release rewords docstrings and the spans would not match.
"""
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ragkit.datasets import load_shipped

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "data" / "generators" / "extract_sklearn_docs.py"
GOLDEN = ROOT / "data" / "heldout" / "sklearn" / "golden"
PINNED = "1.9.1"
KINDS = {"lexical", "paraphrase", "contextual", "distractor", "negation", "multi-hop",
         "unanswerable"}


def _installed() -> str | None:
    try:
        import sklearn
    except ImportError:
        return None
    return sklearn.__version__


pytestmark = pytest.mark.skipif(
    _installed() != PINNED,
    reason=f"scikit-learn {_installed()} installed; the held-out questions need {PINNED}")


def _extract(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("heldout") / "sklearn"
    result = _extract(out)
    assert result.returncode == 0, result.stderr
    return out


def test_extraction_loads_and_every_span_is_verbatim_once(built):
    data = load_shipped(built)  # raises on a missing document or a span not in its text
    texts = {d.id: d.text for d in data.documents}
    assert 200 <= len(data.documents) <= 500
    assert texts["linear_model/Ridge.md"].startswith(
        "# Ridge\n\nLinear least squares with l2 regularization.\n")
    assert "## Parameters\n\n### alpha : float" in texts["linear_model/Ridge.md"]
    ridge = next(d for d in data.documents if d.id == "linear_model/Ridge.md")
    assert ridge.title == "sklearn.linear_model.Ridge"
    assert ridge.metadata["kind"] == "reference" and ridge.metadata["lang"] == "en"
    for query in data.queries:
        for gold in query.golden:
            assert texts[gold.doc_id].count(gold.span) == 1, (query.id, gold.span)
            assert 0 < len(gold.span) <= 300, query.id


def test_counts_kinds_splits_and_ids(built):
    data = load_shipped(built)
    queries = data.queries
    assert len(queries) >= 90
    assert [q.id for q in queries] == [f"skl-{i:03d}" for i in range(1, len(queries) + 1)]
    assert {q.kind for q in queries} == KINDS
    assert {q.split for q in queries} == {"dev", "test"}
    for kind, count in Counter(q.kind for q in queries).items():
        dev = sum(q.kind == kind and q.split == "dev" for q in queries)
        assert abs(2 * dev - count) <= 1, kind  # about half of every kind is dev
    for query in queries:
        assert (query.kind == "unanswerable") == (not query.golden), query.id
        if query.kind == "multi-hop":
            assert len({g.doc_id for g in query.golden}) == 2, query.id
    assert all(json.loads(line)["lang"] == "en"
               for line in (GOLDEN / "questions.jsonl").read_text(encoding="utf-8").splitlines())


def test_extraction_is_byte_identical_on_a_second_run(built, tmp_path):
    again = tmp_path / "again"
    assert _extract(again).returncode == 0
    first = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert first == second
    assert (built / "golden" / "questions.jsonl").read_bytes() == \
        (GOLDEN / "questions.jsonl").read_bytes()


def test_refuses_another_version_in_one_line(tmp_path):
    out = tmp_path / "other"
    result = _extract(out, "--pinned", "0.0.1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert f"scikit-learn {PINNED} is installed" in result.stderr
    assert "0.0.1" in result.stderr and "--any-version" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    forced = _extract(out, "--pinned", "0.0.1", "--any-version")
    assert forced.returncode == 0, forced.stderr
    assert (out / "corpus" / "svm" / "SVC.md").is_file()
