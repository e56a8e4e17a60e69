"""Milvus Lite from the command line: two processes and one index (the second waits for the
first, saying so in one line, instead of failing with milvus_lite's traceback "Open local
milvus failed"), and a corpus whose BM25 weights are negative."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.documents import RagkitError
from ragkit.stores.milvus_lock import wait_for_lite

pytest.importorskip("milvus_lite")
RAGKIT = Path(sys.executable).parent / "ragkit"
HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    return env


def _hold(lock: Path, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_search_waits_for_the_process_holding_a_milvus_lite_index(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"refund rule {i} applies"})
                            + "\n" for i in range(5)))
    env = _env(tmp_path)
    subprocess.run([RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"), "--store",
                    "milvus", "--embedder", "none"], env=env, check=True, capture_output=True)
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "refund"}\n')
    # held until the search says it waits (a fixed hold raced the search's start-up on a
    # loaded machine: the lock was free again before the search reached it)
    holder = _hold(tmp_path / "ix" / "milvus.db" / "LOCK", 300.0)
    search = subprocess.Popen([RAGKIT, "search", str(tmp_path / "ix"), "--queries",
                               str(tmp_path / "q.jsonl"), "--mode", "bm25", "--out",
                               str(tmp_path / "run.trec")], env=env, stderr=subprocess.PIPE,
                              text=True)
    try:
        said = []
        for line in search.stderr:  # ends when the search exits without waiting
            said.append(line)
            if "is in use by another process" in line:
                break
        assert search.poll() is None, "".join(said)  # still waiting for the lock
        assert "is in use by another process (Milvus Lite allows one at a time); waiting up " \
            "to" in said[-1]
        assert not (tmp_path / "run.trec").exists()
    finally:
        holder.kill()
        holder.wait()
    rest = search.stderr.read()
    assert search.wait(timeout=120) == 0, "".join(said) + rest
    assert (tmp_path / "run.trec").read_text().startswith("q Q0 d")
    assert "Traceback" not in "".join(said) + rest


def test_a_lock_held_past_the_wait_is_one_line(tmp_path):
    (tmp_path / "m.db").mkdir()
    (tmp_path / "m.db" / "LOCK").touch()  # as milvus_lite leaves it
    holder = _hold(tmp_path / "m.db" / "LOCK", 5.0)
    try:
        with pytest.raises(RagkitError) as caught:
            wait_for_lite(str(tmp_path / "m.db"), wait=0.5)
        assert str(caught.value) == (
            f"{tmp_path / 'm.db'}: in use by another process (Milvus Lite opens a database in "
            f"one process at a time) for over 0 s; wait for it to finish, or serve the index "
            f"from a Milvus server")
    finally:
        holder.kill()
    holder.wait()
    wait_for_lite(str(tmp_path / "m.db"), wait=0.5)  # free again: returns at once


def test_a_milvus_index_of_a_corpus_with_negative_bm25_weights_builds_and_searches(tmp_path):
    """One document (or a few sharing every word): Okapi's floored IDF is negative, which
    Milvus's sparse vectors refuse -- the build died with pymilvus's traceback."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "refund rule applies"}\n')
    env = _env(tmp_path)
    built = subprocess.run([RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"),
                            "--store", "milvus", "--embedder", "none"], env=env,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "refund"}\n')
    done = subprocess.run([RAGKIT, "search", str(tmp_path / "ix"), "--queries",
                           str(tmp_path / "q.jsonl"), "--mode", "bm25", "--out",
                           str(tmp_path / "run.trec")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run.trec").read_text().split()[:3] == ["q", "Q0", "d1#0"]


def test_one_process_opening_one_database_by_two_paths_does_not_wait_on_itself(tmp_path,
                                                                              monkeypatch):
    """Loading the same Milvus index as "ix" and as its absolute path waited 60 s on this
    process's own lock, then failed "in use by another process"."""
    from ragkit.pipeline import Pipeline
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"refund rule {i} applies"})
                            + "\n" for i in range(5)))
    subprocess.run([RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"), "--store",
                    "milvus", "--embedder", "none"], env=_env(tmp_path), check=True,
                   capture_output=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("ragkit.stores.milvus_lock.WAIT_SECONDS", 2.0)
    Pipeline.load("ix")
    Pipeline.load(tmp_path / "ix")  # waited on itself, then raised "in use by another process"
