"""A Milvus index across processes, as a user runs it: the installed `ragkit` CLI in
subprocesses (Milvus Lite, embedded, no server).

Re-running the same `ragkit index --store milvus` — after a finished build, or after the
build was killed (kill -9) or interrupted (Ctrl-C) mid-upload — resumes into the same
collection, uploads only the rows that are missing, and gives an index that searches exactly
as a clean build does. Also: an unwritable Milvus Lite path and a bad $MILVUS_URI are one
line and exit 2, and a refused build leaves no folder behind.
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("milvus_lite", reason="milvus-lite cannot be imported on this platform; "
                                          "the Milvus store tests need it")

RAGKIT = shutil.which("ragkit", path=str(Path(sys.executable).parent)) or \
    shutil.which("ragkit")
# chunks: ten insert batches; the signal comes after the first partial count the bar draws
# (it redraws at most every 0.1 s: with three, a fast machine could draw 4096 first and the
# signal land during the last batch)
BIG = 20_000
INDEX = ["--embedder", "none", "--tokenizer", "words"]
RESUMED = re.compile(r"resumed Milvus collection \S+: (\d+) of (\d+) rows were already "
                     r"there; uploaded (\d+)")


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MILVUS_")}
    return {**env, "RAGKIT_HOME": str(tmp / "home"), **extra}


def ragkit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """Run the installed CLI in a new process."""
    return subprocess.run([RAGKIT, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)


def _lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(scratch folder, environment, small docs, big docs, queries)."""
    tmp = tmp_path_factory.mktemp("milvus-resume")
    small = _lines(tmp / "small.jsonl", [
        {"id": "a", "text": "the kettle boils water in two minutes"},
        {"id": "b", "text": "a toaster browns bread slices"},
        {"id": "c", "text": "the kettle has a blue light"},
        {"id": "d", "text": "grinders crush coffee beans"}])
    big = _lines(tmp / "big.jsonl", [
        {"id": f"d{i}", "text": f"note {i} on kettle {i % 7} toaster {i % 13} coffee "
                                f"{i % 29} grinder {i % 31}"} for i in range(BIG)])
    queries = _lines(tmp / "q.jsonl", [{"id": "q1", "text": "kettle boil time"},
                                       {"id": "q2", "text": "toaster 5 coffee 11"},
                                       {"id": "q3", "text": "grinder 30 kettle 6"}])
    return tmp, _env(tmp), small, big, queries


@pytest.fixture(scope="module")
def clean_run(corpus):
    """The search run of a clean, uninterrupted Milvus build of the big corpus."""
    tmp, env, _, big, queries = corpus
    built = ragkit(env, "index", big, "--out", tmp / "clean", "--store", "milvus", *INDEX)
    assert built.returncode == 0, built.stderr[-2000:]
    return _search(env, tmp / "clean", queries, tmp / "clean.trec")


