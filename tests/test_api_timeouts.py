"""An API endpoint that accepts the connection and never answers, or answers a byte at a time:
the installed CLI gives up within the configured time and retries, with one line and exit
status 2."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_errors import one_error_line

from ragkit.standin.sse import events, frame

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


def ragkit(tmp_path: Path, *args, wait: float = 90,
           **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run the CLI with a fresh RAGKIT_HOME and no API settings but `env`; (result, seconds).
    A run longer than `wait` seconds fails the test (subprocess.TimeoutExpired)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "VOYAGE_", "RAGKIT_API_"))}
    base["RAGKIT_HOME"] = str(tmp_path / "home")
    start = time.monotonic()
    done = subprocess.run([RAGKIT, *map(str, args)], capture_output=True, text=True,
                          env={**base, **env}, timeout=wait)
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


class Dripping(BaseHTTPRequestHandler):
    """A Messages or Voyage API that sends its headers at once and then a valid reply in
    pieces `server.gap` seconds apart: each read is well within a 1 s timeout, the whole reply
    takes minutes (a streamed one: one event per piece, a few seconds in all)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.paths.append(self.path)
        if body.get("stream"):
            reply = {"id": "msg_1", "type": "message", "role": "assistant",
                     "model": body["model"], "content": [{"type": "text", "text": "In 21 days."}],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "usage": {"input_tokens": 50, "output_tokens": 5}}
            pieces, kind = [frame(n, d) for n, d in events(reply)], "text/event-stream"
        else:
            data = json.dumps(self._reply(body)).encode()
            pieces, kind = [data[i:i + 1] for i in range(len(data))], "application/json"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(sum(map(len, pieces))))
        self.end_headers()
        try:
            for piece in pieces:
                self.wfile.write(piece)
                time.sleep(self.server.gap)
        except OSError:  # the client gave up and closed the connection
            return

    def _reply(self, body: dict) -> dict:
        if self.path.endswith("/embeddings"):
            return {"object": "list", "model": body["model"], "usage": {"total_tokens": 20},
                    "data": [{"object": "embedding", "index": i, "embedding": [0.5] * 1024}
                             for i in range(len(body["input"]))]}
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                "content": [{"type": "text", "text": "Kettles boil water in two minutes."}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 50, "output_tokens": 9}}

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def dripping():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    server.paths, server.gap, server.daemon_threads = [], 0.2, True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_claude_reply_that_trickles_in_is_cut_and_retried_as_a_timeout(
        tmp_path, dripping, bm25_index):
    """A reply sent a byte every 0.2 s held `ragkit ask` for as long as it took (each read
    was within --api-timeout): about a minute per attempt here, for ever from a stuck server."""
    url = f"http://127.0.0.1:{dripping.server_address[1]}"
    done, seconds = ragkit(tmp_path, "ask", "--index", bm25_index, "kettle?",
                           "--api-timeout", "1", "--api-retries", "1", wait=30,
                           ANTHROPIC_API_KEY="sk-ant-test-0123456789", ANTHROPIC_BASE_URL=url)
    assert one_error_line(done) == (
        f"ragkit: error: the Anthropic API at {url} was too slow: gave up after 1 s: the reply "
        f"trickled in after it began and was not whole by then (2 attempts, each waiting up to "
        f"1 s for a reply to begin and 1 s more for all of it; change with --api-timeout / "
        f"RAGKIT_API_TIMEOUT, --api-retries / RAGKIT_API_RETRIES, RAGKIT_API_CONNECT_TIMEOUT)")
    assert dripping.paths == ["/v1/messages", "/v1/messages"]  # retried, as a timeout is
    assert seconds < 15  # 2 × (1 s + one more piece) + back-off + start-up, not minutes


