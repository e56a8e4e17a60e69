"""A loopback Voyage Batch API for the tests: run as a process, killed and restarted.

`python voyage_batch_loopback.py STATE LOG PORT HOLD FAIL` serves on 127.0.0.1:PORT (0: any;
the port goes to STATE.port) and keeps files and jobs in the JSON file STATE, so a restarted
server still knows them. It asserts the request shapes (a 400 naming the problem otherwise):
POST /v1/files is multipart with purpose "batch" and a JSONL file of {custom_id (64 hex),
body: {input: [one text]} or {inputs: [[chunks]]}}; POST /v1/batches has input_file_id,
endpoint /v1/embeddings or /v1/contextualizedembeddings, completion_window "12h" and
request_params with model and input_type "document". A job is in_progress for HOLD seconds,
then completed; its output file lists the results in reverse order, and the line at
position FAIL of the first job (-1: none) is a 500 error. Interactive POST /v1/embeddings
and /v1/contextualizedembeddings answer at once. A sixth argument: the failing row's shape
(`BAD`; "deep": a line of 100,000 "["), "refuse" (the interactive endpoints fail), "drip"
or "stall" (every job status is sent a byte every 0.4 s, or stops after 20 bytes) or
"slowfile" (the output file comes in five pieces 0.4 s apart). Every vector is `vector(text)`: 1,024 numbers from the text's sha256,
so a test can check which text a vector belongs to.
Every request is logged as a JSON line {method, path}.
"""
import hashlib
import json
import re
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import default
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def vector(text: str) -> list[float]:
    seed = hashlib.sha256(text.encode()).digest()
    return [(seed[i % 32] - 127.5) / 128 + (i % 7) / 100 for i in range(1024)]


def load(state: str) -> dict:
    try:
        return json.load(open(state))
    except (OSError, ValueError):
        return {"files": {}, "jobs": {}}


