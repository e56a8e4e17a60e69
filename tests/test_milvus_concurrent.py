"""A Milvus Lite index used by two processes at once: a search that starts while a build of
the same folder holds the database answers from the index the build leaves, and a build
or search that loses the race for the database's lock waits instead of failing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("milvus_lite")
RAGKIT = Path(sys.executable).parent / "ragkit"
# Holds the Lite database open (as a build does while it uploads), waits for a line on
# stdin, then rebuilds the index from other documents and exits.
REBUILD = """
import sys
from ragkit.documents import Document
from ragkit.pipeline import IndexConfig, Pipeline
from ragkit.stores import milvus_schema
folder = sys.argv[1]
milvus_schema.connect(folder + "/milvus.db")
print("held", flush=True)
sys.stdin.readline()
docs = [Document(f"new{i}", f"zebra stripes {i}") for i in range(4)]
Pipeline.build(docs, IndexConfig(embedder=None), progress=False).save(
    folder, store="milvus", progress=False)
"""


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    return env


def _build(tmp_path: Path, env: dict) -> Path:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"old{i}", "text": f"zebra refund {i}"}) + "\n"
                            for i in range(5)))
    subprocess.run([RAGKIT, "index", str(docs), "--out", str(tmp_path / "ix"), "--store",
                    "milvus", "--embedder", "none"], env=env, check=True, capture_output=True)
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "zebra"}\n')
    return tmp_path / "ix"


def test_a_search_started_during_a_rebuild_answers_from_the_new_index(tmp_path):
    """The search read index.json (naming the old collection), waited for the build's lock,
    then found the old collection dropped: "no collection ...; rebuild the index"."""
    env = _env(tmp_path)
    folder = _build(tmp_path, env)
    builder = subprocess.Popen([sys.executable, "-c", REBUILD, str(folder)], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert builder.stdout.readline() == "held\n"
        search = subprocess.Popen([RAGKIT, "search", str(folder), "--queries",
                                   str(tmp_path / "q.jsonl"), "--mode", "bm25", "--out",
                                   str(tmp_path / "run.trec")], env=env,
                                  stderr=subprocess.PIPE, text=True)
        waiting = search.stderr.readline()
        assert "is in use by another process" in waiting, waiting
        builder.stdin.write("go\n")
        builder.stdin.flush()
        assert builder.wait(timeout=120) == 0
        err = search.stderr.read()
        assert search.wait(timeout=120) == 0, err
    finally:
        builder.kill()
    found = {line.split()[2].split("#")[0] for line in
             (tmp_path / "run.trec").read_text().splitlines()}
    assert found == {f"new{i}" for i in range(4)}


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_an_open_that_loses_the_race_for_the_database_waits_and_opens(tmp_path, monkeypatch):
    """Another process took the database between the probe and the open (a build and a
    search started together): the open failed with "Open local milvus failed"."""
    from ragkit.stores import milvus_lock, milvus_schema
    env = _env(tmp_path)
    folder = _build(tmp_path, env)
    uri = str(folder / "milvus.db")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, uri + "/LOCK", "2"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    real = milvus_lock._held
    probes = []

    def first_probe_misses(lock: Path) -> bool:
        probes.append(lock)
        return False if len(probes) == 1 else real(lock)

    monkeypatch.setattr(milvus_lock, "_held", first_probe_misses)
    started = time.monotonic()
    try:
        client = milvus_schema.connect(uri)
        assert time.monotonic() - started >= 1.0
        assert len(client.list_collections()) == 1
    finally:
        holder.kill()
        holder.wait()
        milvus_schema.forget(uri)
