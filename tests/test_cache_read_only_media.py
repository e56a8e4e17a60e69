"""Caches on read-only media (a RAGKIT_HOME prepared on one machine and mounted read-only on
another, an immutable file): cached vectors are read, new ones are embedded and used but not
kept, with one warning naming the cache, `ragkit cache stats` reads the call cache, and the
calls it holds are served (`ragkit ask`, the claude contextualizer), those it lacks not sent.

The home is made read-only by a read-only bind mount in the command's own mount namespace
(`unshare -rm`; it ends with the command): root's permissions override a chmod, not a
read-only mount.
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
import pytest

from ragkit.cache import CallCache
from ragkit.embed.cache import CachedEmbedder
from ragkit.errors import RagkitError, RagkitWarning
from ragkit.pricing import Usage
from word_embedder import WordEmbedder

RAGKIT = str(Path(sys.executable).parent / "ragkit")
MODELS = Path.home() / ".cache" / "ragkit" / "models"
DOCS = ('{"id": "a", "text": "the kettle boils water in two minutes"}\n'
        '{"id": "b", "text": "a toaster browns bread slices"}\n'
        '{"id": "c", "text": "the kettle has a blue light"}\n')
MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    return {**env, "RAGKIT_HOME": str(home)}


def ragkit(home: Path, *args: str, read_only: bool = False) -> subprocess.CompletedProcess:
    """`ragkit args` with RAGKIT_HOME `home`, mounted read-only for this command alone."""
    mount = ["unshare", "-rm", "sh", "-c", MOUNT, "sh", str(home)] if read_only else []
    return subprocess.run([*mount, RAGKIT, *args], capture_output=True, text=True,
                          env=env_for(home), timeout=120)


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """`path` made immutable (chattr +i) for the block; the test is skipped where chattr
    cannot (no e2fsprogs, a file system without the flag, not root)."""
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


@pytest.fixture
def mountable(tmp_path: Path) -> Path:
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", MOUNT, "sh", str(tmp_path),
                            "sh", "-c", '! touch "$0/x"', str(tmp_path)],
                           capture_output=True, text=True)  # mounted, and read-only
    if probe.returncode != 0:
        pytest.skip(f"no read-only mount in a namespace of its own here: {probe.stderr}")
    return tmp_path


@pytest.fixture
def work(mountable: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tmp_path = mountable
    if not MODELS.is_dir():
        pytest.skip("MiniLM is not installed")
    for home in ("home", "bare"):
        (tmp_path / home).mkdir()
        (tmp_path / home / "models").symlink_to(MODELS)
    (tmp_path / "docs.jsonl").write_text(DOCS)
    (tmp_path / "q1.jsonl").write_text('{"id": "q1", "text": "kettle boil time"}\n')
    (tmp_path / "q2.jsonl").write_text('{"id": "q2", "text": "browning bread"}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def search(home: Path, queries: str, out: str, read_only: bool) -> str:
    """The search's stderr lines that speak of read-only caches (it must succeed)."""
    done = ragkit(home, "search", "ix", "--queries", queries, "--mode", "dense", "--out", out,
                  read_only=read_only)
    assert done.returncode == 0, done.stderr
    return "".join(line + "\n" for line in done.stderr.splitlines() if "read-only" in line)


def test_a_read_only_home_serves_cached_vectors_and_uses_new_ones_without_keeping_them(work):
    home, cache = work / "home", work / "home" / "cache"
    built = ragkit(home, "index", "docs.jsonl", "--out", "ix", "--embedder", "minilm")
    assert built.returncode == 0, built.stderr
    assert search(home, "q1.jsonl", "q1.trec", read_only=False) == ""
    files = {p.name: p.read_bytes() for p in cache.iterdir()}

    assert search(home, "q1.jsonl", "q1-ro.trec", read_only=True) == ""  # all cached
    assert Path("q1-ro.trec").read_text() == Path("q1.trec").read_text()
    db = cache / "embeddings.sqlite"
    assert search(home, "q2.jsonl", "q2-ro.trec", read_only=True) == (
        f"ragkit: warning: the embedding cache at {db} is read-only, so new vectors are not "
        f"kept (they are embedded again each time they are needed)\n")
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == files  # nothing written

    assert search(home, "q2.jsonl", "q2.trec", read_only=False) == ""  # kept now
    assert Path("q2-ro.trec").read_text() == Path("q2.trec").read_text()


