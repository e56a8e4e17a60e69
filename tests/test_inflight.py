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

import pytest

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


def _two_runs(tmp_path: Path, handler, script: str) -> tuple[list[tuple[str, str]], list]:
    """`script` run by two processes at once on one call cache against a loopback server
    answering with `handler`: their (stdout, stderr), and what the server was sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.sent = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        runs = [subprocess.Popen([sys.executable, "-c", script, base,
                                  str(tmp_path / "calls.sqlite")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        return [run.communicate(timeout=300) for run in runs], server.sent
    finally:
        server.shutdown()


STREAM = """
import sys, anthropic
from ragkit.cache import CallCache
from ragkit.llm import LLM, UsageLog
client = anthropic.Anthropic(api_key="k", base_url=sys.argv[1], max_retries=0)
llm = LLM(client, cache=CallCache(sys.argv[2]), usage=UsageLog())
stream = llm.stream(model="claude-haiku-4-5", max_tokens=20,
                    messages=[{"role": "user", "content": "one question"}])
try:
    while True:
        next(stream)
except StopIteration as done:
    print(done.value.content[0].text)
"""


class SlowStream(BaseHTTPRequestHandler):
    """Streams each Messages reply after a second, counting the requests."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        from ragkit.standin.sse import events, frame
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.sent.append(self.path)
        time.sleep(1.0)
        body = b"".join(frame(name, data) for name, data in events(REPLY))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("handler, script", [(Slow, ASK), (SlowStream, STREAM)],
                         ids=["create", "stream"])
def test_two_processes_asking_one_request_at_once_pay_for_it_once(tmp_path: Path, handler,
                                                                  script):
    """Streamed too: `ragkit ask --stream` of one question in two terminals at once sent and
    paid for both streams, while `create` already waited for the other run's call."""
    outs, sent = _two_runs(tmp_path, handler, script)
    assert [out for out, _ in outs] == ["the answer\n", "the answer\n"], outs
    assert sent == ["/v1/messages"]


THREADED = """
import sys, anthropic
from concurrent.futures import ThreadPoolExecutor
from ragkit.cache import CallCache
from ragkit.llm import LLM, UsageLog
client = anthropic.Anthropic(api_key="k", base_url=sys.argv[1], max_retries=0)
llm = LLM(client, cache=CallCache(sys.argv[2]), usage=UsageLog())
asked = [i % 20 for i in range(40)]  # each request twice within the run, as twin chunks are
with ThreadPoolExecutor(4) as pool:  # the claude contextualizer's worker threads
    replies = list(pool.map(lambda i: llm.create(model="claude-haiku-4-5", max_tokens=20,
        messages=[{"role": "user", "content": f"question {i}"}]).content[0].text, asked))
print(len(replies))
"""


class Counting(Slow):
    """Answers after 0.2 s, counting each question asked."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        import json
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.sent.append(body["messages"][0]["content"])
        time.sleep(0.2)
        send_json(self, 200, REPLY)


def test_two_runs_with_worker_threads_pay_for_each_request_once(tmp_path: Path):
    """With four worker threads in each of two processes, the per-process record locks
    (`lockf`) met false deadlocks (EDEADLK) and those calls went unguarded: 8 to 18 of 40
    requests were paid for twice, and a run's own threads never waited for each other."""
    outs, sent = _two_runs(tmp_path, Counting, THREADED)
    assert [out for out, _ in outs] == ["40\n", "40\n"], outs
    assert sorted(sent) == sorted(f"question {i}" for i in range(20))


def test_homes_whose_call_caches_are_links_to_one_file_share_its_locks(tmp_path: Path):
    from ragkit.inflight import InFlight
    real = tmp_path / "shared" / "calls.sqlite"
    real.parent.mkdir()
    real.touch()
    links = [tmp_path / home / "calls.sqlite" for home in ("a", "b")]
    for link in links:
        link.parent.mkdir()
        link.symlink_to(real)
    assert {InFlight(link).path for link in links} == {real.with_name("calls.sqlite.inflight")}


def test_a_child_forked_while_a_lock_is_held_does_not_keep_it(tmp_path: Path):
    """The child's copy of the descriptor kept the lock after the parent let go: another
    process waited until the child (a fork-started worker, say) ended."""
    import os
    from ragkit.inflight import InFlight
    cache, key = tmp_path / "calls.sqlite", "ab" * 32
    with InFlight(cache).holding(key):
        child = os.fork()
        if child == 0:  # a worker that lives on
            time.sleep(20)
            os._exit(0)
    try:
        waiting = subprocess.run(
            [sys.executable, "-c", "import sys, time; from pathlib import Path\n"
             "from ragkit.inflight import InFlight\nstart = time.monotonic()\n"
             f"with InFlight(Path({str(cache)!r})).holding({key!r}):\n"
             "    print(round(time.monotonic() - start))"],
            capture_output=True, text=True, timeout=60)
    finally:
        os.kill(child, 9)
        os.waitpid(child, 0)
    assert (waiting.returncode, waiting.stdout) == (0, "0\n"), waiting.stderr


def test_a_create_beside_an_open_stream_of_the_same_request_does_not_wait_for_itself(tmp_path):
    """The stream holds the request's lock while its generator lives; a `create` of the same
    request in the same thread, the stream kept open, waited for that lock for ever."""
    import json
    import anthropic
    import httpx2
    from ragkit.cache import CallCache
    from ragkit.llm import LLM, UsageLog
    from tests.test_llm import _stream_of
    sent = []

    def handler(request):
        sent.append(json.loads(request.content).get("stream", False))
        if sent[-1]:
            return httpx2.Response(200, content=_stream_of(REPLY, False),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json=REPLY)
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(
                                     handler)))  # an online client: its calls are locked
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    body = dict(model="claude-haiku-4-5", max_tokens=20,
                messages=[{"role": "user", "content": "one question"}])
    stream = llm.stream(**body)
    next(stream)  # the stream is open, holding the lock
    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(llm.create(**body).content[0].text))
    worker.start()
    worker.join(5)
    assert not done  # another thread of the run waits for the stream, as it should
    result = llm.create(**body)  # this thread: goes on, unguarded
    assert result.content[0].text == "the answer"
    for _ in stream:
        pass
    worker.join(10)
    assert done == ["the answer"] and sent == [True, False]
