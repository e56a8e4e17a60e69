"""Two runs at once on one call cache pay for a request once: the second waits for the
first's call and reads its reply (two `ragkit index --contextualizer claude` runs started
together sent every request twice)."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from http_reply import send_json

REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
         "content": [{"type": "text", "text": "the answer"}], "stop_reason": "end_turn",
         "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2}}

ASK = """
import sys, anthropic
from ragkit.cache import CallCache
from ragkit.llm import LLM, UsageLog
client = anthropic.Anthropic(api_key="k", base_url=sys.argv[1], max_retries=0)
llm = LLM(client, cache=CallCache(sys.argv[2]), usage=UsageLog())
reply = llm.create(model="claude-haiku-4-5", max_tokens=20,
                   messages=[{"role": "user", "content": "one question"}])
print(reply.content[0].text)
"""


class Slow(BaseHTTPRequestHandler):
    """Answers each Messages call after a second, counting them."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.sent.append(self.path)
        time.sleep(1.0)
        send_json(self, 200, REPLY)

    def log_message(self, *args) -> None:
        pass


def test_two_processes_asking_one_request_at_once_pay_for_it_once(tmp_path: Path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.sent = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        runs = [subprocess.Popen([sys.executable, "-c", ASK, base, str(tmp_path / "calls.sqlite")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        outs = [run.communicate(timeout=120) for run in runs]
    finally:
        server.shutdown()
    assert [out for out, _ in outs] == ["the answer\n", "the answer\n"], outs
    assert server.sent == ["/v1/messages"]
