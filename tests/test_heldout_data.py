"""The held-out sets keep their promises (see data/heldout/README.md).

Each corpus is extracted from the installed packages (scikit-learn; httpx and tqdm) into a
temporary folder, so these tests skip (with the reason) when an installed version is not the
one the questions were written against: another release rewords text and the spans would not
match.
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


sklearn_pinned = pytest.mark.skipif(
    _installed() != PINNED,
    reason=f"scikit-learn {_installed()} installed; the held-out questions need {PINNED}")


def _extract(out: Path, *extra: str, script: Path = SCRIPT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=120)


def _built(tmp_path_factory, name: str, script: Path) -> Path:
    """The set extracted once into a temporary folder (the extractor must succeed)."""
    out = tmp_path_factory.mktemp("heldout") / name
    result = _extract(out, script=script)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return _built(tmp_path_factory, "sklearn", SCRIPT)


@sklearn_pinned
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


@sklearn_pinned
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


@sklearn_pinned
def test_extraction_is_byte_identical_on_a_second_run(built, tmp_path):
    again = tmp_path / "again"
    assert _extract(again).returncode == 0
    first = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert first == second
    assert (built / "golden" / "questions.jsonl").read_bytes() == \
        (GOLDEN / "questions.jsonl").read_bytes()


def _refused_then_forced(out: Path, script: Path, pinned: str, installed: str,
                         forced_file: str) -> None:
    """Another pinned version: one line naming both versions, exit 2, nothing written; with
    --any-version the extraction runs."""
    result = _extract(out, "--pinned", pinned, script=script)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert f"{installed} is installed" in result.stderr
    assert "0.0.1" in result.stderr and "--any-version" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    forced = _extract(out, "--pinned", pinned, "--any-version", script=script)
    assert forced.returncode == 0, forced.stderr
    assert (out / "corpus" / forced_file).is_file()


@sklearn_pinned
def test_refuses_another_version_in_one_line(tmp_path):
    _refused_then_forced(tmp_path / "other", SCRIPT, "0.0.1", f"scikit-learn {PINNED}",
                         "svm/SVC.md")


# --- The held-out code set: httpx and tqdm source (data/heldout/README.md, second section) ---

CODE_SCRIPT = ROOT / "data" / "generators" / "extract_python_source.py"
CODE_GOLDEN = ROOT / "data" / "heldout" / "pycode" / "golden"
CODE_PINNED = {"httpx": "0.29.0", "tqdm": "4.70.1"}
CODE_KINDS = {"lexical", "paraphrase", "contextual", "distractor", "multi-hop", "unanswerable"}


def _code_versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version
    found = {}
    for package in CODE_PINNED:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


code_pinned = pytest.mark.skipif(
    _code_versions() != CODE_PINNED,
    reason=f"installed {_code_versions()}; the held-out code questions need {CODE_PINNED}")


def _extract_code(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return _extract(out, *extra, script=CODE_SCRIPT)


@pytest.fixture(scope="module")
def built_code(tmp_path_factory) -> Path:
    return _built(tmp_path_factory, "pycode", CODE_SCRIPT)


@code_pinned
def test_code_extraction_loads_and_every_span_is_verbatim_once(built_code):
    data = load_shipped(built_code)  # raises on a missing document or a span not in its text
    texts = {d.id: d.text for d in data.documents}
    assert len(data.documents) == 54
    assert {i.split("/")[0] for i in texts} == {"httpx", "tqdm"}
    assert "tqdm/contrib/discord.py" in texts and "httpx/_transports/default.py" in texts
    assert texts["httpx/_config.py"].count("DEFAULT_MAX_REDIRECTS = 20\n") == 1
    client = next(d for d in data.documents if d.id == "httpx/_client.py")
    assert client.title == "httpx/_client.py"  # a code file's title is its path
    assert not any("__pycache__" in i for i in texts)
    for query in data.queries:
        for gold in query.golden:
            assert texts[gold.doc_id].count(gold.span) == 1, (query.id, gold.span)
            assert 0 < len(gold.span) <= 300, query.id


@code_pinned
def test_code_files_are_copied_unchanged(built_code):
    import httpx
    import tqdm
    for module in (httpx, tqdm):
        base = Path(module.__file__).parent
        for path in base.rglob("*.py"):
            copy = built_code / "corpus" / module.__name__ / path.relative_to(base)
            assert copy.read_bytes() == path.read_bytes(), copy


@code_pinned
def test_code_counts_kinds_splits_and_ids(built_code):
    queries = load_shipped(built_code).queries
    assert len(queries) >= 70
    assert [q.id for q in queries] == [f"code-h-{i:03d}" for i in range(1, len(queries) + 1)]
    assert {q.kind for q in queries} == CODE_KINDS
    for kind, count in Counter(q.kind for q in queries).items():
        dev = sum(q.kind == kind and q.split == "dev" for q in queries)
        assert abs(2 * dev - count) <= 1, kind  # about half of every kind is dev
    assert sum(q.kind == "unanswerable" for q in queries) == 8
    for query in queries:
        assert (query.kind == "unanswerable") == (not query.golden), query.id
        if query.kind == "multi-hop":
            assert len({g.doc_id for g in query.golden}) == 2, query.id


@code_pinned
def test_code_extraction_is_byte_identical_on_a_second_run(built_code, tmp_path):
    again = tmp_path / "again"
    assert _extract_code(again).returncode == 0
    first = {p.relative_to(built_code): p.read_bytes() for p in built_code.rglob("*")
             if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second
    assert (built_code / "golden" / "questions.jsonl").read_bytes() == \
        (CODE_GOLDEN / "questions.jsonl").read_bytes()


@code_pinned
def test_code_refuses_another_version_in_one_line(tmp_path):
    _refused_then_forced(tmp_path / "other", CODE_SCRIPT, "tqdm==0.0.1",
                         f"tqdm {CODE_PINNED['tqdm']}", "tqdm/std.py")
