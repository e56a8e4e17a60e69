"""A damaged BM25 part of an index folder is a load error naming the file, never an
IndexError traceback at the first search (in a process of its own, as a user meets it)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_errors import one_error_line

from ragkit.documents import Document, RagkitError
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig

DOCS = [Document("a", "the kettle boils water in two minutes"),
        Document("b", "a toaster browns bread slices"),
        Document("c", "the kettle has a blue light")]


@pytest.fixture
def index(tmp_path) -> Path:
    out = tmp_path / "ix"
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False).save(out)
    return out


def _damage(path: Path, change) -> None:
    values = np.load(path)
    change(values)
    np.save(path, values)


@pytest.mark.parametrize("name, change, message", [
    ("indices", lambda a: a.__setitem__(3, 7), "document numbers outside 0..2"),
    ("indices", lambda a: a.__setitem__(0, -1), "document numbers outside 0..2"),
    ("indptr", lambda a: a.__setitem__(-1, 99), "does not rise from 0 to the 17 postings"),
    ("indptr", lambda a: a.__setitem__(2, a[3] + 1), "does not rise from 0 to the 17 postings"),
    ("idf", lambda a: None, None),
])
def test_out_of_range_postings_are_a_load_error_naming_the_file(index, name, change, message):
    path = index / "bm25" / f"{name}.npy"
    _damage(path, change)
    if message is None:  # unchanged: still loads and searches
        found = Pipeline.load(index).search(["kettle"], 2, SearchConfig(mode="bm25"))[0]
        assert sorted(ident for ident, _ in found) == ["a#0", "c#0"]
        return
    with pytest.raises(RagkitError, match=rf"{name}.npy: .*{message}.*rebuild"):
        Pipeline.load(index)
    (index.parent / "q.jsonl").write_text('{"id": "q1", "text": "kettle boil time"}\n')
    result = subprocess.run([sys.executable, "-m", "ragkit.cli", "search", str(index),
                             "--queries", str(index.parent / "q.jsonl"), "--mode", "bm25",
                             "--out", str(index.parent / "run.trec")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"{name}.npy" in result.stderr and result.stderr.count("\n") == 1


def test_arrays_of_the_wrong_length_are_a_load_error(index):
    idf = index / "bm25" / "idf.npy"
    np.save(idf, np.load(idf)[:-1])  # one term short
    with pytest.raises(RagkitError, match="idf.npy: .* rebuild"):
        Pipeline.load(index)


@pytest.mark.parametrize("name", ["idf", "doc_len", "indptr", "data"])
def test_an_empty_or_cut_array_file_is_the_damaged_line_not_a_numpy_error(index, name):
    """A full disk or a cut copy leaves a 0-byte .npy: it was an EOFError traceback."""
    path = index / "bm25" / f"{name}.npy"
    path.write_bytes(b"")
    with pytest.raises(RagkitError) as caught:
        Pipeline.load(index)
    assert str(caught.value) == f"{path}: damaged BM25 index (empty file); rebuild it"
    path.write_bytes(b"\x93NUMPY")  # cut inside the header
    with pytest.raises(RagkitError, match=rf"{name}.npy: damaged BM25 index \(.+\); rebuild it"):
        Pipeline.load(index)


def _as_user() -> list[str]:
    """The command prefix that makes a chmod 000 stick: none for a user, setpriv dropping
    every capability for root (which reads anything)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: chmod 000 does not stop root")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]


@pytest.mark.parametrize("locked", ["", "bm25.json", "data.npy", "terms.bin"])
def test_a_bm25_folder_or_file_that_may_not_be_read_is_named_not_called_damaged(index, locked):
    """It was "damaged BM25 index (PermissionError: … bm25.npz'); rebuild it": a file that
    does not exist, and advice that does not help."""
    path = index / "bm25" / locked if locked else index / "bm25"
    (index.parent / "q.jsonl").write_text('{"id": "q1", "text": "kettle boil time"}\n')
    path.chmod(0)
    try:
        done = subprocess.run([*_as_user(), str(Path(sys.executable).parent / "ragkit"),
                               "search", str(index), "--queries", str(index.parent / "q.jsonl"),
                               "--mode", "bm25", "--out", str(index.parent / "run.trec")],
                              capture_output=True, text=True, timeout=60)
    finally:
        path.chmod(0o755 if path.is_dir() or not locked else 0o644)
    assert one_error_line(done) == f"ragkit: error: {path}: cannot read (Permission denied)"
    assert not (index.parent / "run.trec").exists()


