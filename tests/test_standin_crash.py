"""A bug inside the offline stand-in is reported as one: one line naming the stand-in and the
error's class, exit 2, no traceback, and no retries (a crash is not a flaky network). Only a
network or connection failure may say "cannot reach the Anthropic API"."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from ragkit.documents import RagkitError

# The stand-in's answering rule raises; every call to it is counted in a file. Then the
# CLI's own entry point runs in this (fresh) process, as `ragkit index` would.
DRIVER = """
import sys
from pathlib import Path
import ragkit.standin.api as api
calls = Path(sys.argv[1])
def broken(request):
    calls.write_text(calls.read_text() + "x")
    raise KeyError("contextual_rule")
api._answer = broken
from ragkit.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


def test_a_crash_in_the_stand_in_names_it_not_the_network(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "title": "A", "text": "Revenue grew in the third quarter."}\n')
    calls = tmp_path / "calls"
    calls.write_text("")
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", DRIVER, str(calls), "index", str(docs),
                           "--out", str(tmp_path / "ix"), "--contextualizer", "claude",
                           "--embedder", "none"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ragkit: error:")]
    assert errors == [
        "ragkit: error: a: chunk a#0: the offline stand-in failed (KeyError: "
        "'contextual_rule'): a bug in it, not a network fault; contexts obtained so far are "
        "kept in the call cache, rerun to continue"]
    assert calls.read_text() == "x"  # asked once: not retried as a dead connection
    assert not (tmp_path / "ix").exists()


def test_a_dead_connection_still_says_it_cannot_reach_the_api():
    from ragkit.llm import LLM, make_client

    def handler(request):
        raise httpx2.ConnectError("refused")

    llm = LLM(make_client(max_retries=0, transport=httpx2.MockTransport(handler)), cache=None)
    with pytest.raises(RagkitError, match="cannot reach the Anthropic API"):
        llm.create(model="claude-haiku-4-5", max_tokens=5,
                   messages=[{"role": "user", "content": "hi"}])
