"""A loopback Message Batches server for the tests: run as a process, killed and restarted.

`python batches_loopback.py STATE LOG PORT HOLD EXPIRE [MODE]` serves on 127.0.0.1:PORT (0: any;
the port is written to STATE.port) and keeps its batches in the JSON file STATE, so a
restarted server still knows them. It asserts the SDK's request shapes (a 400 naming the
problem otherwise): `requests` a list of {custom_id matching ^[a-zA-Z0-9_-]{1,64}$, unique;
params with model, max_tokens, temperature 0 and a user turn whose first block is the
document with cache_control}. A batch is in_progress for HOLD seconds after creation, then
ended; results come in reverse order; the request at position EXPIRE of the first batch
(-1: none) expires. A succeeded text is "batched: " + the first 60 characters of the chunk;
an interactive POST /v1/messages answers "interactive: " + the same. Every request is logged
as a JSON line {method, path, n}.
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE, LOG, PORT, HOLD, EXPIRE = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    float(sys.argv[4]), int(sys.argv[5])
# MODE (optional): "strange" adds to the results a second line for the first request and a
# line for a request never sent; "cut" breaks the first results download off half-way;
# "newtype" gives the expiring request a result type the API does not have today; "refuse"
# answers every interactive POST /v1/messages with a 400; "slow" answers the first batch submit
# 3 s after making the batch (a client that gave up by then gets nothing); "fail500" answers
# the first batch submit with a 500, making no batch; "made500second" makes the second batch
# and then answers its submit with a 500; "nousage" leaves every other result's
# usage without its input and output counts. GET
# /v1/messages/batches lists the batches, newest first.
MODE = sys.argv[6] if len(sys.argv) > 6 else ""
LOCK = threading.Lock()
ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def load() -> dict:
    try:
        return json.load(open(STATE))
    except (OSError, ValueError):
        return {}


def chunk_of(params: dict) -> str:
    text = params["messages"][0]["content"][1]["text"]
    return text.split("<chunk>\n", 1)[1].split("\n</chunk>", 1)[0]


def message(text: str, n: int) -> dict:
    usage = {"input_tokens": 1000, "output_tokens": 10, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    if MODE == "nousage" and n % 2:  # every other reply without its counts
        usage = {"cache_read_input_tokens": 0}
    return {"id": f"msg_{n:06d}", "type": "message", "role": "assistant",
            "model": "claude-haiku-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}


def complaint(body: dict) -> str | None:
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        return "requests: a non-empty list is required"
    ids = [r.get("custom_id") for r in requests]
    if len(set(ids)) != len(ids) or not all(isinstance(i, str) and ID.match(i) for i in ids):
        return "custom_id: must match ^[a-zA-Z0-9_-]{1,64}$ and be unique"
    for r in requests:
        p = r.get("params", {})
        first = p.get("messages", [{}])[0].get("content", [{}])[0]
        if not (p.get("model") and p.get("max_tokens") and p.get("temperature") == 0.0
                and first.get("cache_control") == {"type": "ephemeral"}
                and "<document>" in first.get("text", "")):
            return "params: not the contextualizer's request"
    return None


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _log(self, n=0):
        with LOCK, open(LOG, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path.split("?")[0],
                                "n": n}) + "\n")

    def _send(self, obj, status=200, ctype="application/json"):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _batch(self, bid, b):
        ended = time.time() - b["t"] >= HOLD
        n, expired = len(b["requests"]), len(b["expire"])
        port = self.server.server_address[1]
        return {"id": bid, "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else n,
                                   "succeeded": n - expired if ended else 0, "errored": 0,
                                   "canceled": 0, "expired": expired if ended else 0},
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b["t"])),
                "expires_at": "2099-12-03T00:00:00Z",
                "ended_at": None, "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"http://127.0.0.1:{port}/v1/messages/batches/{bid}/results"
                if ended else None}

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        path = self.path.split("?")[0].rstrip("/")
        self._log(len(body.get("requests", [])))
        if path.endswith("/count_tokens"):
            return self._send({"input_tokens": 5000})
        if path.endswith("/messages/batches") and MODE == "fail500" and not load():
            with LOCK:
                json.dump({"failed": True}, open(STATE, "w"))
            return self._send({"type": "error", "error": {"type": "api_error",
                                                          "message": "Internal"}}, 500)
        if path.endswith("/messages/batches"):
            problem = complaint(body)
            if problem:
                return self._send({"type": "error", "error": {
                    "type": "invalid_request_error", "message": problem}}, 400)
            with LOCK:
                state = load()
                bid = f"msgbatch_{len(state) + 1:04d}"
                expire = [body["requests"][EXPIRE]["custom_id"]] \
                    if not state and 0 <= EXPIRE < len(body["requests"]) else []
                state[bid] = {"t": time.time(), "requests": body["requests"], "expire": expire}
                json.dump(state, open(STATE, "w"))
            if MODE == "slow" and len(state) == 1:
                time.sleep(3)
            if MODE == "made500second" and len(state) == 2:  # made, then a 500
                return self._send({"type": "error", "error": {"type": "api_error",
                                                              "message": "Internal"}}, 500)
            return self._send(self._batch(bid, state[bid]))
        if path.endswith("/messages") and MODE == "refuse":
            return self._send({"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": "no"}}, 400)
        if path.endswith("/messages"):
            return self._send(message("interactive: " + chunk_of(body)[:60], 0))
        self._send({}, 404)

    def do_GET(self):
        self._log()
        parts = self.path.split("?")[0].rstrip("/").split("/")
        state = load()
        if parts[-1] == "batches":
            listed = [self._batch(bid, b) for bid, b in reversed(state.items())
                      if bid.startswith("msgbatch_")]
            return self._send({"data": listed, "has_more": False, "first_id": None,
                               "last_id": None})
        if parts[-1] == "results" and parts[-2] in state:
            b = state[parts[-2]]
            lines = []
            for i, r in enumerate(reversed(b["requests"])):
                if r["custom_id"] in b["expire"]:
                    result = {"type": "mystery" if MODE == "newtype" else "expired"}
                else:
                    result = {"type": "succeeded",
                              "message": message("batched: " + chunk_of(r["params"])[:60], i)}
                lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
            if MODE == "strange":
                lines += [lines[0], lines[0].replace(b["requests"][-1]["custom_id"], "f" * 64)]
            data = ("\n".join(lines) + "\n").encode()
            if MODE == "cut" and not state.get("cut"):
                with LOCK:
                    state["cut"] = True
                    json.dump(state, open(STATE, "w"))
                half = len("\n".join(lines[:len(lines) // 2])) + 1
                self.send_response(200)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:half])
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            return self._send(data, ctype="application/binary")
        if parts[-1] in state:
            return self._send(self._batch(parts[-1], state[parts[-1]]))
        self._send({"type": "error", "error": {"type": "not_found_error",
                                               "message": "no such batch"}}, 404)


srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
open(STATE + ".port", "w").write(str(srv.server_address[1]))
srv.serve_forever()
