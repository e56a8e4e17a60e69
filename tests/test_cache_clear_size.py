"""`ragkit cache clear --embeddings` says how much it freed: the file with its -wal and -shm,
which a process killed while embedding leaves behind holding every vector it stored since the
last checkpoint."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RAGKIT = str(Path(sys.executable).parent / "ragkit")
TESTS = Path(__file__).resolve().parent
KILLED = """
import os
from ragkit.embed.cache import CachedEmbedder
from word_embedder import WordEmbedder
CachedEmbedder(WordEmbedder(["kettle"])).embed([f"kettle {i} " + "x" * 1000 for i in range(600)])
os._exit(9)  # killed: no connection closed, no checkpoint
"""


def test_cache_clear_embeddings_counts_the_write_ahead_log_it_deletes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "VOYAGE_"))}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = str(TESTS)
    killed = subprocess.run([sys.executable, "-c", KILLED], env=env, capture_output=True,
                            text=True, timeout=120)
    assert killed.returncode == 9, killed.stderr
    db = tmp_path / "home" / "cache" / "embeddings.sqlite"
    sizes = {p.name: p.stat().st_size for p in db.parent.glob("embeddings.sqlite*")}
    wal = sizes["embeddings.sqlite-wal"]
    assert wal > 150_000 and sizes["embeddings.sqlite"] < 50_000  # most of it in the log
    cleared = subprocess.run([RAGKIT, "cache", "clear", "--embeddings"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert cleared.returncode == 0, cleared.stderr
    freed = sizes["embeddings.sqlite"] + wal + sizes["embeddings.sqlite-shm"]
    assert cleared.stdout == (f"removed the embedding cache {db} ({freed / 1e6:.1f} MB); "
                              f"vectors are embedded again when next needed\n")
    assert sorted(p.name for p in db.parent.iterdir()) == ["embeddings.sqlite.lock"]
