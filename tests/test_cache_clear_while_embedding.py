"""`ragkit cache clear --embeddings` while another process embeds into the cache: what that
process embeds next is kept in the new file."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

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
