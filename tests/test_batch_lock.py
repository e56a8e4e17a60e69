"""Two `ragkit index --batch` runs started at once on one RAGKIT_HOME submit one batch between
them: the journal's submit lock (`Journal.submitting`) is held from reading the journal to
writing the new batch's record, so the second run polls the first's batch or finds its
results in the paid-call cache."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from http.server import ThreadingHTTPServer

import pytest

from test_batch_review import RAGKIT, Api, _docs, _message


class SlowApi(Api):
    """Each create takes a second (both runs have read the journal before either could write
    it, without the lock) and gets its own id; a batch has ended when first retrieved."""

    batches: dict[str, list[dict]] = {}

    def _batch_of(self, batch_id: str) -> bytes:
        Api.requests = SlowApi.batches.get(batch_id, [])
        return self._batch().replace(b"msgbatch_1", batch_id.encode())

    def do_POST(self):
        if not self.path.split("?")[0].rstrip("/").endswith("/batches"):
            return super().do_POST()  # token counts
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        time.sleep(1.0)
        batch_id = f"msgbatch_{len(SlowApi.batches) + 1}"
        SlowApi.batches[batch_id] = body["requests"]
        return self._send(self._batch_of(batch_id))

    def do_GET(self):
        batch_id = self.path.split("?")[0].split("/batches/")[1].split("/")[0]
        if self.path.split("?")[0].endswith("/results"):
            return self._send(b"".join(json.dumps({"custom_id": r["custom_id"], "result": {
                "type": "succeeded", "message": _message(f"batched {i}")}}).encode() + b"\n"
                for i, r in enumerate(SlowApi.batches[batch_id])))
        return self._send(self._batch_of(batch_id))


@pytest.fixture
def slow_api():
    SlowApi.batches = {}
    srv = ThreadingHTTPServer(("127.0.0.1", 0), SlowApi)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()


def test_two_runs_started_at_once_submit_one_batch(tmp_path, slow_api):
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{slow_api.server_address[1]}",
           "ANTHROPIC_API_KEY": "test-key", "RAGKIT_HOME": str(tmp_path / "home"),
           "RAGKIT_API_RETRIES": "0"}
    docs = _docs(tmp_path / "docs.jsonl")
    runs = [subprocess.Popen([str(RAGKIT), "index", str(docs), "--out", str(tmp_path / f"i{n}"),
                              "--contextualizer", "claude", "--batch", "--embedder", "none",
                              "--chunk-size", "64", "--overlap", "0", "--batch-poll", "0.2"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for n in (1, 2)]
    outcomes = [run.communicate(timeout=90) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outcomes]
    assert list(SlowApi.batches) == ["msgbatch_1"]  # not one batch per run
    contexts = [[json.loads(line)["context"] for line in
                 (tmp_path / f"i{n}" / "chunks.jsonl").read_text().splitlines()] for n in (1, 2)]
    assert contexts[0] == contexts[1] and all(c.startswith("batched ") for c in contexts[0])
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))
