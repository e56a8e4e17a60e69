"""No API key reaches an error line: each client against a loopback API that echoes the
request's key headers back in its error body (as some proxies and gateways do)."""
from __future__ import annotations

import threading
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import tenacity
import voyageai.client
from http_reply import send_json

from ragkit.documents import Chunk, RagkitError
from ragkit.rerank import Candidate

ANTHROPIC_KEY = "sk-ant-echoed-0123456789"
VOYAGE_KEY = "pa-echoed-0123456789abcdefghij"
PLAIN_KEY = "my-gateway-token-42"  # no known key shape: masked only as the header value


class Echo(BaseHTTPRequestHandler):
    """Answers every POST with `server.status` and an error body quoting the key headers."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        said = (f"invalid credentials: Authorization: {self.headers.get('Authorization')}; "
                f"x-api-key: {self.headers.get('x-api-key')}")
        if self.path.startswith("/v1/messages"):
            body = {"type": "error", "error": {"type": "invalid_request_error",
                                               "message": said}}
        else:
            body = {"detail": said}
        send_json(self, self.server.status, body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def echo(monkeypatch, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    server.status = 400
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("VOYAGE_BASE_URL", f"{url}/v1")
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAGKIT_API_RETRIES", "1")
    monkeypatch.setattr(voyageai.client, "wait_exponential_jitter",
                        lambda **_: tenacity.wait_none())
    yield server
    server.shutdown()
    server.server_close()


def claude() -> None:
    from ragkit.llm import LLM, UsageLog, make_client
    LLM(make_client(max_retries=0), cache=None, usage=UsageLog()).create(
        model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}])


def voyage_embed() -> None:
    from ragkit.embed.voyage import VoyageEmbedder
    VoyageEmbedder("voyage-3.5").embed(["a text"])


def voyage_context() -> None:
    from ragkit.embed.voyage import VoyageContextEmbedder
    VoyageContextEmbedder().embed_documents([["one chunk", "another chunk"]])


def voyage_rerank() -> None:
    from ragkit.rerank.voyage import VoyageReranker
    VoyageReranker("rerank-2.5", cache=False).rerank(
        "refunds?", [Candidate(Chunk("c0", "d", "Refunds take seven days."), 1.0)], k=1)


def tool_runner() -> None:
    from ragkit.agent.runner import run_with_tool_runner
    from ragkit.agent.tool import ToolContext
    from ragkit.agent.tools import TOOLS
    from ragkit.llm import make_client
    run_with_tool_runner("where is the refund bug?", [TOOLS["grep"]], ToolContext(root=Path(".")),
                         client=make_client(max_retries=0))


CLIENTS = {"claude": claude, "voyage embed": voyage_embed, "voyage context": voyage_context,
           "voyage rerank": voyage_rerank, "tool runner": tool_runner}


@pytest.mark.parametrize("status", [400, 401, 403, 429])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("where", ["env", "file"])
def test_an_echoed_key_is_masked_in_every_clients_error(echo, monkeypatch, tmp_path, client,
                                                        status, where):
    echo.status = status
    anthropic_key, voyage_key = ANTHROPIC_KEY, VOYAGE_KEY
    if where == "file":  # a key of no known shape; Voyage's read by the SDK from a file
        anthropic_key = voyage_key = PLAIN_KEY
        (tmp_path / "key").write_text(PLAIN_KEY)
        monkeypatch.setenv("VOYAGE_API_KEY_PATH", str(tmp_path / "key"))
        monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    else:
        monkeypatch.setenv("VOYAGE_API_KEY", voyage_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    with pytest.raises(RagkitError) as info:
        CLIENTS[client]()
    line = str(info.value)
    assert anthropic_key not in line and voyage_key not in line
    assert "***" in line  # the echo reached the message, masked
    assert "\n" not in line


def test_scrub_masks_keys_headers_and_key_shapes_and_folds_lines(monkeypatch):
    from ragkit.online import scrub
    monkeypatch.setenv("VOYAGE_API_KEY", "plainvoyagekey")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    text = ('got Authorization: Bearer tok.en/1 and {"x-api-key": "abc"}\n'
            "key sk-ant-api03-abcdefgh, pa-0123456789abcdefghijklmnopq and plainvoyagekey; "
            "file /tmp/pa-notes.txt, handle extra-secret")
    assert scrub(text, "extra-secret") == (
        'got Authorization: Bearer *** and {"x-api-key": "***"} key ***, *** and ***; '
        "file /tmp/pa-notes.txt, handle ***")