def _search(env, folder: Path, queries: Path, out: Path) -> str:
    done = ragkit(env, "search", folder, "--queries", queries, "--mode", "bm25", "--k", "10",
                  "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_text()


def test_identical_rerun_then_search_in_a_third_process(corpus, tmp_path):
    _, env, small, _, queries = corpus
    out = tmp_path / "mv"
    first = ragkit(env, "index", small, "--out", out, "--store", "milvus", *INDEX)
    assert first.returncode == 0, first.stderr[-2000:]
    before = _search(env, out, queries, tmp_path / "before.trec")
    manifest = (out / "index.json").read_text()
    again = ragkit(env, "index", small, "--out", out, "--store", "milvus", *INDEX)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Traceback" not in again.stderr
    assert RESUMED.search(again.stderr).groups() == ("4", "4", "0")  # nothing sent again
    assert (out / "index.json").read_text() == manifest
    assert _search(env, out, queries, tmp_path / "after.trec") == before
    assert before.startswith("q1 Q0 ")


def _interrupt_mid_upload(env, big: Path, out: Path, sig: int) -> None:
    """Start a Milvus build and send `sig` once some but not all rows are uploaded."""
    proc = subprocess.Popen([RAGKIT, "index", str(big), "--out", str(out), "--store", "milvus",
                             *INDEX], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    seen = ""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if not select.select([proc.stderr], [], [], 1.0)[0]:
                continue
            chunk = os.read(proc.stderr.fileno(), 4096).decode(errors="replace")
            if not chunk:
                break
            seen += chunk
            done = [int(n) for n in re.findall(rf"milvus ragkit_\w+:.*?(\d+)/{BIG}", seen)]
            if any(0 < n < BIG for n in done):
                proc.send_signal(sig)
                break
        else:
            pytest.fail("the upload never started")
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.stderr.close()
    assert proc.returncode != 0, f"the build finished before the signal: {seen[-500:]}"
    assert not (out / "index.json").exists()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_interrupted_upload_resumes_and_equals_a_clean_build(corpus, clean_run, tmp_path,
                                                             sig):
    _, env, _, big, queries = corpus
    out = tmp_path / "mv"
    _interrupt_mid_upload(env, big, out, sig)
    again = ragkit(env, "index", big, "--out", out, "--store", "milvus", *INDEX)
    assert again.returncode == 0, again.stderr[-2000:]
    there, total, uploaded = map(int, RESUMED.search(again.stderr).groups())
    assert total == BIG and 0 < there < BIG and uploaded == BIG - there
    assert json.loads((out / "index.json").read_text()) == \
        json.loads((corpus[0] / "clean" / "index.json").read_text())
    assert _search(env, out, queries, tmp_path / "resumed.trec") == clean_run


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("ragkit: error:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return lines[0]


def _unwritable(tmp: Path) -> list[tuple[str, str]]:
    """(Lite path, the reason expected in the error) that fail even for root."""
    (tmp / "afile").write_text("x")
    (tmp / "old.db").write_text("x")
    cases = [(f"{tmp}/missing/x.db", f"folder {tmp}/missing does not exist"),
             (f"{tmp}/afile/x.db", f"{tmp}/afile is a file, not a folder"),
             (f"{tmp}/old.db", "is a file, not a Milvus Lite database folder")]
    frozen = tmp / "frozen"
    frozen.mkdir()
    if subprocess.run(["chattr", "+i", str(frozen)], capture_output=True).returncode == 0:
        cases.append((f"{frozen}/x.db", f"cannot write in {frozen}"))
    return cases


def test_unwritable_lite_database_is_one_line_and_leaves_nothing(corpus, tmp_path):
    _, env, small, _, _ = corpus
    cases = _unwritable(tmp_path)
    try:
        for path, reason in cases:
            out = tmp_path / "never"
            done = ragkit(env, "index", small, "--out", out, "--store", f"milvus:{path}",
                          *INDEX)
            line = _one_error_line(done)
            assert line.startswith(f"ragkit: error: cannot create the Milvus Lite database "
                                   f"{path}: "), line
            assert reason in line and "cannot reach" not in line, line
            assert not out.exists()  # no empty --out folder left behind
    finally:
        subprocess.run(["chattr", "-i", str(tmp_path / "frozen")], capture_output=True)


def test_milvus_uri_path_is_a_lite_database(corpus, tmp_path):
    _, env, small, _, queries = corpus
    db = tmp_path / "env.db"
    done = ragkit({**env, "MILVUS_URI": str(db)}, "index", small, "--out", tmp_path / "mv",
                  "--store", "milvus", *INDEX)
    assert done.returncode == 0, done.stderr[-2000:]
    assert db.is_dir() and not (tmp_path / "mv" / "milvus.db").exists()
    store = json.loads((tmp_path / "mv" / "index.json").read_text())["store"]
    assert store["uri"] == str(db)
    # searched in a process without MILVUS_URI: index.json says where the rows are
    assert _search(env, tmp_path / "mv", queries, tmp_path / "env.trec").startswith("q1 Q0 ")


@pytest.mark.parametrize("value", ["/tmp/ragkit-milvus-folder", "localhost:19530"])
def test_milvus_uri_neither_url_nor_lite_path_is_one_line(corpus, tmp_path, value):
    _, env, small, _, _ = corpus
    done = ragkit({**env, "MILVUS_URI": value}, "index", small, "--out", tmp_path / "mv",
                  "--store", "milvus", *INDEX)
    line = _one_error_line(done)
    assert line.startswith(f"ragkit: error: MILVUS_URI={value!r}: "), line
    assert not (tmp_path / "mv").exists()


def test_chunk_too_long_for_milvus_leaves_no_folder(tmp_path):
    from ragkit.cli import main
    docs = _lines(tmp_path / "docs.jsonl", [{"id": "big.md", "text": "word " * 14_000}])
    out = tmp_path / "new" / "idx"
    assert main(["index", str(docs), "--out", str(out), "--store", "milvus",
                 "--chunk-size", "20000", *INDEX]) == 2
    assert not (tmp_path / "new").exists()


def test_an_abandoned_interrupted_build_is_dropped_by_the_next_finished_one(tmp_path):
    """A build interrupted and never re-run (the documents changed meanwhile) leaves its
    partial collection in the index's Milvus Lite database until the next build finishes."""
    from ragkit.pipeline import IndexConfig, Pipeline
    from ragkit.documents import Document
    from ragkit.stores import StoreSpec, milvus_index, milvus_schema
    config = IndexConfig(embedder=None, tokenizer="words")
    docs = [Document(f"d{i}", f"kettle {i} toaster {i % 3}") for i in range(30)]
    folder = tmp_path / "idx"
    client = milvus_schema.connect(str(folder.parent / "probe.db"))  # the class to patch
    real = type(client).insert

    def failing(self, name, rows, *args, **kwargs):
        if failing.calls:
            raise RuntimeError("connection lost")
        failing.calls += 1
        return real(self, name, rows, *args, **kwargs)

    failing.calls = 0
    type(client).insert = failing
    try:
        with pytest.raises(RuntimeError):
            milvus_index.save(Pipeline.build(docs, config, progress=False), folder,
                              StoreSpec("milvus"), batch=10, progress=False)
    finally:
        type(client).insert = real
    final = Pipeline.build(docs[:20], config, progress=False)
    final.save(folder, store="milvus", progress=False)
    lite = milvus_schema.connect(str(folder / "milvus.db"))
    assert lite.list_collections() == [Pipeline.load(folder).store.collection]
    assert [p.name for p in folder.glob("bm25-*")] == \
        [f"bm25-{lite.list_collections()[0].rsplit('_', 1)[-1]}"]
    milvus_schema.forget(str(folder / "milvus.db"))
    milvus_schema.forget(str(folder.parent / "probe.db"))


def test_two_index_folders_of_one_name_on_one_milvus_keep_their_own_rows(corpus, tmp_path):
    """a/idx and b/idx of the same documents in one shared Milvus database were one
    collection: rebuilding a/idx dropped it, and b/idx said "no collection"."""
    _, env, small, _, queries = corpus
    shared = ["--store", f"milvus:{tmp_path / 'shared.db'}", *INDEX]
    for folder in ("a", "b"):
        done = ragkit(env, "index", small, "--out", tmp_path / folder / "idx", *shared)
        assert done.returncode == 0, done.stderr[-2000:]
    names = [json.loads((tmp_path / f / "idx" / "index.json").read_text())["store"]
             ["collection"] for f in ("a", "b")]
    assert names[0] != names[1] and all(n.startswith("ragkit_idx_") for n in names)
    before = _search(env, tmp_path / "b" / "idx", queries, tmp_path / "b1.trec")
    rebuilt = ragkit(env, "index", _lines(tmp_path / "other.jsonl", [
        {"id": "z", "text": "a completely different kettle note"}]),
        "--out", tmp_path / "a" / "idx", *shared)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    assert _search(env, tmp_path / "b" / "idx", queries, tmp_path / "b2.trec") == before


def test_update_of_a_milvus_index_keeps_a_file_beside_it_as_a_build_does(corpus, tmp_path):
    """A Milvus index is written in place: a rebuild keeps a user's notes.txt in its folder,
    and --update refused the same folder as if it were replaced whole."""
    _, env, small, _, queries = corpus
    folder = tmp_path / "mv"
    done = ragkit(env, "index", small, "--out", folder, "--store", "milvus", *INDEX)
    assert done.returncode == 0, done.stderr[-2000:]
    (folder / "notes.txt").write_text("mine")
    more = _lines(tmp_path / "more.jsonl", [*map(json.loads, small.read_text().splitlines()),
                                            {"id": "e", "text": "the kettle descales monthly"}])
    updated = ragkit(env, "index", more, "--out", folder, "--update")
    assert updated.returncode == 0, updated.stderr[-2000:]
    assert "1 document added or changed, 0 removed, 4 unchanged" in updated.stdout
    assert (folder / "notes.txt").read_text() == "mine"
    assert _search(env, folder, queries, tmp_path / "mv.trec").startswith("q1 Q0 ")


def test_milvus_failing_mid_upload_is_one_line_saying_a_rerun_resumes(tmp_path, capsys):
    """A full disk under Milvus Lite: pymilvus's MilvusException came out as three tracebacks
    and exit status 1."""
    from pymilvus.exceptions import MilvusException

    from ragkit.cli import main
    from ragkit.stores import milvus_schema
    docs = _lines(tmp_path / "docs.jsonl", [{"id": f"d{i}", "text": f"kettle {i} toaster"}
                                            for i in range(30)])
    client = milvus_schema.connect(str(tmp_path / "probe.db"))  # the class to patch
    real = type(client).insert

    def full(self, name, rows, *args, **kwargs):
        raise MilvusException(1, "[Errno 28] No space left on device")

    type(client).insert = full
    try:
        code = main(["index", str(docs), "--out", str(tmp_path / "idx"), "--store", "milvus",
                     *INDEX])
    finally:
        type(client).insert = real
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"ragkit: error: Milvus at {tmp_path / 'idx' / 'milvus.db'} stopped "
                           f"the upload into ")
    assert line.endswith("No space left on device; the disk is full: free space and run the "
                         "same command again to resume")
