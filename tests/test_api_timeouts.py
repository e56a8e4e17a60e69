"""An API endpoint that accepts the connection and never answers: the installed CLI gives up
within the configured time and retries, with one line and exit status 2."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_errors import one_error_line

RAGKIT = str(Path(sys.executable).parent / "ragkit")
DOCS = ('{"id": "kettle", "text": "The kettle boils water in two minutes."}\n'
        '{"id": "toaster", "text": "A toaster browns bread slices evenly."}\n')


class Silent:
    """A TCP server on 127.0.0.1 that accepts every connection and never reads or writes."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def silent(tmp_path):
    server = Silent()
    yield server
    server.close()


def ragkit(tmp_path: Path, *args, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run the CLI with a fresh RAGKIT_HOME and no API settings but `env`; (result, seconds)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "VOYAGE_", "RAGKIT_API_"))}
    base["RAGKIT_HOME"] = str(tmp_path / "home")
    start = time.monotonic()
    done = subprocess.run([RAGKIT, *map(str, args)], capture_output=True, text=True,
                          env={**base, **env}, timeout=90)
    return done, time.monotonic() - start


@pytest.fixture
def bm25_index(tmp_path):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    built, _ = ragkit(tmp_path, "index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                      "--embedder", "none")
    assert built.returncode == 0, built.stderr
    return tmp_path / "ix"


def test_ask_gives_up_on_a_silent_anthropic_endpoint_within_the_options(
        tmp_path, silent, bm25_index):
    done, seconds = ragkit(tmp_path, "ask", "--index", bm25_index, "kettle?",
                           "--api-timeout", "1", "--api-retries", "1",
                           ANTHROPIC_API_KEY="sk-ant-test-0123456789",
                           ANTHROPIC_BASE_URL=f"http://127.0.0.1:{silent.port}")
    line = one_error_line(done)
    assert line == (f"ragkit: error: the Anthropic API at http://127.0.0.1:{silent.port} did "
                    f"not answer (2 attempts, each waiting up to 1 s for a reply; change with "
                    f"--api-timeout / RAGKIT_API_TIMEOUT, --api-retries / RAGKIT_API_RETRIES, "
                    f"RAGKIT_API_CONNECT_TIMEOUT)")
    assert len(silent.held) == 2  # one connection per attempt
    assert seconds < 20  # 2 × 1 s + back-off + start-up, not 3 × 600 s


def test_the_environment_sets_the_same_budget(tmp_path, silent, bm25_index):
    done, seconds = ragkit(tmp_path, "ask", "--index", bm25_index, "kettle?",
                           ANTHROPIC_API_KEY="sk-ant-test-0123456789",
                           ANTHROPIC_BASE_URL=f"http://127.0.0.1:{silent.port}",
                           RAGKIT_API_TIMEOUT="1.5", RAGKIT_API_RETRIES="0")
    assert "did not answer (1 attempt, each waiting up to 1.5 s" in one_error_line(done)
    assert len(silent.held) == 1 and seconds < 20


def test_a_silent_voyage_endpoint_fails_the_index_and_leaves_no_folder(tmp_path, silent):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    done, seconds = ragkit(tmp_path, "index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                           "--embedder", "voyage:voyage-3.5", "--api-timeout", "1",
                           "--api-retries", "1", VOYAGE_API_KEY="pa-test-0123456789abcdefgh",
                           VOYAGE_BASE_URL=f"http://127.0.0.1:{silent.port}/v1")
    assert one_error_line(done) == (
        f"ragkit: error: voyage:voyage-3.5: the Voyage API at http://127.0.0.1:{silent.port}/v1 "
        f"did not answer (2 attempts, each waiting up to 1 s for a reply; change with "
        f"--api-timeout / RAGKIT_API_TIMEOUT, --api-retries / RAGKIT_API_RETRIES, "
        f"RAGKIT_API_CONNECT_TIMEOUT); re-run: vectors already embedded are kept in the "
        f"embedding cache")
    assert len(silent.held) == 2 and seconds < 25  # the SDK backs off 1-2 s between attempts
    assert not (tmp_path / "ix").exists()


def test_a_silent_voyage_reranker_keeps_the_first_stage_order_with_one_line(
        tmp_path, silent, bm25_index):
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "kettle"}\n')
    done, seconds = ragkit(tmp_path, "search", bm25_index, "--queries", tmp_path / "q.jsonl",
                           "--mode", "bm25", "--rerank", "voyage:rerank-2.5", "--k", "1",
                           "--out", tmp_path / "run.trec", "--api-timeout", "1",
                           "--api-retries", "0", VOYAGE_API_KEY="pa-test-0123456789abcdefgh",
                           VOYAGE_BASE_URL=f"http://127.0.0.1:{silent.port}/v1")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("ragkit: warning: ")]
    assert (f"voyage:rerank-2.5: the Voyage API at http://127.0.0.1:{silent.port}/v1 did not "
            f"answer (1 attempt, each waiting up to 1 s for a reply;") in line
    assert (tmp_path / "run.trec").read_text().split()[:3] == ["q1", "Q0", "kettle#0"]
    assert len(silent.held) == 1 and seconds < 20


@pytest.mark.parametrize("command", ["index", "search", "eval", "tune", "ask", "tool"])
def test_every_command_that_calls_an_api_shows_the_budget_in_its_help(command):
    from ragkit.cli import build_parser
    parser = build_parser()
    text = parser._subparsers._group_actions[0].choices[command].format_help()
    assert "--api-timeout SECONDS" in text and "--api-retries N" in text
    assert "$RAGKIT_API_TIMEOUT or 120" in text and "$RAGKIT_API_RETRIES or 2" in text
