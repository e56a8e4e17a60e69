"""`ragkit cache clear` on a cache folder that cannot be written (read-only media): one
error line and exit status 2, the files left as they were, never a traceback."""
from __future__ import annotations

import errno
from pathlib import Path

import pytest

from ragkit.cli import main
from ragkit.cli import manage
from ragkit.embed import cache_file as embed_cache


def _read_only(*args: object, **kwargs: object) -> None:
    raise OSError(errno.EROFS, "Read-only file system")


class ReadOnlyLock:
    """A lock file that cannot be created: what FileLock meets on a read-only mount."""

    def __init__(self, path: str) -> None:
        self.path = path

    def acquire(self, *args: object, **kwargs: object) -> None:
        _read_only()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "cache").mkdir(parents=True)
    return tmp_path / "home" / "cache"


def test_clearing_a_read_only_embedding_cache_is_one_line(home: Path, monkeypatch, capsys):
    (home / "embeddings.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(84))
    monkeypatch.setattr(embed_cache, "FileLock", ReadOnlyLock)
    assert main(["cache", "clear", "--embeddings"]) == 2
    err = capsys.readouterr().err
    assert err == (f"ragkit: error: {home / 'embeddings.sqlite'}: cannot delete the embedding "
                   f"cache (Read-only file system)\n")
    assert (home / "embeddings.sqlite").exists()


def test_clearing_a_damaged_read_only_call_cache_is_one_line(home: Path, monkeypatch, capsys):
    (home / "calls.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)
    monkeypatch.setattr(manage, "remove_database", _read_only)
    assert main(["cache", "clear"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragkit: error: {home / 'calls.sqlite'}: cannot delete the damaged "
                          f"call cache (Read-only file system)")
    assert err.count("\n") == 1 and "Traceback" not in err