def answer(endpoint: str, body: dict) -> dict:
    if endpoint.endswith("/contextualizedembeddings"):
        return {"data": [{"data": [{"embedding": vector(c), "index": j} for j, c in
                                   enumerate(doc)], "index": i}
                         for i, doc in enumerate(body["inputs"])], "usage": {"total_tokens": 7}}
    return {"data": [{"embedding": vector(t), "index": i} for i, t in enumerate(body["input"])],
            "usage": {"total_tokens": 5}}


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _log(self):
        with LOCK, open(self.server.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path.split("?")[0]}) + "\n")

    def _send(self, obj, status=200, slow=None):
        """The reply; `slow` "drip": a byte every 0.4 s (well inside a 1 s read timeout: at
        a byte a second, a server thread waking late missed it), "stall": 20 bytes then
        nothing for 30 s, "pieces": five pieces 0.4 s apart."""
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        size, gap = {"drip": (1, 0.4), "stall": (20, 30.0), "pieces": (len(data) // 5 + 1, 0.4)
                     }.get(slow, (len(data), 0.0))
        try:
            for start in range(0, len(data), size):
                self.wfile.write(data[start:start + size])
                self.wfile.flush()
                time.sleep(gap)
        except OSError:  # the client gave up and closed the connection
            pass

    def _bad(self, message):
        return self._send({"detail": message}, 400)

    def do_POST(self):
        self._log()
        path, state_file = self.path.split("?")[0].rstrip("/"), self.server.state
        if path == "/v1/files":
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            form = BytesParser(policy=default).parsebytes(
                f"Content-Type: {self.headers['content-type']}\r\n\r\n".encode() + raw)
            fields = {part.get_param("name", header="content-disposition"):
                      part.get_payload(decode=True) for part in form.iter_parts()}
            if fields.get("purpose") != b"batch" or "file" not in fields:
                return self._bad("purpose 'batch' and a file are required")
            lines = [json.loads(x) for x in fields["file"].decode().splitlines()]
            for line in lines:
                body = line.get("body", {})
                if not re.fullmatch(r"[0-9a-f]{64}", line.get("custom_id", "")) or not (
                        len(body.get("input", [])) == 1 or len(body.get("inputs", [])) == 1):
                    return self._bad(f"bad line {line}")
            with LOCK:
                state = load(state_file)
                fid = f"file-{len(state['files']) + 1}"
                state["files"][fid] = lines
                json.dump(state, open(state_file, "w"))
            return self._send({"id": fid, "object": "file", "purpose": "batch"})
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if path == "/v1/batches":
            params = body.get("request_params") or {}
            if body.get("completion_window") != "12h" or body.get("endpoint") not in (
                    "/v1/embeddings", "/v1/contextualizedembeddings") or not params.get(
                    "model") or params.get("input_type") != "document":
                return self._bad(f"bad batch {body}")
            with LOCK:
                state = load(state_file)
                if body["input_file_id"] not in state["files"]:
                    return self._bad("no such file")
                bid = f"batch-{len(state['jobs']) + 1}"
                state["jobs"][bid] = {"t": time.time(), "file": body["input_file_id"],
                                      "endpoint": body["endpoint"], "first": not state["jobs"]}
                json.dump(state, open(state_file, "w"))
            return self._send({"id": bid, "object": "batch", "status": "validating"})
        if path in ("/v1/embeddings", "/v1/contextualizedembeddings"):
            if self.server.kind == "refuse":  # the interactive endpoint fails
                return self._bad("refused")
            return self._send(answer(path, body))
        self._send({"detail": "not found"}, 404)

    def do_GET(self):
        self._log()
        parts = self.path.split("?")[0].rstrip("/").split("/")
        state = load(self.server.state)
        if parts[-1] == "content" and parts[-2].startswith("out-"):
            job = state["jobs"][parts[-2][4:]]
            lines = state["files"][job["file"]]
            rows = []
            for i, line in enumerate(reversed(lines)):
                bad = BAD.get(self.server.kind)
                if job["first"] and len(lines) - 1 - i == self.server.fail and bad:
                    good = {"status_code": 200, "body": answer(job["endpoint"], line["body"])}
                    rows += [r if isinstance(r, Raw) else {"custom_id": line["custom_id"],
                                                           "response": r} for r in bad(good)]
                elif job["first"] and len(lines) - 1 - i == self.server.fail:
                    rows.append({"custom_id": line["custom_id"], "response": {
                        "status_code": 500, "body": None}, "error": {"message": "internal"}})
                else:
                    rows.append({"custom_id": line["custom_id"], "response": {
                        "status_code": 200, "body": answer(job["endpoint"], line["body"])}})
            return self._send("".join((r if isinstance(r, Raw) else json.dumps(r)) + "\n"
                                      for r in rows).encode(),
                              slow="pieces" if self.server.kind == "slowfile" else None)
        if parts[-2] == "batches" and parts[-1] in state["jobs"]:
            job = state["jobs"][parts[-1]]
            done = time.time() - job["t"] >= self.server.hold
            n = len(state["files"][job["file"]])
            return self._send({"id": parts[-1], "object": "batch",
                               "status": "completed" if done else "in_progress",
                               "request_counts": {"total": n, "completed": n if done else 0,
                                                  "failed": 0},
                               "output_file_id": f"out-{parts[-1]}" if done else None},
                              slow=self.server.kind)
        self._send({"detail": "not found"}, 404)


class Raw(str):
    """An output file's line sent as it is, not as JSON."""


# The failing row's other shapes (a sixth argument): each the list of responses sent for it.
BAD = {
    "deep": lambda r: [Raw("[" * 100_000)],
    "nan": lambda r: [{**r, "body": {**r["body"], "data": [
        {"embedding": [float("nan")] * len(r["body"]["data"][0]["embedding"]), "index": 0}]}}],
    "zero": lambda r: [{**r, "body": {**r["body"], "data": [
        {"embedding": [0.0] * len(r["body"]["data"][0]["embedding"]), "index": 0}]}}],
    "emptydata": lambda r: [{**r, "body": {**r["body"], "data": []}}],
    "strresp": lambda r: ["oops"],
    "strstatus": lambda r: [{**r, "status_code": "200"}],
    "wrongdim": lambda r: [{**r, "body": {**r["body"], "data": [
        {"embedding": [0.5] * 256, "index": 0}]}}],
    "dup": lambda r: [r, r],
}


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[3])), H)
    srv.state, srv.log = sys.argv[1], sys.argv[2]
    srv.hold, srv.fail = float(sys.argv[4]), int(sys.argv[5])
    srv.kind = sys.argv[6] if len(sys.argv) > 6 else "error"
    open(sys.argv[1] + ".port", "w").write(str(srv.server_address[1]))
    srv.serve_forever()
