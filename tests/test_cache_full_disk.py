"""RAGKIT_HOME on a full disk: a search embeds its queries without keeping them.

It stopped with "the embedding cache cannot be used (disk I/O error)" — opening the cache's
write-ahead log needs a byte the disk does not have — though a query needs no cache. Run on
a real full file system (a 1 MiB tmpfs filled up), skipped where mounting one is not
allowed (not root)."""
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit import models

WARNED = "is on a full disk, so new vectors are not kept"


@contextlib.contextmanager
def full_disk(folder: Path, before=None):
    """`folder` as a 1 MiB tmpfs with no byte left (`before(folder)` run first, while there
    is room); unmounted after."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        if before is not None:
            before(folder)
        with open(folder / "filler", "wb") as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        assert os.statvfs(folder).f_bavail == 0
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def _home(tmp_path: Path) -> Path:
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(models.model_dir().parent)
    return home


def test_search_on_a_full_disk_embeds_the_query_without_keeping_it(tmp_path):
    home = _home(tmp_path)
    env = {**os.environ, "RAGKIT_HOME": str(home)}
    env.pop("ANTHROPIC_API_KEY", None)
    docs, queries = tmp_path / "docs.jsonl", tmp_path / "q.jsonl"
    docs.write_text('{"id": "kettle", "text": "The kettle boils water in two minutes."}\n'
                    '{"id": "fridge", "text": "The fridge keeps milk cold for a week."}\n')
    queries.write_text('{"id": "q1", "text": "kettle water"}\n{"id": "q2", "text": "milk"}\n')
    ragkit = [sys.executable, "-m", "ragkit.cli"]
    built = subprocess.run([*ragkit, "index", str(docs), "--out", str(tmp_path / "idx"),
                            "--embedder", "minilm"], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    built = subprocess.run([*ragkit, "index", str(docs), "--out", str(tmp_path / "e5")],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    search = [*ragkit, "search", str(tmp_path / "idx"), "--queries", str(queries), "--k", "2",
              "--out", "-"]
    roomy = subprocess.run(search, capture_output=True, text=True, env=env)
    assert roomy.returncode == 0, roomy.stderr
    with full_disk(home / "cache"):  # hides the cache written so far: every vector is new
        done = subprocess.run(search, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout == roomy.stdout  # the same run
        assert [line for line in done.stderr.splitlines() if "warning" in line] == [
            f"ragkit: warning: the embedding cache at {home / 'cache' / 'embeddings.sqlite'} "
            f"{WARNED} (they are embedded again each time they are needed)"]
        # the offline extractive answerer (an e5-small index) sends no call: it answers; it
        # stopped at "the call cache cannot be used (database or disk is full)", leaving a
        # 0-byte calls.sqlite
        question = "How fast does the kettle boil?"
        asked = subprocess.run([*ragkit, "ask", "--index", str(tmp_path / "e5"), "--k", "2",
                                question], capture_output=True, text=True, env=env)
        assert asked.returncode == 0, asked.stderr
        assert "The kettle boils water in two minutes." in asked.stdout
        assert not (home / "cache" / "calls.sqlite").exists()
        # the stand-in's rule (a MiniLM index) goes through the call cache, whose replies
        # must be kept: one line, saying why
        asked = subprocess.run([*ragkit, "ask", "--index", str(tmp_path / "idx"), "--k", "2",
                                question], capture_output=True, text=True, env=env)
        assert asked.returncode == 2
        assert asked.stderr.splitlines()[-1] == (
            f"ragkit: error: {home / 'cache' / 'calls.sqlite'}: the call cache is on a full "
            f"disk, so a call it does not hold is not sent (its reply could not be kept): set "
            f"RAGKIT_HOME to a folder that can be written, or run where this cache can be "
            f"written")


class Counting:
    """A test embedder that records what it is sent."""

    name, dim, max_tokens = "count-test", 4, 64

    def __init__(self):
        self.sent = []

    def embed(self, texts, *, input_type="document"):
        self.sent += list(texts)
        return np.array([[len(t), 1.0, 0.0, 2.0] for t in texts], dtype=np.float32)

    def token_lengths(self, texts):
        return [len(t) for t in texts]


def test_a_cached_embedder_on_a_full_disk_serves_what_it_holds(tmp_path):
    """In one process: what the cache holds is served from it, a new text is embedded and
    used (one warning), and the next call does the same without a second warning."""
    import warnings
    from ragkit.embed.cache import CachedEmbedder

    def keep(folder):
        CachedEmbedder(Counting(), folder / "embeddings.sqlite").embed(["kept"])

    with full_disk(tmp_path / "cache", before=keep) as folder:
        inner = Counting()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cached = CachedEmbedder(inner, folder / "embeddings.sqlite")
            first = cached.embed(["kept", "new one"])
            again = cached.embed(["new one"])
        assert inner.sent == ["new one", "new one"]  # "kept" came from the file
        np.testing.assert_array_equal(first, [[4, 1, 0, 2], [7, 1, 0, 2]])
        np.testing.assert_array_equal(again, [[7, 1, 0, 2]])
        assert [str(w.message) for w in caught] == [
            f"the embedding cache at {folder / 'embeddings.sqlite'} {WARNED} (they are "
            f"embedded again each time they are needed)"]


def test_a_damaged_cache_on_a_full_disk_is_said_to_be_damaged_not_read_only(tmp_path):
    """It was "damaged … and read-only here (read-only media, an immutable file): run `ragkit
    cache clear --embeddings` where it can be written": a full disk is no read-only medium,
    and the clear works there."""
    import gc
    import sqlite3
    from ragkit.embed.cache import CachedEmbedder, remove_cache
    from ragkit.sqlite_files import DamagedCache

    def damaged(folder):
        cache = CachedEmbedder(Counting(), folder / "embeddings.sqlite")
        cache.embed([f"text {i} " * 20 for i in range(300)])
        del cache
        gc.collect()
        with contextlib.closing(sqlite3.connect(folder / "embeddings.sqlite")) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        data = bytearray((folder / "embeddings.sqlite").read_bytes())
        for page in range(2 * 4096, len(data), 4096):
            data[page:page + 100] = b"\xff" * 100
        (folder / "embeddings.sqlite").write_bytes(bytes(data))

    with full_disk(tmp_path / "cache", before=damaged) as folder:
        path = folder / "embeddings.sqlite"
        with pytest.raises(DamagedCache) as caught:
            CachedEmbedder(Counting(), path).embed(["new"])
        assert str(caught.value) == (
            f"{path}: the embedding cache is damaged (database disk image is malformed); run "
            f"`ragkit cache clear --embeddings` or delete the file (vectors are embedded again "
            f"when next needed)")
        assert remove_cache(path) > 0 and not path.exists()


def test_a_call_cache_made_before_the_disk_filled_serves_what_it_holds(tmp_path):
    """Where calls.sqlite was there already (anyone who ran `ask` before), opening it on a
    full disk failed as "disk I/O error" (its write-ahead log could not be made), and only a
    missing cache was read as it is: the offline answerer stopped there, leaving the -wal
    and -shm files the open made. A held reply is served; a call it does not hold stops in
    one line."""
    from ragkit.cache import CallCache, ReadOnlyCache
    from ragkit.pricing import Usage

    def keep(folder):
        cache = CallCache(folder / "calls.sqlite")
        cache.put("held", "messages", "claude-haiku-4-5", {"text": "kept"}, Usage(3, 4), True)
        cache.close()

    with full_disk(tmp_path / "cache", before=keep) as folder:
        before = sorted(p.name for p in folder.iterdir())
        cache = CallCache(folder / "calls.sqlite")
        assert (cache.read_only, cache.full) == (True, True)
        assert sorted(p.name for p in folder.iterdir()) == before  # the failed open's are gone
        assert cache.get("held").reply == {"text": "kept"}
        with pytest.raises(ReadOnlyCache, match="the call cache is on a full disk, so a call "
                                                "it does not hold is not sent"):
            cache.get("new")
        cache.close()
