"""Two runs opening a new cache file at once both get it: sqlite answered one of them
"database is locked" at once when both set WAL mode (its busy handler is not called for a
change of journal mode; 5 of 120 starts), and that run stopped with "the call cache cannot be
used (database is locked)"."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.sqlite_files import use_wal


class Busy:
    """A connection whose first `refusals` journal-mode changes are refused as locked."""

    def __init__(self, refusals: int, error: str = "database is locked") -> None:
        self.refusals, self.error, self.calls = refusals, error, 0

    def execute(self, sql: str):
        self.calls += 1
        if self.calls <= self.refusals:
            raise sqlite3.OperationalError(self.error)


def test_a_locked_journal_mode_change_is_tried_again():
    db = Busy(3)
    use_wal(db)
    assert db.calls == 4
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        use_wal(Busy(1, "disk I/O error"))  # another error: at once, as before
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(Busy(10 ** 6), wait=0.1)  # held past the wait: said, not waited for ever


OPEN = """
import sys
from pathlib import Path
from ragkit.cache import CallCache
from ragkit.embed.cache import CachedEmbedder
sys.path.insert(0, sys.argv[2])
from word_embedder import WordEmbedder
CallCache(Path(sys.argv[1]) / "calls.sqlite")
CachedEmbedder(WordEmbedder(["a"]), Path(sys.argv[1]) / "embeddings.sqlite").embed(["a"])
print("ok")
"""


def test_three_runs_opening_new_caches_at_once_all_open_them(tmp_path):
    for round_ in range(8):
        folder = tmp_path / str(round_)
        runs = [subprocess.Popen([sys.executable, "-c", OPEN, str(folder),
                                  str(Path(__file__).parent)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(3)]
        outs = [run.communicate(timeout=120) for run in runs]
        assert [out for out, _ in outs] == ["ok\n"] * 3, outs
