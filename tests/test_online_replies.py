"""Replies a real Messages API can send that are not a whole answer, through `ragkit ask` and
Claude contexts as a user runs them, against a loopback server: a stream that breaks off
before its end (no stop reason) and a reply that stops at max_tokens."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragkit.cli import main
from ragkit.standin.sse import events, frame

DOCS = [{"id": "refund", "title": "Refund policy",
         "text": "# Refunds\n\nRefunds are accepted within 21 days of delivery."}]


def _reply(text: str, stop: str | None) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 5}}


class Messages(BaseHTTPRequestHandler):
    """POST /v1/messages (and count_tokens): `server.mode` "cut" streams a reply and breaks off before its stop
    reason, "max_tokens" answers cut at the limit, "ok" answers in full."""

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path.endswith("/count_tokens"):
            return self._send(json.dumps({"input_tokens": 60}).encode(), "application/json")
        self.server.sent.append(body)
        mode = self.server.plan.pop(0) if self.server.plan else self.server.mode
        reply = _reply("The refund policy" if mode != "ok" else "Within 21 days.",
                       None if mode == "cut" else "max_tokens" if mode == "max_tokens"
                       else "end_turn")
        if body.get("stream"):
            sent = events(reply)
            if mode == "cut":
                sent = [e for e in sent if e[0] not in ("message_delta", "message_stop")]
            data, kind = b"".join(frame(n, d) for n, d in sent), "text/event-stream"
        else:
            data, kind = json.dumps(reply).encode(), "application/json"
        self._send(data, kind)

    def _send(self, data: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def api(tmp_path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Messages)
    server.mode, server.sent, server.plan = "cut", [], []
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAGKIT_API_RETRIES", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield server, tmp_path / "idx"
    server.shutdown()
    server.server_close()


def test_a_stream_that_breaks_off_is_an_error_and_the_next_run_asks_again(api, capsys):
    """It printed "The refund policy" as the whole answer, exit 0, cached it, and served it
    from the cache on every later run (no request)."""
    server, index = api
    ask = ["ask", "--index", str(index), "--k", "1", "how long do refunds take?"]
    capsys.readouterr()
    assert main(ask + ["--stream"]) == 2
    out, err = capsys.readouterr()
    assert out == "The refund policy\n"  # the line ends before the error's
    assert err.splitlines()[-3] == (
        f"ragkit: error: the reply from the Anthropic API at {server_url(server)} broke off "
        f"before its end (no stop reason: cut mid-reply); nothing was kept: run again")
    assert err.splitlines()[-1].startswith("claude-haiku-4-5: 1 request, 0 from the call cache")
    server.mode = "ok"
    assert main(ask) == 0
    assert capsys.readouterr().out.startswith("Within 21 days.")
    assert len(server.sent) == 2  # asked again, not served the cut reply from the cache


def test_an_answer_cut_at_max_tokens_says_so_also_from_the_cache(api, capsys):
    server, index = api
    server.mode = "max_tokens"
    ask = ["ask", "--index", str(index), "--k", "1", "how long do refunds take?"]
    for sent in (1, 1):  # the second run is served from the call cache
        capsys.readouterr()
        assert main(ask) == 0
        out, err = capsys.readouterr()
        assert out.startswith("The refund policy\n")
        assert ("ragkit: warning: the answer stopped at max_tokens (1024): it is cut off\n"
                in err)
        assert len(server.sent) == sent


def test_a_context_cut_at_max_tokens_is_named(api, capsys, tmp_path):
    server, _ = api
    server.mode = "max_tokens"
    docs = tmp_path / "docs.jsonl"
    capsys.readouterr()
    assert main(["index", str(docs), "--out", str(tmp_path / "ctx"), "--embedder", "none",
                 "--contextualizer", "claude"]) == 0
    err = capsys.readouterr().err
    assert "1 context(s) stopped at max_tokens (1024) and are cut off: refund#0\n" in err


def server_url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_what_a_failed_command_paid_for_is_shown_with_its_error(api, capsys, tmp_path):
    """Contexts paid for before a failure were never shown: only the error line."""
    server, _ = api
    server.plan = ["ok"]  # the first context is answered, the second breaks off
    docs = tmp_path / "two.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Refunds take {i} days."})
                            + "\n" for i in (1, 2)))
    capsys.readouterr()
    assert main(["index", str(docs), "--out", str(tmp_path / "ctx"), "--embedder", "none",
                 "--contextualizer", "claude"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-3].startswith("ragkit: error: d2: chunk d2#0: the reply from the Anthropic API")
    assert err[-2] == ("ragkit: paid before the error (replies kept in the call cache are not "
                       "paid for again):")
    assert err[-1].startswith("claude-haiku-4-5: 2 requests, 0 from the call cache; tokens in "
                              "100, out 10")


def test_an_error_shows_only_what_its_own_command_paid(api, capsys, tmp_path):
    """Commands run one after another in one process (a notebook, a test): the lines after an
    error summed every earlier command's calls too."""
    server, index = api
    server.mode = "ok"
    assert main(["ask", "--index", str(index), "--k", "1", "how long do refunds take?"]) == 0
    server.mode = "cut"
    capsys.readouterr()
    assert main(["ask", "--index", str(index), "--k", "1", "are refunds accepted?"]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        "claude-haiku-4-5: 1 request, 0 from the call cache")