def _search(index: Path) -> subprocess.CompletedProcess:
    """`ragkit search` of two questions in a process of its own, as a user runs it."""
    (index.parent / "q.jsonl").write_text('{"id": "q1", "text": "kettle boil time"}\n'
                                          '{"id": "q2", "text": "toaster bread"}\n')
    return subprocess.run([str(Path(sys.executable).parent / "ragkit"), "search", str(index),
                           "--queries", str(index.parent / "q.jsonl"), "--mode", "bm25",
                           "--out", str(index.parent / "run.trec")],
                          capture_output=True, text=True, timeout=60)


def _flip(byte: int, bits: int):
    """A change flipping `bits` of byte `byte` of the sixth weight (little-endian float64:
    byte 7 holds the sign and the exponent's top bits, byte 6 its low ones), as a bad
    sector or a stray write does."""
    def change(values: np.ndarray) -> None:
        values.view(np.uint8)[5 * values.itemsize + byte] ^= bits
    return change


@pytest.mark.parametrize("name, change, shown", [
    ("data", lambda a: a.__setitem__(slice(None), np.nan), "nan"),
    ("data", lambda a: a.__setitem__(slice(None), 0.0), "0"),
    ("data", lambda a: a.__setitem__(slice(4, 8), 0.0), "0"),
    ("data", _flip(6, 0x70), None),
    ("data", _flip(7, 0x20), None),
    ("data", _flip(7, 0x40), None),
    ("data", lambda a: a.__setitem__(2, -a[2]), None),
    ("idf", lambda a: a.__setitem__(1, np.inf), None),
])
def test_posting_weights_no_bm25_could_give_are_a_load_error_not_a_ranking(index, name, change,
                                                                           shown):
    """All-NaN weights gave no hits, zeroed ones ranked every document 0 and an exponent
    byte flipped ranked one document first at 7.9e206 — each with exit status 0."""
    _damage(index / "bm25" / f"{name}.npy", change)
    line = one_error_line(_search(index))
    assert line.startswith(f"ragkit: error: {index / 'bm25' / name}.npy: damaged BM25 index (")
    assert line.endswith("; rebuild it")
    if shown is not None:
        assert f"a posting weight is {shown}, not in [0." in line
    assert not (index.parent / "run.trec").exists()


def test_an_undamaged_index_keeps_its_exact_scores(index):
    """The check refuses nothing BM25 writes: the run is the in-memory index's, score for
    score ("kettle" ranks the shorter document first)."""
    assert _search(index).returncode == 0
    rows = [line.split() for line in (index.parent / "run.trec").read_text().splitlines()]
    built = Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    expected = built.search(["kettle boil time", "toaster bread"], 10, SearchConfig(mode="bm25"))
    assert [(r[0], r[2], float(r[4])) for r in rows] == [
        (q, ident, pytest.approx(score, rel=1e-6)) for q, found in zip(("q1", "q2"), expected)
        for ident, score in found]
    assert [r[2] for r in rows] == ["c#0", "a#0", "b#0"]


def test_a_term_renamed_in_terms_bin_is_named_not_dropped_from_the_query(index):
    """"kettle" overwritten with "kittle" (same length): the query's "kettle" silently
    matched nothing and the ranking went on without it, exit status 0."""
    terms = index / "bm25" / "terms.bin"
    blob = terms.read_bytes()
    assert blob.count(b"kettle") == 1
    terms.write_bytes(blob.replace(b"kettle", b"kittle"))
    line = one_error_line(_search(index))
    assert line.startswith(f"ragkit: error: {terms}: term ")
    assert line.endswith("does not match its hash in terms_hash.npy; damaged BM25 index, "
                         "rebuild it")
