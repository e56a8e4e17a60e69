"""A damaged cache file (the embedding cache, the paid-call cache) is one line naming the file
and what to do, in every command that reads it; `ragkit cache clear` repairs it.

Each cache is made by the installed CLI, then damaged as a failing disk or a crash during a
copy leaves it (8192 bytes of 0xff over its pages after the first), then every command runs
in a new process.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_errors import one_error_line

RAGKIT = str(Path(sys.executable).parent / "ragkit")
MODELS = Path.home() / ".cache" / "ragkit" / "models"
DOCS = ('{"id": "a", "text": "the kettle boils water in two minutes"}\n'
        '{"id": "b", "text": "a toaster browns bread slices"}\n'
        '{"id": "c", "text": "the kettle has a blue light"}\n'
        '{"id": "d", "text": "grinders crush coffee beans"}\n')

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason="MiniLM is not installed")


def damage(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 8192)


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder with docs.jsonl and q.jsonl, the working directory, with a fresh RAGKIT_HOME
    that sees the installed MiniLM."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "models").symlink_to(MODELS)
    (tmp_path / "docs.jsonl").write_text(DOCS)
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "kettle boil time"}\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    return tmp_path


def index(embedder: str, out: str = "ix") -> None:
    built = ragkit("index", "docs.jsonl", "--out", out, "--embedder", embedder)
    assert built.returncode == 0, built.stderr


def ragkit(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    env["RAGKIT_HOME"] = str(Path.cwd() / "home")
    return subprocess.run([RAGKIT, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_damaged_embedding_cache_is_one_line_everywhere_and_cache_clear_repairs_it(work):
    index("minilm")
    db = work / "home" / "cache" / "embeddings.sqlite"
    damage(db)
    told = (f"ragkit: error: {db}: the embedding cache is damaged (database disk image is "
            f"malformed); run `ragkit cache clear --embeddings` or delete the file (vectors "
            f"are embedded again when next needed)")
    assert one_error_line(ragkit("index", "docs.jsonl", "--out", "ix2", "--embedder", "minilm")) \
        == told
    assert not (work / "ix2").exists()  # nothing half-written
    assert one_error_line(ragkit("search", "ix", "--queries", "q.jsonl", "--mode", "dense",
                             "--out", "run.trec")) == told
    assert not (work / "run.trec").exists()
    assert one_error_line(ragkit("ask", "--index", "ix", "kettle boil time")) == told

    size = db.stat().st_size
    cleared = ragkit("cache", "clear", "--embeddings")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == (f"removed the embedding cache {db} ({size / 1e6:.1f} MB); "
                              f"vectors are embedded again when next needed\n")
    assert not db.exists()
    index("minilm", "ix2")
    assert db.stat().st_size > 0  # made again


def test_a_damaged_call_cache_is_one_line_everywhere_and_cache_clear_repairs_it(work):
    from ragkit.cache import CallCache
    from ragkit.pricing import Usage
    index("none")
    db = work / "home" / "cache" / "calls.sqlite"
    cache = CallCache(db)  # as an earlier run left it: replies filling several pages
    for i in range(40):
        cache.put(f"key{i}", "/v1/messages", "claude-haiku-4-5", {"text": "x" * 300 + str(i)},
                  Usage(100, 10, 0, 0), priced=False)
    cache.close()
    assert db.stat().st_size > 12288
    damage(db)
    told = (f"ragkit: error: {db}: the call cache is damaged (database disk image is "
            f"malformed); run `ragkit cache clear` or delete the file (calls are made again, "
            f"and paid for again, when next needed)")
    assert one_error_line(ragkit("ask", "--index", "ix", "kettle boil time")) == told
    assert one_error_line(ragkit("cache", "stats")) == told
    line = one_error_line(ragkit("index", "docs.jsonl", "--out", "ix3", "--embedder", "none",
                             "--contextualizer", "claude"))
    # the damaged cache's own line, not "…; contexts obtained so far are kept in the call
    # cache, rerun to continue" after it (a re-run fails the same until the cache is cleared)
    assert line == told
    assert not (work / "ix3").exists()

    cleared = ragkit("cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == (f"removed the damaged call cache {db} (database disk image is "
                              f"malformed); it starts again empty\n")
    stats = ragkit("cache", "stats")
    assert (stats.returncode, stats.stdout) == (0, "the call cache is empty\n")
    asked = ragkit("ask", "--index", "ix", "kettle boil time")
    assert asked.returncode == 0, asked.stderr


def test_a_zeroed_call_cache_is_damaged_not_a_strangers_file(work):
    """A cache whose first page was zeroed was refused as "not a ragkit call cache … choose a
    new path", by `cache clear` too, whose help says it deletes a damaged one."""
    db = work / "home" / "cache" / "calls.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(bytes(36864))
    assert one_error_line(ragkit("cache", "stats")) == (
        f"ragkit: error: {db}: the call cache is damaged (file is not a database); run "
        f"`ragkit cache clear` or delete the file (calls are made again, and paid for again, "
        f"when next needed)")
    cleared = ragkit("cache", "clear")
    assert cleared.stdout == (f"removed the damaged call cache {db} (file is not a database); "
                              f"it starts again empty\n"), cleared.stderr
    db.write_bytes(b"my notes, not zeros" + bytes(100))  # a stranger's file is still refused
    assert "is not a ragkit call cache" in one_error_line(ragkit("cache", "clear"))
    assert db.read_bytes().startswith(b"my notes")


