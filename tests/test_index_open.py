"""Opening an index reads no chunk row and no posting until a search needs it.

The index is built by the installed CLI in one process and searched by it in others, as a
user does: results equal those of the same index in the older format (no chunks.offsets.npy,
no BM25 term table); a damaged offsets or term file is one error line; a damaged row is an
error only for the search that returns it; an edited chunks.jsonl is read the old way with a
warning; a build killed with -9 leaves the previous index searching as before.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli_errors import one_error_line
from ragkit.term_table import TermTable, write_terms

N_DOCS = 400


def ragkit(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The installed CLI in a new process, with its own RAGKIT_HOME and no API key."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(cwd / ".home")
    return subprocess.run([sys.executable, "-m", "ragkit.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def search(cwd: Path, index: str, queries: str = "queries.jsonl", out: str = "run.trec"
           ) -> subprocess.CompletedProcess:
    return ragkit(cwd, "search", index, "--queries", queries, "--k", "5", "--mode", "bm25",
                  "--out", out)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """An index of N_DOCS documents (doc i holds the unique word `only{i}`) and queries."""
    folder = tmp_path_factory.mktemp("open")
    with (folder / "docs.jsonl").open("w") as out:
        for i in range(N_DOCS):
            text = f"only{i} shared words here " + " ".join(f"w{(i * 7 + j) % 50}"
                                                             for j in range(12))
            out.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    queries = [{"id": f"q{i}", "text": f"only{i} w{i % 50}"} for i in range(0, N_DOCS, 9)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    done = ragkit(folder, "index", "docs.jsonl", "--out", "ix", "--embedder", "none")
    assert done.returncode == 0, done.stderr
    done = search(folder, "ix")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def copy(built, tmp_path) -> Path:
    """A copy of the built index and queries to damage."""
    shutil.copytree(built / "ix", tmp_path / "ix")
    shutil.copy(built / "queries.jsonl", tmp_path)
    return tmp_path


def test_the_index_lists_its_offsets_and_term_files(built):
    files = json.loads((built / "ix" / "index.json").read_text())["files"]
    assert {"chunks.offsets.npy", "bm25/terms.bin", "bm25/terms.npy",
            "bm25/terms_hash.npy"} <= set(files)
    offsets = np.load(built / "ix" / "chunks.offsets.npy")
    rows = (built / "ix" / "chunks.jsonl").read_bytes()
    assert offsets.dtype == np.int64 and offsets.shape == (N_DOCS + 1,)
    assert offsets.tolist() == [0, *[i + 1 for i, b in enumerate(rows) if b == 10]]


def test_an_index_in_the_older_format_searches_identically(built, copy):
    old = copy / "ix"
    for name in ("chunks.offsets.npy", "bm25/terms.bin", "bm25/terms.npy",
                 "bm25/terms_hash.npy"):
        (old / name).unlink()
    done = search(copy, "ix", out="old.trec")
    assert done.returncode == 0, done.stderr
    assert (copy / "old.trec").read_bytes() == (built / "run.trec").read_bytes()
    run = (built / "run.trec").read_text().splitlines()
    assert run[0].split()[:3] == ["q0", "Q0", "d0#0"]  # each query finds its own document


def test_a_damaged_row_fails_only_the_search_that_returns_it(copy):
    path = copy / "ix" / "chunks.jsonl"
    rows = path.read_bytes().splitlines(keepends=True)
    rows[200] = b"X" + rows[200][1:]  # same length: the offsets still fit
    path.write_bytes(b"".join(rows))
    (copy / "other.jsonl").write_text('{"id": "a", "text": "only17"}\n')
    done = search(copy, "ix", "other.jsonl", "other.trec")
    assert done.returncode == 0, done.stderr  # row 201 is never read
    assert (copy / "other.trec").read_text().split()[2] == "d17#0"
    (copy / "hit.jsonl").write_text('{"id": "b", "text": "only200"}\n')
    line = one_error_line(search(copy, "ix", "hit.jsonl", "hit.trec"))
    assert line.endswith("ix/chunks.jsonl:201: malformed JSON (Expecting value)"), line
    assert not (copy / "hit.trec").exists()


@pytest.mark.parametrize("field", [b'"doc_id"', b'"text"'])
def test_a_row_with_a_field_renamed_fails_the_search_that_returns_it(copy, field):
    """Valid JSON with "doc_id" renamed "doc_iX" (same length): a BM25 search read only the
    ids of its hits and returned the damaged chunk, exit 0."""
    path = copy / "ix" / "chunks.jsonl"
    rows = path.read_bytes().splitlines(keepends=True)
    assert field in rows[200]
    rows[200] = rows[200].replace(field, field[:-2] + b'X"', 1)
    path.write_bytes(b"".join(rows))
    (copy / "hit.jsonl").write_text('{"id": "b", "text": "only200"}\n')
    line = one_error_line(search(copy, "ix", "hit.jsonl", "hit.trec"))
    assert line.endswith(f"ix/chunks.jsonl:201: field '{field[1:-1].decode()}': missing"), line
    assert not (copy / "hit.trec").exists()


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:100]), "chunks.offsets.npy: cannot read"),
    (lambda p: np.save(p, np.load(p)[::-1].copy()), "chunks.offsets.npy: offsets do not rise"),
    (lambda p: np.save(p, np.load(p).astype(np.float64)), "chunks.offsets.npy: expected a "
                                                          "1-d int64 array"),
], ids=["cut short", "not rising", "floats"])
def test_a_damaged_offsets_file_is_one_error_line(copy, damage, message):
    damage(copy / "ix" / "chunks.offsets.npy")
    line = one_error_line(search(copy, "ix"))
    assert message in line and "rebuild" in line, line


def test_a_damaged_term_table_is_one_error_line(copy):
    path = copy / "ix" / "bm25" / "terms_hash.npy"
    path.write_bytes(path.read_bytes()[:-8])
    line = one_error_line(search(copy, "ix"))
    assert "bm25" in line and "damaged BM25 terms" in line and "rebuild" in line, line


def test_a_chunks_file_cut_short_names_its_last_line(copy):
    path = copy / "ix" / "chunks.jsonl"
    path.write_bytes(path.read_bytes()[:-40])
    line = one_error_line(search(copy, "ix"))
    assert re.search(rf"ix/chunks.jsonl:{N_DOCS}: malformed JSON \(Unterminated string "
                     rf"starting at column \d+\)$", line), line


def test_an_edited_chunks_file_is_read_whole_with_a_warning(built, copy):
    path = copy / "ix" / "chunks.jsonl"
    path.write_text(path.read_text().replace("shared words here", "shared words"))
    done = search(copy, "ix", out="edited.trec")
    assert done.returncode == 0, done.stderr
    assert "changed since the index was written" in done.stderr
    assert done.stderr.startswith("ragkit: warning: ")
    assert (copy / "edited.trec").read_bytes() == (built / "run.trec").read_bytes()


def test_a_build_killed_with_minus_9_leaves_the_previous_index_searching(built, copy):
    before = {p.name: p.read_bytes() for p in (copy / "ix").iterdir() if p.is_file()}
    with (copy / "big.jsonl").open("w") as out:  # a few seconds of work in workers
        for i in range(3000):
            out.write(json.dumps({"id": f"b{i}", "text": " ".join(
                f"x{(i * j) % 4000}" for j in range(800))}) + "\n")
    env = {**os.environ, "RAGKIT_HOME": str(copy / ".home"), "RAGKIT_WORKER_BLOCK": "100"}
    build = subprocess.Popen([sys.executable, "-m", "ragkit.cli", "index", "big.jsonl",
                              "--out", "ix", "--embedder", "none"], cwd=copy, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while (build.poll() is None and time.monotonic() < deadline
           and not any((p / "chunks.jsonl").exists() for p in copy.glob(".ix.new-*"))):
        time.sleep(0.01)
    assert build.poll() is None, "the build ended before it could be killed"
    os.kill(build.pid, signal.SIGKILL)  # while it writes chunks.jsonl
    build.wait()
    after = {p.name: p.read_bytes() for p in (copy / "ix").iterdir() if p.is_file()}
    assert after == before
    done = search(copy, "ix", out="after.trec")
    assert done.returncode == 0, done.stderr
    assert (copy / "after.trec").read_bytes() == (built / "run.trec").read_bytes()


def test_opening_reads_neither_the_rows_nor_the_postings(built):
    """Resident memory added by Pipeline.load stays far below the size of chunks.jsonl and
    the postings (before: every row parsed, every posting's page mapped)."""
    code = (
        "import sys\n"
        "from ragkit.pipeline import Pipeline, SearchConfig\n"
        "def rss():\n"
        "    f = dict(l.split(':') for l in open('/proc/self/status') if l.startswith('Rss'))\n"
        "    return sum(int(v.split()[0]) for v in f.values()) * 1024\n"
        "first = Pipeline.load(sys.argv[1])  # imports what a load needs, and stays\n"
        "before = rss(); p = Pipeline.load(sys.argv[1]); after = rss()\n"
        "print(after - before, p.search(['only5'], 1, SearchConfig(mode='bm25'))[0][0][0])\n")
    folder = built / "rss"
    if not folder.exists():
        with (built / "many.jsonl").open("w") as out:
            for i in range(30_000):
                out.write(json.dumps({"id": f"m{i}", "text": f"only{i} " + " ".join(
                    f"w{(i * j) % 5000}" for j in range(40))}) + "\n")
        done = ragkit(built, "index", "many.jsonl", "--out", "rss", "--embedder", "none")
        assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True, timeout=60, check=True)
    grown, top = done.stdout.split()
    assert top == "m5#0"
    rows = (folder / "chunks.jsonl").stat().st_size
    postings = (folder / "bm25" / "indices.npy").stat().st_size
    assert int(grown) < 0.25 * (rows + postings), (grown, rows, postings)