def test_a_read_only_home_without_a_cache_searches(work):
    built = ragkit(work / "home", "index", "docs.jsonl", "--out", "ix", "--embedder", "minilm")
    assert built.returncode == 0, built.stderr
    assert search(work / "home", "q1.jsonl", "q1.trec", read_only=False) == ""
    bare = work / "bare"  # the models, no cache folder
    db = bare / "cache" / "embeddings.sqlite"
    assert search(bare, "q1.jsonl", "q1-ro.trec", read_only=True) == (
        f"ragkit: warning: the embedding cache at {db} is read-only, so new vectors are not "
        f"kept (they are embedded again each time they are needed)\n")
    assert Path("q1-ro.trec").read_text() == Path("q1.trec").read_text()
    assert sorted(p.name for p in bare.iterdir()) == ["models"]


def test_cache_stats_reads_a_call_cache_on_read_only_media(mountable):
    home, cache = mountable / "home", mountable / "home" / "cache"
    calls = CallCache(cache / "calls.sqlite")
    for i in range(3):
        calls.put(f"key{i}", "/v1/messages", "claude-haiku-4-5", {"text": str(i)},
                  Usage(1000, 100, 0, 0), priced=True, batch=i == 0)
    calls.get("key1")
    calls.close()
    stats = ragkit(home, "cache", "stats")
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.splitlines()[1].split()[:5] == ["claude-haiku-4-5", "/v1/messages",
                                                        "3", "1", "3,000"]
    files = {p.name: p.read_bytes() for p in cache.iterdir()}
    read = ragkit(home, "cache", "stats", read_only=True)
    assert (read.returncode, read.stdout, read.stderr) == (0, stats.stdout, "")
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == files

    old_schema = """CREATE TABLE calls (key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT
        NOT NULL, reply TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
        cache_write INTEGER NOT NULL, cache_read INTEGER NOT NULL, priced INTEGER NOT NULL,
        created REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0)"""
    for name in ("old", "copy"):  # made before replies were marked as batch results
        (mountable / name / "cache").mkdir(parents=True)
        with closing(sqlite3.connect(mountable / name / "cache" / "calls.sqlite")) as db, db:
            db.execute(old_schema)
            db.execute("INSERT INTO calls VALUES ('k', '/v1/messages', 'claude-haiku-4-5', "
                       "'{}', 1000, 100, 0, 0, 1, 0, 2)")
    listed = ragkit(mountable / "copy", "cache", "stats")  # the copy gets the column
    assert "claude-haiku-4-5" in listed.stdout, listed.stderr
    read = ragkit(mountable / "old", "cache", "stats", read_only=True)
    assert (read.returncode, read.stdout, read.stderr) == (0, listed.stdout, "")

    bare = mountable / "bare"  # no cache at all: empty, and nothing made
    bare.mkdir()
    empty = ragkit(bare, "cache", "stats", read_only=True)
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "the call cache is empty\n", "")
    assert list(bare.iterdir()) == []