def test_cache_clear_embeddings_empties_a_sound_embedding_cache(work):
    from ragkit.embed.cache import CachedEmbedder
    from word_embedder import WordEmbedder
    db = work / "home" / "cache" / "embeddings.sqlite"
    CachedEmbedder(WordEmbedder(["kettle"]), db).embed(["the kettle boils"])
    cleared = ragkit("cache", "clear", "--embeddings")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.startswith(f"removed the embedding cache {db} (")
    assert not db.exists()
    again = ragkit("cache", "clear", "--embeddings")
    assert again.stdout == f"no embedding cache at {db}\n"


def test_an_embedding_cache_that_is_not_sqlite_is_refused_with_advice_that_works(work):
    """A file of text at the embedding cache's path: `index` called it damaged and advised
    `ragkit cache clear --embeddings`, which refuses such a file (it may not be ragkit's).
    Both now say the one thing that works, and nothing deletes it."""
    db = work / "home" / "cache" / "embeddings.sqlite"
    db.parent.mkdir(parents=True)
    db.write_text("my notes\n")
    assert one_error_line(ragkit("index", "docs.jsonl", "--out", "ix", "--embedder",
                                 "minilm")) == (
        f"ragkit: error: {db}: is not a ragkit embedding cache (sqlite), so it is not used; "
        f"move or delete it yourself")
    assert one_error_line(ragkit("cache", "clear", "--embeddings")) == (
        f"ragkit: error: {db}: is not a ragkit cache (sqlite), so it is not deleted; move or "
        f"delete it yourself")
    assert db.read_text() == "my notes\n" and not (work / "ix").exists()


def test_a_call_cache_that_is_not_sqlite_is_refused_in_words_that_fit_the_command(work):
    """`cache stats` on a calls.sqlite of text said "refusing to overwrite it", writing
    nothing; `cache clear` said the same."""
    db = work / "home" / "cache" / "calls.sqlite"
    db.parent.mkdir(parents=True)
    db.write_text("my notes\n")
    for action, done in (("stats", "read"), ("clear", "deleted")):
        assert one_error_line(ragkit("cache", action)) == (
            f"ragkit: error: {db}: is not a ragkit call cache (sqlite), so it is not {done}; "
            f"move or delete it yourself")
    assert db.read_text() == "my notes\n"
