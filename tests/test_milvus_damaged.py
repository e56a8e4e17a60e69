"""A Milvus Lite database damaged on disk (a data file cut short, a manifest overwritten) is
one error line saying what to do, not pymilvus's logged traceback before it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line

pytest.importorskip("milvus_lite")
RAGKIT = Path(sys.executable).parent / "ragkit"


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    return env


def _cut_data(db: Path) -> None:
    (data,) = db.glob("collections/*/partitions/*/data/*.parquet")
    with open(data, "r+b") as handle:
        handle.truncate(100)


def _garble_aliases(db: Path) -> None:
    (db / "aliases.json").write_text("garbage")


@pytest.mark.parametrize("damage", [_cut_data, _garble_aliases])
def test_a_damaged_milvus_lite_database_is_one_line_saying_to_rebuild(tmp_path, damage):
    env = _env(tmp_path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"kettle rule {i}"}) + "\n"
                            for i in range(5)))
    folder = tmp_path / "ix"
    subprocess.run([RAGKIT, "index", str(docs), "--out", str(folder), "--store", "milvus",
                    "--embedder", "none"], env=env, check=True, capture_output=True)
    damage(folder / "milvus.db")
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "kettle"}\n')
    done = subprocess.run([RAGKIT, "search", str(folder), "--queries", str(tmp_path / "q.jsonl"),
                           "--mode", "bm25", "--out", str(tmp_path / "run.trec")], env=env,
                          capture_output=True, text=True, timeout=300)
    line = one_error_line(done)
    assert line.startswith(f"ragkit: error: cannot open the Milvus Lite database "
                           f"{folder / 'milvus.db'}: "), line
    assert line.endswith(f"; the database is damaged: delete {folder / 'milvus.db'} and "
                         f"rebuild the index, or write it to another folder"), line
    assert done.stderr.count("\n") == 1, done.stderr


def test_a_read_only_milvus_lite_database_says_why_it_cannot_be_opened(tmp_path, monkeypatch):
    """Milvus Lite writes its LOCK file even to search: a read-only index folder read only
    "Open local milvus failed". (Root may write anywhere, so the check is the message's.)"""
    from pymilvus.exceptions import MilvusException
    from ragkit.stores import milvus_schema
    db = tmp_path / "idx" / "milvus.db"
    db.mkdir(parents=True)
    failed = MilvusException(message="Open local milvus failed")
    monkeypatch.setattr(milvus_schema.os, "access", lambda path, mode: path != str(db))
    assert str(milvus_schema.connect_error(str(db), failed)).endswith(
        f"Open local milvus failed; Milvus Lite writes its database folder even to search "
        f"(its LOCK file), and {db} is read-only: make it writable, or copy the index folder "
        f"somewhere writable")
    monkeypatch.undo()  # writable: no such advice
    assert str(milvus_schema.connect_error(str(db), failed)).endswith("Open local milvus failed")
