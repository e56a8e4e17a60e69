"""`ragkit cache clear --embeddings` while another process embeds into the cache: what that
process embeds next is kept in the new file."""
from __future__ import annotations

import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ragkit.embed.cache import CachedEmbedder
from word_embedder import WordEmbedder

RAGKIT = str(Path(sys.executable).parent / "ragkit")
WORDS = ["kettle", "descale", "filter"]


def ragkit_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    env["RAGKIT_HOME"] = str(home)
    return env


def test_vectors_embedded_after_a_clear_under_an_open_connection_are_kept(tmp_path):
    """A notebook kept its connection open across the clear and wrote every later vector
    into the deleted file: the next notebook or run embedded them again (Voyage: paid again)
    and the cache after the run held none of them."""
    path = tmp_path / "home" / "cache" / "embeddings.sqlite"
    running = CachedEmbedder(WordEmbedder(WORDS), path, batch_size=2)
    running.embed(["kettle"])  # the notebook's connection is open
    cleared = subprocess.run([RAGKIT, "cache", "clear", "--embeddings"],
                             env=ragkit_env(tmp_path / "home"), capture_output=True, text=True,
                             timeout=120)
    assert (cleared.returncode, cleared.stderr) == (0, "")
    assert not path.exists()
    texts = ["descale", "filter filter", "kettle descale filter"]  # two batches
    expected = WordEmbedder(WORDS).embed(texts)
    np.testing.assert_array_equal(running.embed(texts), expected)
    later = WordEmbedder(WORDS)
    np.testing.assert_array_equal(CachedEmbedder(later, path).embed(texts), expected)
    assert later.calls == 0  # all three were kept in the file that is there now
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM embeddings").fetchone() == (3,)