def damaged_calls(db: Path) -> None:
    """A call cache of several pages at `db`, its pages 2 to 3 overwritten (a failing disk)."""
    calls = CallCache(db)
    for i in range(40):
        calls.put(f"key{i}", "/v1/messages", "claude-haiku-4-5", {"text": "x" * 300 + str(i)},
                  Usage(100, 10, 0, 0), priced=False)
    calls.close()
    with open(db, "r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 8192)


DAMAGED_READ_ONLY = (
    "ragkit: error: {db}: the call cache is damaged (database disk image is malformed) and "
    "read-only here (read-only media, an immutable file): run `ragkit cache clear` where it "
    "can be written, or copy it into a writable RAGKIT_HOME and clear it there (calls are "
    "made again, and paid for again, when next needed)\n")


def test_cache_stats_says_a_damaged_call_cache_on_read_only_media_is_read_only(mountable):
    """`ragkit cache stats` on a damaged call cache on read-only media said to run `ragkit
    cache clear`, which cannot delete it there; it says the cache is read-only here and what
    can be done, and the files stay as they were."""
    home, db = mountable / "home", mountable / "home" / "cache" / "calls.sqlite"
    damaged_calls(db)
    files = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    read = ragkit(home, "cache", "stats", read_only=True)
    assert (read.returncode, read.stdout, read.stderr) == (2, "", DAMAGED_READ_ONLY.format(db=db))
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == files


def test_cache_stats_says_a_damaged_immutable_call_cache_is_read_only(tmp_path):
    """A damaged immutable call cache in a folder that can be written was "the call cache is
    empty": each read's own marks in the -shm looked like another process changing the file,
    until the reads gave up. It is damaged and read-only, as on read-only media."""
    home, db = tmp_path / "home", tmp_path / "home" / "cache" / "calls.sqlite"
    damaged_calls(db)
    with immutable(db):
        read = ragkit(home, "cache", "stats")
    assert (read.returncode, read.stdout, read.stderr) == (2, "", DAMAGED_READ_ONLY.format(db=db))


HELD = """
import os, sys
from ragkit.cache import CallCache
db = sys.argv[1]

def held():  # this process's POSIX locks on the file: sqlite's
    inode, me = os.stat(db).st_ino, str(os.getpid())
    return [line.split()[-2:] for line in open("/proc/locks").read().splitlines()
            if line.split()[4] == me and line.split()[5].endswith(f":{inode}")]

first = CallCache(db)
first.get("key1")  # its connection holds sqlite's shared lock on the file now
before = held()
CallCache(db)  # another cache object in this process, as each LLM() makes
print(first.read_only, len(before), held() == before)
"""


def test_a_second_read_only_call_cache_keeps_the_locks_of_the_first(tmp_path):
    """A second CallCache on a call cache that cannot be written read the file's header
    again: closing that descriptor dropped every lock sqlite held on the file for the first
    one, so another process closing its connection believed it was the last reader and
    checkpointed and reset the write-ahead log under it. The header is read once."""
    db = tmp_path / "calls.sqlite"
    calls = CallCache(db)
    calls.put("key1", "/v1/messages", "claude-haiku-4-5", {"text": "1"}, Usage(1, 1, 0, 0),
              priced=True)
    calls.close()
    with immutable(db):
        done = subprocess.run([sys.executable, "-c", HELD, str(db)], capture_output=True,
                              text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True 1 True\n", "")


class Seen(WordEmbedder):
    """WordEmbedder that records the texts it embeds."""

    def __init__(self) -> None:
        super().__init__(["kettle"])
        self.seen: list[str] = []

    def embed(self, texts, *, input_type="document", progress=False) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts, input_type=input_type)


def test_an_immutable_embedding_cache_is_read_and_not_written(tmp_path):
    db = tmp_path / "e.sqlite"
    CachedEmbedder(Seen(), db).embed(["the kettle boils"])
    with immutable(db):
        inner = Seen()
        cached = CachedEmbedder(inner, db)
        with pytest.warns(RagkitWarning) as caught:
            out = cached.embed(["the kettle boils", "a new kettle"])
            cached.embed(["another new kettle"])  # said once
        assert [str(w.message) for w in caught] == [
            f"the embedding cache at {db} is read-only, so new vectors are not kept (they are "
            f"embedded again each time they are needed)"]
        assert inner.seen == ["a new kettle", "another new kettle"]  # the cached one was read
        np.testing.assert_array_equal(out, Seen().embed(["the kettle boils", "a new kettle"]))
    fresh = Seen()
    CachedEmbedder(fresh, db).embed(["the kettle boils", "a new kettle"])
    assert fresh.seen == ["a new kettle"]  # not kept; the one cached before still is


HASHED = '''
import hashlib
import numpy as np


class Hashed:
    """A vector of 256 numbers drawn from each text's hash: every text its own."""
    name, dim, max_tokens, fingerprint = "hashed", 256, 512, "hashed-1"

    def __init__(self):
        self.sent = 0

    def token_lengths(self, texts):
        return [len(t) for t in texts]

    def embed(self, texts, *, input_type="document", progress=False):
        self.sent += len(texts)
        seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
        return np.stack([np.random.default_rng(s).standard_normal(self.dim)
                         for s in seeds]).astype(np.float32)
'''
WRITE = """
import sys
from hashed import Hashed
from ragkit.embed.cache import CachedEmbedder
CachedEmbedder(Hashed(), sys.argv[1]).embed([f"text {i}" for i in range(*map(int, sys.argv[2:]))])
"""
READ = """
import sys, time, warnings
from pathlib import Path
import numpy as np
from hashed import Hashed
from ragkit.embed.cache import CachedEmbedder
warnings.simplefilter("ignore")  # the read-only warning: asserted elsewhere
inner, texts, flags = Hashed(), [f"text {i}" for i in range(int(sys.argv[2]))], Path(sys.argv[3])
cached = CachedEmbedder(inner, sys.argv[1])
cached.embed(texts[:200])  # read from the cache, its pages kept by the open connection
(flags / "read").touch()
while not (flags / "written").exists():
    time.sleep(0.05)
inner.sent = 0
try:
    out = cached.embed(texts)
except Exception as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
wrong = sum(not np.array_equal(a, b) for a, b in zip(out, Hashed().embed(texts)))
print(cached.read_only, wrong, inner.sent)
"""


def python(home: Path, script: str, *args: object,
           read_only: bool = False) -> subprocess.Popen:
    """`python -c script args` with RAGKIT_HOME `home` (mounted read-only for it alone) and
    the test's `hashed.py` importable."""
    mount = ["unshare", "-rm", "sh", "-c", MOUNT, "sh", str(home)] if read_only else []
    return subprocess.Popen([*mount, sys.executable, "-c", script, *map(str, args)],
                            env={**env_for(home), "PYTHONPATH": str(home.parent)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def hashed_home(mountable: Path) -> Path:
    """A RAGKIT_HOME with a cache folder, beside `hashed.py` and a folder of flags."""
    (mountable / "home" / "cache").mkdir(parents=True)
    (mountable / "flags").mkdir()
    (mountable / "hashed.py").write_text(HASHED)
    return mountable / "home"


def test_a_read_only_cache_another_process_writes_is_read_right(hashed_home):
    """A long-lived reader of a cache it cannot write (a kernel on a machine that mounts the
    cache read-only, while the machine that owns it keeps embedding into it) read the file
    as immutable: after the owner stored more vectors, the reader's kept pages no longer
    matched the file, and a sound cache was "damaged (database disk image is malformed);
    run `ragkit cache clear --embeddings`". It is read again as it is now."""
    home, flags = hashed_home, hashed_home.parent / "flags"
    db = home / "cache" / "embeddings.sqlite"
    assert python(home, WRITE, db, 0, 2000).wait(timeout=120) == 0
    reader = python(home, READ, db, 6000, flags, read_only=True)
    for _ in range(1200):
        if (flags / "read").exists() or reader.poll() is not None:
            break
        time.sleep(0.1)
    writer = python(home, WRITE, db, 2000, 6000)  # the owner embeds 4,000 more, and exits
    assert writer.wait(timeout=120) == 0, writer.stderr.read() if writer.stderr else ""
    (flags / "written").touch()
    out, err = reader.communicate(timeout=120)
    assert (reader.returncode, out, err) == (0, "True 0 0\n", "")


def test_a_read_only_cache_a_killed_writer_left_is_read_with_its_log(hashed_home):
    """A cache copied or mounted while a writer had it open (or after one was killed) holds
    vectors in its -wal: the immutable reader did not see them and embedded them again (200
    of 300, each paid for again with Voyage). They are read through the -shm left beside
    it; a -shm without its -wal (unusable to sqlite) is read past."""
    home, flags = hashed_home, hashed_home.parent / "flags"
    db = home / "cache" / "embeddings.sqlite"
    assert python(home, WRITE, db, 0, 100).wait(timeout=120) == 0
    killed = python(home, WRITE + "import os\nos._exit(9)\n", db, 100, 300)
    assert killed.wait(timeout=120) == 9
    assert sorted(p.name for p in db.parent.iterdir()) == [
        "embeddings.sqlite", "embeddings.sqlite-shm", "embeddings.sqlite-wal",
        "embeddings.sqlite.lock"]
    (flags / "written").touch()  # READ: no writer to wait for
    assert python(home, READ, db, 300, flags, read_only=True).communicate(timeout=120) == (
        "True 0 0\n", "")
    db.with_name(db.name + "-wal").unlink()  # the 200 vectors it held are gone
    assert python(home, READ, db, 300, flags, read_only=True).communicate(timeout=120) == (
        "True 0 200\n", "")


READ_ONLY_MISS = (
    "ragkit: error: {db}: the call cache is read-only here (read-only media, an immutable "
    "file), so a call it does not hold is not sent (its reply could not be kept): set "
    "RAGKIT_HOME to a folder that can be written, or run where this cache can be written\n")


@pytest.fixture
def asked(mountable: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A RAGKIT_HOME whose call cache holds the answer to "how long does the kettle take"
    from an index of DOCS, and the contexts of DOCS' chunks; the folder it is in."""
    monkeypatch.chdir(mountable)
    home = mountable / "home"
    home.mkdir()
    Path("docs.jsonl").write_text(DOCS)
    for args in (["index", "docs.jsonl", "--out", "ix", "--embedder", "none"],
                 ["index", "docs.jsonl", "--out", "cx", "--embedder", "none",
                  "--contextualizer", "claude"],
                 ["ask", "--index", "ix", "--k", "3", "how long does the kettle take"]):
        done = ragkit(home, *args)
        assert done.returncode == 0, done.stderr
    return mountable


def test_a_read_only_home_sends_a_token_count_it_does_not_hold_and_keeps_nothing(asked):
    """A token count (`messages.count_tokens`, free) the read-only call cache did not hold
    stopped the claude contextualizer as a paid call does ("a call it does not hold is not
    sent"), though every context was cached. It is sent, not kept, and the index is built."""
    home, db = asked / "home", asked / "home" / "cache" / "calls.sqlite"
    with closing(sqlite3.connect(db)) as calls, calls:
        assert calls.execute("DELETE FROM calls WHERE endpoint = '/v1/messages/count_tokens'"
                             ).rowcount == 3  # one per document
    files = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    built = ragkit(home, "index", "docs.jsonl", "--out", "cx2", "--embedder", "none",
                   "--contextualizer", "claude", read_only=True)
    assert (built.returncode, built.stdout) == (0, (
        "claude-haiku-4-5 (answered by the offline stand-in): 0 requests, 3 from the call cache; "
        "estimated tokens in 0, out 0, cache write 0, cache read 0; no cost\n"
        "indexed 3 documents as 3 chunks into cx2\n")), built.stderr
    assert Path("cx2/chunks.jsonl").read_text() == Path("cx/chunks.jsonl").read_text()
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == files  # nothing kept


def test_a_read_only_home_serves_cached_calls_and_sends_no_new_one(asked):
    """`ragkit ask` and the claude contextualizer stopped on a read-only RAGKIT_HOME ("cannot
    write here") even when the call cache held every call they needed: serving a hit counted
    it, a write. A hit is served (uncounted); a call it does not hold is one line, unsent."""
    home, db = asked / "home", asked / "home" / "cache" / "calls.sqlite"
    question = ["ask", "--index", "ix", "--k", "3", "how long does the kettle take"]
    writable = ragkit(home, *question)
    files = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    read = ragkit(home, *question, read_only=True)
    assert (read.returncode, read.stdout, read.stderr) == (0, writable.stdout, writable.stderr)
    built = ragkit(home, "index", "docs.jsonl", "--out", "cx2", "--embedder", "none",
                   "--contextualizer", "claude", read_only=True)
    assert built.returncode == 0, built.stderr
    assert built.stdout == (
        "claude-haiku-4-5 (answered by the offline stand-in): 0 requests, 3 from the call cache; "
        "estimated tokens in 0, out 0, cache write 0, cache read 0; no cost\n"
        "indexed 3 documents as 3 chunks into cx2\n")
    assert Path("cx2/chunks.jsonl").read_text() == Path("cx/chunks.jsonl").read_text()

    new = ragkit(home, "ask", "--index", "ix", "--k", "3", "what browns bread", read_only=True)
    assert (new.returncode, new.stdout) == (2, "")
    assert new.stderr.splitlines(keepends=True)[-1] == READ_ONLY_MISS.format(db=db)
    Path("docs.jsonl").write_text(DOCS + '{"id": "d", "text": "a teapot keeps tea warm"}\n')
    more = ragkit(home, "index", "docs.jsonl", "--out", "cx3", "--embedder", "none",
                  "--contextualizer", "claude", read_only=True)
    assert more.returncode == 2 and not Path("cx3").exists()
    assert more.stderr.splitlines(keepends=True)[-1] == READ_ONLY_MISS.format(db=db)
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == files  # nothing written
    counted = ragkit(home, "cache", "stats").stdout.splitlines()[1].split()
    assert counted[:4] == ["claude-haiku-4-5", "*", "/v1/messages", "4"]  # 3 contexts, 1 answer
    assert counted[4] == "1"  # the writable run's hit; none of the read-only ones


def test_a_read_only_home_reranks_from_the_cache_and_stops_at_a_call_it_lacks(asked):
    """`ragkit search --rerank claude` on a read-only RAGKIT_HOME: a query whose rerank call
    the cache lacked kept the first-stage order with a warning, and the run file mixed
    reranked and unreranked queries. A cached call is served as on a writable home; a missing
    one stops the search with the cache's one line, and no run file is written."""
    home, db = asked / "home", asked / "home" / "cache" / "calls.sqlite"
    kettle = '{"id": "q1", "text": "how long does the kettle take"}\n'
    Path("one.jsonl").write_text(kettle)
    Path("two.jsonl").write_text(kettle + '{"id": "q2", "text": "kettle blue light"}\n')
    search = ["search", "ix", "--mode", "bm25", "--k", "3", "--rerank", "claude", "--queries"]
    writable = ragkit(home, *search, "one.jsonl", "--out", "run.trec")
    assert writable.returncode == 0, writable.stderr
    run = Path("run.trec").read_text()
    read = ragkit(home, *search, "one.jsonl", "--out", "run.trec", read_only=True)
    assert (read.returncode, read.stdout, read.stderr) == (0, writable.stdout, writable.stderr)
    assert Path("run.trec").read_text() == run
    missed = ragkit(home, *search, "two.jsonl", "--out", "n.trec", read_only=True)
    assert (missed.returncode, missed.stdout, missed.stderr) == (
        2, "", READ_ONLY_MISS.format(db=db))
    assert not Path("n.trec").exists()


def test_questions_on_a_long_document_pass_a_read_only_cache_line_on_as_it_is(mountable,
                                                                             monkeypatch):
    """`ragkit questions generate` counts a document past the context window first; on a
    read-only RAGKIT_HOME whose cache lacked that count, the cache's line came prefixed
    "counting a document's tokens: ", unlike every other call's. It is passed on as it is."""
    monkeypatch.chdir(mountable)
    (mountable / "home").mkdir()
    Path("docs").mkdir()
    Path("docs/log.md").write_text("# Sensor log\n\n" + "\n\n".join(
        f"Sensor {i} on vineyard row {i % 40} read {i * 7 % 1000} units of moisture at dawn."
        for i in range(12_000)) + "\n")
    done = ragkit(mountable / "home", "questions", "generate", "docs", "--out", "g.jsonl",
                  "--n", "3", "--kinds", "lexical", "--embedder", "none", read_only=True)
    db = mountable / "home" / "cache" / "calls.sqlite"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines(keepends=True)[-1] == READ_ONLY_MISS.format(db=db)
    assert not Path("g.jsonl").exists()


def test_a_read_only_home_serves_batch_contexts_from_the_cache(asked):
    """`ragkit index --contextualizer claude --batch` on a read-only RAGKIT_HOME whose call
    cache held every context was a traceback from the batch journal's lock file (OSError:
    Read-only file system). The contexts are served from the cache, the journal unread, as
    without --batch; a context the cache lacks is the cache's one line, nothing written."""
    home, db = asked / "home", asked / "home" / "cache" / "calls.sqlite"
    build = ["index", "docs.jsonl", "--embedder", "none", "--contextualizer", "claude",
             "--batch", "--out"]
    built = ragkit(home, *build, "cxb", read_only=True)
    assert built.returncode == 0, built.stderr
    assert built.stdout == (
        "claude-haiku-4-5 (answered by the offline stand-in): 0 requests, 3 from the call cache; "
        "estimated tokens in 0, out 0, cache write 0, cache read 0; no cost\n"
        "indexed 3 documents as 3 chunks into cxb\n")
    assert Path("cxb/chunks.jsonl").read_text() == Path("cx/chunks.jsonl").read_text()
    Path("docs.jsonl").write_text(DOCS + '{"id": "d", "text": "a teapot keeps tea warm"}\n')
    more = ragkit(home, *build, "cxc", read_only=True)
    assert (more.returncode, more.stdout) == (2, "")
    assert more.stderr.splitlines(keepends=True)[-1] == READ_ONLY_MISS.format(db=db)
    assert not Path("cxc").exists()


def test_a_batch_journal_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    """A RAGKIT_HOME whose batch journal folder cannot be written (here: immutable) stopped
    `ragkit index --batch` with a traceback from the journal's lock file; it is one line
    naming the folder, before any batch is submitted, and no index is written."""
    monkeypatch.chdir(tmp_path)
    Path("docs.jsonl").write_text(DOCS)
    (tmp_path / "home" / "batches").mkdir(parents=True)
    with immutable(tmp_path / "home" / "batches"):
        done = ragkit(tmp_path / "home", "index", "docs.jsonl", "--out", "cx", "--embedder",
                      "none", "--contextualizer", "claude", "--batch")
    folder = tmp_path / "home" / "batches" / "anthropic"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == (
        f"ragkit: error: {folder}: the batch journal cannot be written here (Operation not "
        f"permitted), so no batch is submitted: set RAGKIT_HOME to a folder that can be "
        f"written, or run without --batch")
    assert not Path("cx").exists()


def test_an_immutable_call_cache_serves_its_calls_from_any_thread(tmp_path):
    """An immutable call cache (chattr +i) in a folder that can be written: "the call cache
    cannot be used (attempt to write a readonly database)" at its first hit. Hits are served
    (from the threads a contextualizer's workers run in too); a miss is one line, unsent."""
    db = tmp_path / "calls.sqlite"
    cache = CallCache(db)
    for i in range(8):
        cache.put(f"key{i}", "/v1/messages", "claude-haiku-4-5", {"text": str(i)},
                  Usage(10, 1, 0, 0), priced=True)
    cache.close()
    with immutable(db):
        cache = CallCache(db)
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda i: cache.get(f"key{i}").reply, range(8)))
        assert replies == [{"text": str(i)} for i in range(8)]
        assert cache.holds(["key1", "key7"]) and not cache.holds(["key1", "key8"])
        with pytest.raises(RagkitError) as missed:
            cache.get("key8")
        assert f"ragkit: error: {missed.value}\n" == READ_ONLY_MISS.format(db=db)
        assert [s.hits for s in cache.stats()] == [0]  # served, not counted
        cache.close()


CLEAR_READ_ONLY = (
    "ragkit: error: {db}: the call cache is {damaged}read-only here (read-only media, an "
    "immutable file), so it cannot be cleared: run `ragkit cache clear` where it can be "
    "written{copy}\n")
COPY = (", or copy it into a writable RAGKIT_HOME and clear it there (calls are made again, "
        "and paid for again, when next needed)")


def test_cache_clear_says_a_damaged_read_only_call_cache_cannot_be_cleared(mountable):
    """`ragkit cache clear` on a damaged immutable call cache said "the call cache cannot be
    used (attempt to write a readonly database)"; on read-only media, or immutable, it says
    it is damaged and cannot be cleared there, and what can be done. A sound one: that it
    cannot be cleared there. The files stay as they were."""
    home, db = mountable / "home", mountable / "home" / "cache" / "calls.sqlite"
    damaged_calls(db)
    files = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    said = CLEAR_READ_ONLY.format(db=db, damaged="damaged (database disk image is malformed) "
                                  "and ", copy=COPY)
    for model in ([], ["--model", "claude-haiku-4-5"]):
        cleared = ragkit(home, "cache", "clear", *model, read_only=True)
        assert (cleared.returncode, cleared.stdout, cleared.stderr) == (2, "", said)
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == files
    sound = mountable / "sound" / "cache" / "calls.sqlite"
    CallCache(sound).close()
    cleared = ragkit(sound.parent.parent, "cache", "clear", read_only=True)
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (
        2, "", CLEAR_READ_ONLY.format(db=sound, damaged="", copy=""))

    with immutable(db):
        cleared = ragkit(home, "cache", "clear")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (2, "", said)
    assert db.read_bytes() == files["calls.sqlite"]


DAMAGED_READ = """
import sys, warnings
from hashed import Hashed
from ragkit.embed.cache import CachedEmbedder
warnings.simplefilter("ignore")  # the read-only warning: asserted elsewhere
try:
    CachedEmbedder(Hashed(), sys.argv[1]).embed(["text 1", "a text not cached"])
except Exception as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
"""


def test_a_damaged_embedding_cache_on_read_only_media_is_said_to_be_read_only(hashed_home):
    """A damaged embedding cache on read-only media (or immutable) said to run `ragkit cache
    clear --embeddings` or delete the file, neither of which can be done there; it says the
    cache is read-only here too and what can be done, as the call cache's line does."""
    home, db = hashed_home, hashed_home / "cache" / "embeddings.sqlite"
    assert python(home, WRITE, db, 0, 300).wait(timeout=120) == 0
    assert sorted(p.name for p in db.parent.iterdir()) == [
        "embeddings.sqlite", "embeddings.sqlite.lock"]  # all in the file itself
    with open(db, "r+b") as handle:  # pages 2 to 3 overwritten: a failing disk
        handle.seek(4096)
        handle.write(b"\xff" * 8192)
    files = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    said = (f"DamagedCache: {db}: the embedding cache is damaged (database disk image is "
            f"malformed) and read-only here (read-only media, an immutable file): run `ragkit "
            f"cache clear --embeddings` where it can be written, or copy it into a writable "
            f"RAGKIT_HOME and clear it there (vectors are embedded again when next needed)\n")
    assert python(home, DAMAGED_READ, db, read_only=True).communicate(timeout=120) == ("", said)
    assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == files
    with immutable(db):
        answered = python(home, DAMAGED_READ, db).communicate(timeout=120)
    assert answered == ("", said)
    assert db.read_bytes() == files["embeddings.sqlite"]