TERMS = ["", "a", "b", "ab", "ba", "청약철회", "naïve", "x" * 300, "\ud800lone", "HTTPServer",
         "w1", "w10", "w01"]


def test_the_term_table_answers_as_the_dict_it_replaces(tmp_path):
    write_terms(tmp_path, TERMS)
    table = TermTable(tmp_path)
    assert len(table) == len(TERMS) and list(table) == TERMS
    assert {t: table[t] for t in TERMS} == {t: i for i, t in enumerate(TERMS)}
    for absent in ("c", "aa", "청약", "x" * 299, "w100", 3, None):
        assert absent not in table and table.get(absent) is None
    import pickle
    assert pickle.loads(pickle.dumps(table)) == {t: i for i, t in enumerate(TERMS)}


def test_the_term_table_is_exact_when_every_hash_collides(tmp_path, monkeypatch):
    import ragkit.term_table as term_table
    monkeypatch.setattr(term_table, "term_hash", lambda raw: 7)
    monkeypatch.setattr(term_table, "term_hashes",
                        lambda blob, offsets: np.full(offsets.size - 1, 7, dtype=np.uint64))
    write_terms(tmp_path, TERMS)
    table = TermTable(tmp_path)
    assert {t: table[t] for t in TERMS} == {t: i for i, t in enumerate(TERMS)}
    assert "zz" not in table


def test_an_empty_queries_file_is_refused_not_an_empty_run(copy):
    (copy / "empty.jsonl").write_text("\n")
    line = one_error_line(search(copy, "ix", "empty.jsonl", "empty.trec"))
    assert line == ("ragkit: error: empty.jsonl: no queries (one JSON object per line, with "
                    "'id' and 'text')")
    assert not (copy / "empty.trec").exists()