def test_a_clear_that_waits_for_a_running_batch_says_so_first(tmp_path):
    """The clear waits for a batch being embedded (12-26 s with e5-small) and looked hung:
    it now says so at once, in one line on stderr, and then clears as before."""
    path = tmp_path / "home" / "cache" / "embeddings.sqlite"
    CachedEmbedder(WordEmbedder(WORDS), path).embed(["kettle"])  # a cache to clear
    started, release = threading.Event(), threading.Event()

    class Slow(WordEmbedder):
        def embed(self, texts, **kwargs):
            started.set()
            release.wait(120)
            return super().embed(texts, **kwargs)

    batch = threading.Thread(target=CachedEmbedder(Slow(WORDS), path).embed, args=(["filter"],))
    batch.start()  # embedding, holding the lock
    assert started.wait(60)
    clear = subprocess.Popen([RAGKIT, "cache", "clear", "--embeddings"],
                             env=ragkit_env(tmp_path / "home"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    err: queue.Queue[str] = queue.Queue()

    def read_stderr() -> None:
        err.put(clear.stderr.readline())
        err.put(clear.stderr.read())

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        first = err.get(timeout=60)  # while the batch still runs
    except queue.Empty:
        first = "(nothing while it waited)"
    finally:
        release.set()
        batch.join(60)
    out = clear.stdout.read()
    assert clear.wait(120) == 0
    assert first == f"waiting for another ragkit process embedding into {path} ...\n"
    assert err.get(timeout=60) == ""  # that one line only
    assert out.startswith(f"removed the embedding cache {path} (")
    assert not path.exists()


def test_an_embedding_that_waits_for_another_process_says_so_once(tmp_path):
    """A run whose texts another run was embedding into the same cache waited silently (once
    4 min 46 s: the other run takes the lock again after each of its batches). It now says so
    in one line, once, whatever the number of its batches, and then embeds as before."""
    path = tmp_path / "cache" / "embeddings.sqlite"
    CachedEmbedder(WordEmbedder(WORDS), path).embed(["kettle"])  # the file exists
    holder = subprocess.Popen(  # another process holding the lock for a batch of its own
        [sys.executable, "-c", "import sys, time; from filelock import FileLock\n"
         f"lock = FileLock({str(path) + '.lock'!r}); lock.acquire(); print('held', flush=True)\n"
         "sys.stdin.readline()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    err = tmp_path / "stderr.txt"
    texts = ["descale", "filter", "kettle descale"]  # three batches of one
    script = ("import sys; sys.path.insert(0, sys.argv[2])\n"
              "from pathlib import Path; from ragkit.embed.cache import CachedEmbedder\n"
              "from word_embedder import WordEmbedder\n"
              f"CachedEmbedder(WordEmbedder({WORDS!r}), Path(sys.argv[1]), batch_size=1)"
              f".embed({texts!r}); print('done')")
    with err.open("w") as stderr:
        waiting = subprocess.Popen([sys.executable, "-c", script, str(path),
                                    str(Path(__file__).parent)], stdout=subprocess.PIPE,
                                   stderr=stderr, text=True)
        deadline = time.monotonic() + 60
        while "waiting" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        said = err.read_text()
        holder.communicate("\n", timeout=60)  # the other process's batch is done
        out, _ = waiting.communicate(timeout=120)
    assert said == f"waiting for another ragkit process embedding into {path} ...\n"
    assert (waiting.returncode, out, err.read_text()) == (0, "done\n", said)  # once only


def test_a_wait_before_each_batch_is_said_once_per_embedding(tmp_path, capsys):
    """The other run takes the lock again after each of its batches, so this run may wait
    before each of its own: one line for the whole embedding, not one a batch."""
    from filelock import Timeout
    path = tmp_path / "embeddings.sqlite"
    cached = CachedEmbedder(WordEmbedder(WORDS), path, batch_size=1)

    class Contended:
        """A lock another process holds whenever it is first tried."""
        tries = 0

        def acquire(self, blocking: bool = True) -> None:
            self.tries += 1
            if not blocking:
                raise Timeout(str(path) + ".lock")

        def release(self) -> None:
            pass
    cached._lock = Contended()
    cached.embed(["kettle", "descale", "filter"])  # three batches, a wait before each
    assert cached._lock.tries == 6
    assert capsys.readouterr().err == (f"waiting for another ragkit process embedding into "
                                       f"{path} ...\n")


def test_a_process_says_it_waits_for_a_cache_at_most_once_a_minute(tmp_path, capsys,
                                                                     monkeypatch):
    """A notebook cell embeds one question or one rung a call: beside a second notebook
    filling the cache, a cell printed the same waiting line 23 to 43 times."""
    from filelock import Timeout
    from ragkit.embed import cache_file
    path = tmp_path / "embeddings.sqlite"
    clock = [1000.0]
    monkeypatch.setattr(cache_file.time, "monotonic", lambda: clock[0])

    class Contended:
        """A lock another process holds whenever it is first tried."""
        def acquire(self, blocking: bool = True) -> None:
            if not blocking:
                raise Timeout(str(path) + ".lock")

        def release(self) -> None:
            pass
    line = f"waiting for another ragkit process embedding into {path} ...\n"
    for text, later in (("kettle", 0), ("descale", 30), ("filter", 59.9), ("kettle descale", 60)):
        clock[0] = 1000.0 + later
        cached = CachedEmbedder(WordEmbedder(WORDS), path)
        cached._lock = Contended()
        cached.embed([text])  # a call of its own, as a cell's loop makes them
    assert capsys.readouterr().err == line * 2  # at 0 s and at 60 s
    # a call whose first wait falls in the quiet minute says it at its next wait after it
    said: list[bool] = []
    for later in (70, 100, 125):
        clock[0] = 1000.0 + later
        with cache_file.holding(Contended(), path, said, embedding=True):
            pass
    assert capsys.readouterr().err == line  # at 125 s: not a silent ten-minute wait


@pytest.mark.parametrize("session", ["", "notebooks/01_retrieval_basics.ipynb"])
def test_the_wait_is_not_written_into_a_notebook_papermill_or_nbval_runs(tmp_path, monkeypatch,
                                                                        session):
    """Two notebooks run side by side by nbval on a new cache: the wait line went into a cell's
    output, which then differed from the committed one. In JupyterLab (a session) it shows."""
    from filelock import Timeout
    from ragkit import progress
    from ragkit.embed import cache_file
    notes: list[str] = []
    monkeypatch.setattr(progress, "cell_display", lambda: print)  # in a Jupyter kernel
    monkeypatch.setattr(cache_file, "note", notes.append)
    monkeypatch.setenv("JPY_SESSION_NAME", session)

    class Held:
        def acquire(self, blocking: bool = True) -> None:
            if not blocking:
                raise Timeout("x.lock")

        def release(self) -> None:
            pass
    with cache_file.holding(Held(), tmp_path / "embeddings.sqlite", embedding=True):
        pass
    assert len(notes) == (1 if session else 0)
    with cache_file.holding(Held(), tmp_path / "embeddings.sqlite"):  # a clear the user ran
        pass
    assert len(notes) == (2 if session else 1)
