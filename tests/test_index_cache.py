"""The run-level index cache: one build per index while `$RAGKIT_INDEX_CACHE` is set."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragkit import embed, index_cache
from ragkit.documents import Document
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from tests.test_cache_read_only_media import immutable
from tests.test_pipeline import DOCS, HashEmbedder
from tiny_notebooks import tiny_notebook

RAGKIT = str(Path(sys.executable).parent / "ragkit")


@pytest.fixture
def shared(tmp_path, monkeypatch):
    """A shared folder, a private embedding cache, and "hash-test" registered by name."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(index_cache.ENV, str(tmp_path / "indexes"))
    made = []

    def factory():
        made.append(HashEmbedder())
        return made[-1]

    monkeypatch.setitem(embed.EMBEDDERS, "hash-test", factory)
    builds = []
    real = Pipeline._build.__func__

    def counting(cls, *args):
        builds.append(args[1])
        return real(cls, *args)

    monkeypatch.setattr(Pipeline, "_build", classmethod(counting))
    (tmp_path / "indexes").mkdir()
    return tmp_path / "indexes", builds, made


def test_second_build_is_loaded_and_searches_alike(shared):
    folder, builds, made = shared
    config = IndexConfig(embedder="hash-test")
    first = Pipeline.build(DOCS, config, progress=False)
    second = Pipeline.build(DOCS, config, progress=False)
    assert builds == [config]  # built once, then loaded
    assert len([p for p in folder.iterdir() if p.is_dir()]) == 1
    assert [c.indexed_text for c in second.chunks] == [c.indexed_text for c in first.chunks]
    for mode in ("bm25", "dense", "hybrid"):
        query = ["How much did ACME revenue grow?"]
        assert (second.search(query, 3, SearchConfig(mode=mode))
                == first.search(query, 3, SearchConfig(mode=mode)))
    # the loaded index embeds its queries with the embedder the key was made with
    assert second.embedder.inner is made[-1]


def test_other_documents_config_or_chunks_are_other_indexes(shared):
    folder, builds, _ = shared
    Pipeline.build(DOCS, IndexConfig(embedder="hash-test"), progress=False)
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    Pipeline.build(DOCS, IndexConfig(embedder=None, chunk_size=256), progress=False)
    changed = [*DOCS[:2], Document("refund.md", "Refunds: fourteen days.", "Refund policy")]
    Pipeline.build(changed, IndexConfig(embedder=None), progress=False)
    given = Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False).chunks[:2]
    Pipeline.build(DOCS, IndexConfig(embedder=None), chunks=given, progress=False)
    assert len(builds) == 5
    assert len([p for p in folder.iterdir() if p.is_dir()]) == 5


def test_in_code_embedder_and_claude_contexts_are_not_cached(shared, monkeypatch):
    folder, builds, _ = shared
    Pipeline.build(DOCS, IndexConfig(embedder="hash-test"), progress=False,
                   embedder=HashEmbedder())
    Pipeline.build(DOCS, IndexConfig(embedder="hash-test"), progress=False,
                   embedder=HashEmbedder())
    assert not index_cache.cacheable(IndexConfig(contextualizer="claude"))
    # the uncached contextualizers bypass the folder (structural stands in: claude is slow)
    monkeypatch.setattr(index_cache, "UNCACHED_CONTEXTUALIZERS", ("structural",))
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    assert len(builds) == 4
    assert list(folder.iterdir()) == []


def test_unset_builds_every_time(shared, monkeypatch):
    folder, builds, _ = shared
    monkeypatch.delenv(index_cache.ENV)
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    assert len(builds) == 2
    assert list(folder.iterdir()) == []


def test_shared_sets_a_folder_for_the_block_and_removes_it(monkeypatch):
    monkeypatch.delenv(index_cache.ENV, raising=False)
    with index_cache.shared() as folder:
        assert os.environ[index_cache.ENV] == str(folder) and folder.is_dir()
        with index_cache.shared() as inner:  # a command inside another keeps its folder
            assert inner == folder
        assert folder.is_dir()
    assert index_cache.ENV not in os.environ
    assert not folder.exists()


class _Saved:
    """A stand-in for a built Pipeline: `save` writes the index.json a later load looks for."""

    def save(self, target) -> None:
        target.mkdir(parents=True)
        (target / "index.json").write_text("{}")


def _build_after(barrier, where, log) -> None:
    import time

    def build(*args):
        with open(log, "a") as f:
            f.write("build\n")
        time.sleep(0.3)
        return _Saved()

    def load(target, embedder=None):
        with open(log, "a") as f:
            f.write("load\n")
        return _Saved()

    barrier.wait()
    index_cache.build_once(build, load, where, [Document("a", "alpha beta")],
                           IndexConfig(embedder=None), None, False)


