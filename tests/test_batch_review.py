"""Batch runs under the faults a user meets: a results download cut mid-stream, a journal
record removed by a concurrent run while this one lists the journal, a Voyage output file
cut mid-line. Each is one line (exit 2) with the journal kept, and the same command run
again finishes without submitting anything twice."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ragkit.batch_journal import BatchRecord, Journal

RAGKIT = Path(sys.executable).parent / "ragkit"


def _message(text: str) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 5}}


class Api(BaseHTTPRequestHandler):
    """Message Batches: one batch, ended at once; its first results download is cut after
    the first line (the connection closes short of its content-length)."""

    requests: list[dict] = []
    downloads = 0
    creates = 0

    def log_message(self, *a):
        pass

    def _send(self, data: bytes, length: int | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    def _batch(self) -> bytes:
        n = len(Api.requests)
        port = self.server.server_address[1]
        return json.dumps({
            "id": "msgbatch_1", "type": "message_batch", "processing_status": "ended",
            "request_counts": {"processing": 0, "succeeded": n, "errored": 0, "canceled": 0,
                               "expired": 0},
            "created_at": "2026-12-02T00:00:00Z", "expires_at": "2026-12-03T00:00:00Z",
            "ended_at": None, "archived_at": None, "cancel_initiated_at": None,
            "results_url": f"http://127.0.0.1:{port}/v1/messages/batches/msgbatch_1/results",
        }).encode()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path.split("?")[0].rstrip("/").endswith("/count_tokens"):
            return self._send(b'{"input_tokens": 5000}')
        if self.path.split("?")[0].rstrip("/").endswith("/batches"):
            Api.creates += 1
            Api.requests = body["requests"]
            return self._send(self._batch())
        return self._send(json.dumps(_message("interactive")).encode())

    def do_GET(self):
        if self.path.split("?")[0].endswith("/results"):
            Api.downloads += 1
            lines = [json.dumps({"custom_id": r["custom_id"], "result": {
                "type": "succeeded", "message": _message(f"batched {i}")}}).encode() + b"\n"
                for i, r in enumerate(Api.requests)]
            data = b"".join(lines)
            if Api.downloads == 1:  # cut mid-stream: the peer closes early
                self._send(data[:len(lines[0]) + 20], length=len(data))
                self.close_connection = True
                return
            return self._send(data)
        return self._send(self._batch())


@pytest.fixture
def api():
    Api.requests, Api.downloads, Api.creates = [], 0, 0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()


def _docs(path: Path) -> Path:
    words = "revenue margin quarter growth customer churn pipeline guidance segment".split()
    text = "\n\n".join(" ".join(words[(i + j) % 9] for j in range(50)) + "." for i in range(4))
    path.write_text(json.dumps({"id": "d", "title": "Report", "text": text}) + "\n")
    return path


def test_results_download_cut_mid_stream_is_one_line_and_a_rerun_collects(tmp_path, api):
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{api.server_address[1]}",
           "ANTHROPIC_API_KEY": "test-key", "RAGKIT_HOME": str(tmp_path / "home"),
           "RAGKIT_API_RETRIES": "0"}
    args = [str(RAGKIT), "index", str(_docs(tmp_path / "docs.jsonl")), "--out",
            str(tmp_path / "index"), "--contextualizer", "claude", "--batch", "--embedder",
            "none", "--chunk-size", "64", "--overlap", "0", "--batch-poll", "0.2"]
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 2, first.stderr
    assert "Traceback" not in first.stderr
    assert "batch msgbatch_1: reading its results" in first.stderr
    assert not (tmp_path / "index").exists()
    journal = tmp_path / "home" / "batches" / "anthropic"
    assert [p.name for p in journal.glob("*.json")] == ["msgbatch_1.json"]

    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert Api.creates == 1 and Api.downloads == 2  # resumed, never submitted twice
    contexts = [json.loads(line)["context"]
                for line in (tmp_path / "index" / "chunks.jsonl").read_text().splitlines()]
    assert len(contexts) == len(Api.requests) > 2
    assert all(c.startswith("batched ") for c in contexts)
    assert not list(journal.glob("*.json"))


def test_a_record_removed_while_the_journal_is_listed_is_skipped(tmp_path, monkeypatch):
    journal = Journal("anthropic", "http://api", folder=tmp_path)
    for name in ("b1", "b2"):
        journal.write(BatchRecord("anthropic", "http://api", name, ["k"]))
    real = Path.read_text

    def read_text(self, *a, **k):  # another run collects b1 between glob and read
        if self.name == "b1.json":
            self.unlink()
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", read_text)
    assert [r.id for r in journal.open_batches()] == ["b2"]


class Voyage(BaseHTTPRequestHandler):
    """Voyage Batch API: one job, completed at once; its output file's first download ends
    mid-line (a whole HTTP reply: the file itself is cut)."""

    downloads = 0
    jobs = 0
    keys: list[str] = []

    def log_message(self, *a):
        pass

    def _send(self, obj) -> None:
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        if self.path.endswith("/files"):
            Voyage.keys = [json.loads(line)["custom_id"] for line in body.decode().splitlines()
                           if line.startswith('{"custom_id"')]
            return self._send({"id": "file-in"})
        Voyage.jobs += 1
        return self._send({"id": "batch-1", "status": "in_progress"})

    def do_GET(self):
        if self.path.endswith("/content"):
            Voyage.downloads += 1
            data = b"".join(json.dumps({"custom_id": k, "response": {"status_code": 200,
                            "body": {"data": [{"embedding": [1.0]}], "usage": {
                                "total_tokens": 3}}}}).encode() + b"\n" for k in Voyage.keys)
            return self._send(data[:-10] if Voyage.downloads == 1 else data)
        return self._send({"id": "batch-1", "status": "completed", "output_file_id": "file-out",
                           "request_counts": {"completed": len(Voyage.keys)}})


def test_voyage_output_file_cut_mid_line_is_one_line_and_a_rerun_collects(tmp_path,
                                                                          monkeypatch):
    from ragkit.documents import RagkitError
    from ragkit.voyage_batch import VoyageBatches

    Voyage.downloads, Voyage.jobs, Voyage.keys = 0, 0, []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Voyage)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VOYAGE_BASE_URL", f"http://127.0.0.1:{srv.server_address[1]}/v1")
    sdk = type("Sdk", (), {"api_key": "pa-test"})()
    items = [(f"{i:064x}", {"input": [f"text {i}"]}) for i in range(3)]

    def run():
        return VoyageBatches("voyage:voyage-3.5", sdk, {"poll": 0.1}).run(
            "/v1/embeddings", {"model": "voyage-3.5"}, items, fallback=lambda bodies: [])

    try:
        with pytest.raises(RagkitError, match="Voyage batch batch-1: .*line 3.*re-run"):
            run()
        assert list((tmp_path / "home" / "batches" / "voyage").glob("*.json"))
        done = run()
        assert sorted(done) == [k for k, _ in items] and Voyage.jobs == 1
    finally:
        srv.shutdown()


def test_update_with_batch_takes_the_indexs_contextualizer(tmp_path):
    """`--update` keeps the index's own options, so `--update --batch` on an index built
    with the claude contextualizer sends the changed document's contexts as a batch (the
    offline stand-in here) instead of refusing for want of --contextualizer claude."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    docs = _docs(tmp_path / "docs.jsonl")
    first = subprocess.run([str(RAGKIT), "index", str(docs), "--out", str(tmp_path / "ix"),
                            "--contextualizer", "claude", "--batch", "--embedder", "none",
                            "--chunk-size", "64", "--overlap", "0"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    row = json.loads(docs.read_text())
    docs.write_text(docs.read_text() + json.dumps({"id": "e", "title": "Memo",
                                                   "text": row["text"][:200]}) + "\n")
    done = subprocess.run([str(RAGKIT), "index", str(docs), "--out", str(tmp_path / "ix"),
                           "--update", "--batch"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "batches: 1 created, 0 resumed" in done.stderr
    assert "updated" in done.stdout and "1 document added or changed" in done.stdout


class Portal(BaseHTTPRequestHandler):
    """A proxy's login page, 200 and HTML, for every request."""

    def log_message(self, *a):
        pass

    def _page(self):
        data = b"<html><body>Please sign in</body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self._page()

    do_GET = _page


def test_a_voyage_reply_that_is_not_json_is_one_line(tmp_path, monkeypatch):
    from ragkit.documents import RagkitError
    from ragkit.voyage_batch import VoyageBatches

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Portal)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VOYAGE_BASE_URL", f"http://127.0.0.1:{srv.server_address[1]}/v1")
    sdk = type("Sdk", (), {"api_key": "pa-test"})()
    try:
        with pytest.raises(RagkitError, match=r"voyage:voyage-3.5: Voyage Batch API POST "
                                              r"/files: not a JSON object \(<html><body>"):
            VoyageBatches("voyage:voyage-3.5", sdk, {"poll": 0.1}).run(
                "/v1/embeddings", {"model": "voyage-3.5"}, [("a" * 64, {"input": ["x"]})],
                fallback=lambda bodies: [])
    finally:
        srv.shutdown()