def test_a_streamed_answer_may_take_longer_than_the_timeout_in_all(
        tmp_path, dripping, bm25_index):
    """`ask --stream` prints events as they come: only each read is bounded."""
    dripping.gap = 0.4  # 9 events: about 3.5 s in all, each read under 1 s
    done, seconds = ragkit(tmp_path, "ask", "--index", bm25_index, "kettle?", "--stream",
                           "--api-timeout", "1", "--api-retries", "0", wait=30,
                           ANTHROPIC_API_KEY="sk-ant-test-0123456789",
                           ANTHROPIC_BASE_URL=f"http://127.0.0.1:{dripping.server_address[1]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("In 21 days.\n")
    assert dripping.paths == ["/v1/messages"] and seconds > 3


def test_a_voyage_reply_that_trickles_in_fails_the_index_and_leaves_no_folder(
        tmp_path, dripping):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    url = f"http://127.0.0.1:{dripping.server_address[1]}/v1"
    done, seconds = ragkit(tmp_path, "index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                           "--embedder", "voyage:voyage-3.5", "--api-timeout", "1",
                           "--api-retries", "1", wait=30,
                           VOYAGE_API_KEY="pa-test-0123456789abcdefgh", VOYAGE_BASE_URL=url)
    assert one_error_line(done) == (
        f"ragkit: error: voyage:voyage-3.5: the Voyage API at {url} was too slow: gave up "
        f"after 1 s: the reply trickled in after it began and was not whole by then (2 "
        f"attempts, each waiting up to 1 s for a reply to begin and 1 s more for all of it; "
        f"change with --api-timeout / RAGKIT_API_TIMEOUT, --api-retries / RAGKIT_API_RETRIES, "
        f"RAGKIT_API_CONNECT_TIMEOUT); re-run: vectors already embedded are kept in the "
        f"embedding cache")
    assert dripping.paths == ["/v1/embeddings", "/v1/embeddings"]
    assert seconds < 20 and not (tmp_path / "ix").exists()


class Stalling(Dripping):
    """A Messages or Voyage API that sends its headers and the first 100 bytes of a valid
    reply, then nothing more until the test ends (a server stuck writing, a proxy that lost
    the rest)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.paths.append(self.path)
        data = json.dumps(self._reply(body)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[:100])
        self.wfile.flush()
        self.server.done.wait(60)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stalling():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    server.paths, server.done, server.daemon_threads = [], threading.Event(), True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.done.set()
    server.shutdown()
    server.server_close()


def test_a_voyage_reply_that_stops_mid_way_is_a_timeout_retried_not_cannot_reach(
        tmp_path, stalling):
    """requests turns a read timeout inside a body into a ConnectionError: voyageai did not
    retry it, and the line said "cannot reach the Voyage API … Read timed out"."""
    (tmp_path / "docs.jsonl").write_text(DOCS)
    url = f"http://127.0.0.1:{stalling.server_address[1]}/v1"
    done, seconds = ragkit(tmp_path, "index", tmp_path / "docs.jsonl", "--out",
                           tmp_path / "ix", "--embedder", "voyage:voyage-3.5",
                           "--api-timeout", "1", "--api-retries", "1", wait=30,
                           VOYAGE_API_KEY="pa-test-0123456789abcdefgh", VOYAGE_BASE_URL=url)
    assert one_error_line(done) == (
        f"ragkit: error: voyage:voyage-3.5: the Voyage API at {url} timed out mid-reply: the "
        f"reply began, then nothing more came for 1 s (2 attempts, each waiting up to 1 s for "
        f"a reply; change with --api-timeout / RAGKIT_API_TIMEOUT, --api-retries / "
        f"RAGKIT_API_RETRIES, RAGKIT_API_CONNECT_TIMEOUT); re-run: vectors already embedded "
        f"are kept in the embedding cache")
    assert stalling.paths == ["/v1/embeddings", "/v1/embeddings"]  # retried, as a timeout is
    assert seconds < 20 and not (tmp_path / "ix").exists()


def test_a_claude_reply_that_stops_mid_way_says_so_not_did_not_answer(
        tmp_path, stalling, bm25_index):
    """The reply began, then stalled: retried as a timeout, and the line said the API "did not
    answer", as if no reply had begun."""
    url = f"http://127.0.0.1:{stalling.server_address[1]}"
    done, seconds = ragkit(tmp_path, "ask", "--index", bm25_index, "kettle?",
                           "--api-timeout", "1", "--api-retries", "1", wait=30,
                           ANTHROPIC_API_KEY="sk-ant-test-0123456789", ANTHROPIC_BASE_URL=url)
    assert one_error_line(done) == (
        f"ragkit: error: the Anthropic API at {url} timed out mid-reply: the reply began, then "
        f"nothing more came for 1 s (2 attempts, each waiting up to 1 s for a reply; change "
        f"with --api-timeout / RAGKIT_API_TIMEOUT, --api-retries / RAGKIT_API_RETRIES, "
        f"RAGKIT_API_CONNECT_TIMEOUT)")
    assert stalling.paths == ["/v1/messages", "/v1/messages"]  # retried, as a timeout is
    assert seconds < 15