def test_processes_building_the_same_index_build_it_once(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    barrier, log = ctx.Barrier(2), tmp_path / "log.txt"
    workers = [ctx.Process(target=_build_after, args=(barrier, tmp_path, log)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert [w.exitcode for w in workers] == [0, 0]
    assert sorted(log.read_text().split()) == ["build", "load"]  # the second waited, loaded


def test_the_indexes_of_a_killed_run_go_at_the_next_run_a_live_runs_stay(tmp_path):
    """kill -9 (or SIGTERM, SIGHUP: a closed terminal) runs no clean-up: each killed run
    left its folder of built indexes in the temporary folder for good."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "RAGKIT_HOME": str(tmp_path / "home")}
    env.pop(index_cache.ENV, None)
    said = tmp_path / "shared.txt"
    slow = tiny_notebook(tmp_path / "01_slow.ipynb", (
        "import os, pathlib, time\n"
        "shared = pathlib.Path(os.environ['RAGKIT_INDEX_CACHE'])\n"
        "(shared / 'an index').write_text('built')\n"
        f"pathlib.Path({str(said)!r}).write_text(str(shared))\n"
        "time.sleep(300)"))
    quick = tiny_notebook(tmp_path / "01_quick.ipynb", "print(x)")

    def run(notebook, out):
        return subprocess.Popen([RAGKIT, "cookbook", "run", "--notebook", str(notebook),
                                 "--out", str(tmp_path / out), "--jobs", "1"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    killed = run(slow, "killed")
    try:
        deadline = time.monotonic() + 120
        while not said.exists() and killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert said.exists(), killed.stderr.read() if killed.poll() is not None else "no start"
        shared = Path(said.read_text())
        assert (shared / "an index").is_file()
        beside = run(quick, "beside")  # while the slow run is alive, its indexes stay
        assert beside.wait(timeout=120) == 0, beside.stderr.read()
        assert (shared / "an index").is_file()
    finally:
        killed.kill()
        killed.wait(timeout=60)
    assert (shared / "an index").is_file()  # killed: nothing deleted them
    after = run(quick, "after")
    assert after.wait(timeout=120) == 0, after.stderr.read()
    assert not shared.exists()
    assert [p.name for p in tmp.iterdir() if p.name.startswith("ragkit-indexes-")] == []


def test_a_refresh_killed_leaves_no_folder_among_the_notebooks_after_the_next(tmp_path):
    """`ragkit cookbook refresh` executes a notebook in a hidden folder beside it; killed with
    -9 (or by a closed terminal) it left that folder, a half-run copy of the notebook, among
    the user's notebooks for good. The next refresh in that folder deletes it; a live
    refresh's folder stays."""
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    env.pop(index_cache.ENV, None)
    books = tmp_path / "notebooks"
    books.mkdir()
    said = tmp_path / "started.txt"
    slow = tiny_notebook(books / "01_slow.ipynb", (
        "import pathlib, time\n"
        f"pathlib.Path({str(said)!r}).write_text('started')\n"
        "time.sleep(300)"))
    quick = tiny_notebook(books / "02_quick.ipynb", "print(x)")

    def refresh(notebook):
        return subprocess.Popen([RAGKIT, "cookbook", "refresh", "--notebook", str(notebook),
                                 "--jobs", "1"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    def hidden() -> list[str]:
        return sorted(p.name for p in books.iterdir() if p.name.startswith("."))

    killed = refresh(slow)
    try:
        deadline = time.monotonic() + 120
        while not said.exists() and killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert said.exists(), killed.stderr.read() if killed.poll() is not None else "no start"
        [left] = hidden()
        beside = refresh(quick)  # while the slow refresh is alive, its folder stays
        assert beside.wait(timeout=120) == 0, beside.stderr.read()
        assert hidden() == [left]
    finally:
        killed.kill()
        killed.wait(timeout=60)
    assert hidden() == [left]  # killed: nothing deleted it
    after = refresh(quick)
    assert after.wait(timeout=120) == 0, after.stderr.read()
    assert hidden() == []
    assert sorted(p.name for p in books.iterdir()) == ["01_slow.ipynb", "02_quick.ipynb"]


def test_a_refresh_in_a_folder_that_cannot_be_written_is_one_line(tmp_path):
    """`ragkit cookbook refresh` of a notebook in a folder that cannot be written (a read-only
    checkout; here immutable) stopped with a PermissionError traceback from the hidden folder
    it executes the notebook in; it is one line naming the folder, the notebook unchanged."""
    books = tmp_path / "notebooks"
    books.mkdir()
    notebook = tiny_notebook(books / "01_quick.ipynb", "print(x)")
    before = notebook.read_bytes()
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    env.pop(index_cache.ENV, None)
    with immutable(books):
        done = subprocess.run([RAGKIT, "cookbook", "refresh", "--notebook", str(notebook)],
                              env=env, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr.splitlines()[-1]) == (
        2, "", f"ragkit: error: {books}: cannot make a working folder here (Operation not "
               f"permitted)")
    assert "Traceback" not in done.stderr
    assert notebook.read_bytes() == before and [p.name for p in books.iterdir()] == [
        "01_quick.ipynb"]
