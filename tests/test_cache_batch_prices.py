"""`ragkit cache stats` prices a reply that came through the Message Batches API at batch
prices (half the list price, `ragkit.pricing.BATCH_DISCOUNT`), and one sent interactively — or
stored before the cache recorded the difference — at list price. Checked across processes: a
batch run against the loopback Message Batches server, then `ragkit cache stats`."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from loopback_process import LoopbackProcess

RAGKIT = Path(sys.executable).parent / "ragkit"
HERE = Path(__file__).parent
# The loopback server's usage per reply: 1000 tokens in, 10 out; claude-haiku-4-5 lists
# $1/M in and $5/M out: $0.00105 a reply at list price, $0.000525 at batch prices.
OLD_SCHEMA = """CREATE TABLE calls (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, priced INTEGER NOT NULL, created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0)"""


def _spent(stats: str, endpoint: str = "/v1/messages") -> str:
    row = next(line for line in stats.splitlines()
               if line.split()[:2] == ["claude-haiku-4-5", endpoint])
    return row.split()[-2]


def old_cache(path: Path) -> Path:
    """A call cache written before replies were marked (batch, no usage), at `path`, holding
    one interactive reply of 1000 tokens in and 10 out ('old')."""
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute(OLD_SCHEMA)
        db.execute("INSERT INTO calls VALUES ('old', '/v1/messages', 'claude-haiku-4-5', "
                   "'{}', 1000, 10, 0, 0, 1, 0, 0)")
    db.close()
    return path


def test_batch_replies_are_priced_at_batch_prices_and_old_entries_at_list(tmp_path):
    home = tmp_path / "home"
    old_cache(home / "cache" / "calls.sqlite")
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(home)
    stats = subprocess.run([str(RAGKIT), "cache", "stats"], env=env, capture_output=True,
                           text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr
    assert _spent(stats.stdout) == "$0.00105"  # the old entry: list price

    server = LoopbackProcess(HERE / "batches_loopback.py", tmp_path / "state.json",
                             tmp_path / "requests.jsonl", 0, -1)
    try:
        docs = tmp_path / "docs.jsonl"
        text = "\n\n".join(f"Paragraph {i}: " + "revenue margin quarter growth " * 12
                           for i in range(2))
        docs.write_text(json.dumps({"id": "d", "title": "Report", "text": text}) + "\n")
        run = subprocess.run(
            [str(RAGKIT), "index", str(docs), "--out", str(tmp_path / "ix"),
             "--contextualizer", "claude", "--batch", "--batch-poll", "0.2", "--embedder",
             "none", "--chunk-size", "64", "--overlap", "0"],
            env={**env, "ANTHROPIC_API_KEY": "test-key", "RAGKIT_API_RETRIES": "0",
                 "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}"},
            capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        sent = sum(r["n"] for r in server.requests() if r["path"] == "/v1/messages/batches")
    finally:
        server.stop()
    assert sent == 2
    stats = subprocess.run([str(RAGKIT), "cache", "stats"], env=env, capture_output=True,
                           text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr
    # the old entry at list price plus 2 batch replies at half of it: 0.00105 + 2 · 0.000525
    assert _spent(stats.stdout) == "$0.00210"
