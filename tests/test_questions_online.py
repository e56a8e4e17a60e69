"""`ragkit questions generate` with a key, against a loopback stand-in of the Messages API:
the SDK's requests as the API sees them, the measured cost, and a rerun that sends nothing."""
from __future__ import annotations

import json
import time
from pathlib import Path

from ragkit import standin
from ragkit.cli import main
from ragkit.contextualize.claude import document_block
from ragkit.money import dollars
from ragkit.pricing import Usage, cost
from ragkit.questions.prompts import ANSWER_HEADER, CLOSED_BOOK_HEADER, WRITE_HEADER
from ragkit.text_stats import request_tokens
from questions_corpus import GATEWAY, REFUNDS, write_corpus

BODIES = {"refunds.md": REFUNDS.split("---\n", 2)[2].lstrip("\n"),
          "gateway.md": GATEWAY.split("---\n", 2)[2].lstrip("\n")}


def test_online_requests_cache_each_document_and_a_rerun_sends_nothing(tmp_path, monkeypatch,
                                                                       capsys):
    docs = write_corpus(tmp_path / "docs")
    out = tmp_path / "golden.jsonl"
    seen: list[tuple[str, dict]] = []
    spent: list[Usage] = []

    events: list[tuple[str, str]] = []  # (request | reply, document) of each write call

    def handler(path: str, body: dict):
        block = body["messages"][0]["content"][0] if path == "/v1/messages" else {}
        doc = block.get("text", "")[:40] if isinstance(block, dict) and \
            "cache_control" in block else ""
        if doc:
            events.append(("request", doc))
            time.sleep(0.05)  # a reply takes a moment: a second request would be sent now
        status, reply = standin.respond(path, body)
        if doc:
            events.append(("reply", doc))
        seen.append((path, body))
        if status == 200 and path == "/v1/messages":  # an id the API would give: priced
            reply = {**reply, "id": "msg_loopback_" + reply["id"][-12:]}
            spent.append(Usage.of(reply["usage"]))
        return status, reply

    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    argv = ["questions", "generate", str(docs), "--out", str(out), "--n", "4", "--kinds",
            "lexical=1,contextual=1,multi-chunk=1,unanswerable=1", "--chunk-size", "48",
            "--overlap", "8", "--embedder", "none"]
    with standin.serve(handler) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert main(argv) == 0
        first = capsys.readouterr()
        calls = len(seen)
        assert main(argv) == 0
        second = capsys.readouterr()
    assert len(seen) == calls == 11  # 4 written, 4 answered back, 3 closed-book (not the
    # unanswerable one); the rerun: none
    assert f"claude-haiku-4-5 writes them through the Anthropic API at {url}" in first.err
    assert f"measured: {dollars(cost(sum(spent, Usage()), 'claude-haiku-4-5'))}" in first.out
    assert "near-duplicate (not checked)" in first.out
    assert "claude-haiku-4-5: 0 requests, 11 from the call cache" in second.out
    assert "measured: $0.00" in second.out

    for doc in {d for _, d in events}:  # each document's first question is answered, so its
        mine = [e for e, d in events if d == doc]  # cache entry exists, before the rest go
        assert mine[:2] == ["request", "reply"], mine
    bodies = [b for path, b in seen if path == "/v1/messages"]
    kinds = [next(h for h in (WRITE_HEADER, ANSWER_HEADER, CLOSED_BOOK_HEADER)
                  if h in json.dumps(b["messages"])) for b in bodies]
    assert sorted(kinds) == sorted([WRITE_HEADER] * 4 + [ANSWER_HEADER] * 4
                                   + [CLOSED_BOOK_HEADER] * 3)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    documents = {r["id"]: r["source"]["doc_id"] for r in rows}
    for body, kind in zip(bodies, kinds):
        assert body["model"] == "claude-haiku-4-5" and body["temperature"] == 0.0
        if kind != WRITE_HEADER:  # the round trip and the closed book see no document
            assert "<document>" not in json.dumps(body["messages"])
            continue
        block, prompt = body["messages"][0]["content"]
        doc = next(d for d, text in BODIES.items() if block["text"] == f"\n<document>\n{text}\n"
                                                                        f"</document>\n")
        assert block == document_block(BODIES[doc])
        assert block["cache_control"] == {"type": "ephemeral"}  # written once, read after
        assert prompt["text"].startswith(WRITE_HEADER) and "cache_control" not in prompt
    assert {r["generator"] for r in rows} == {"claude-haiku-4-5"}
    assert set(documents.values()) <= set(BODIES)


def test_kill_9_mid_run_leaves_no_file_and_the_rerun_resumes_from_the_cache(tmp_path):
    """A generate killed with -9 writes nothing; run again, it pays only for what the killed
    run had not received (each reply is committed to the call cache as it arrives)."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    docs = write_corpus(tmp_path / "docs")
    out = tmp_path / "golden.jsonl"
    answered, release = threading.Semaphore(0), threading.Event()
    count = iter(range(10**6))

    def handler(path: str, body: dict):
        if next(count) >= 3:  # the fourth request on hangs until the first run is killed
            release.wait(timeout=120)
        reply = standin.respond(path, body)
        answered.release()
        return reply

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(RAGKIT_HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="x")
    argv = [str(Path(sys.executable).parent / "ragkit"), "questions", "generate", str(docs),
            "--out", str(out), "--n", "4", "--kinds",
            "lexical=1,contextual=1,multi-chunk=1,unanswerable=1", "--chunk-size", "48",
            "--overlap", "8", "--embedder", "none"]
    with standin.serve(handler) as url:
        env["ANTHROPIC_BASE_URL"] = url
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(3):  # three replies sent, the rest hang; then the process dies
            assert answered.acquire(timeout=60)
        time.sleep(1.0)  # the client stores what it received
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        release.set()
        assert not out.exists()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("claude-haiku-4-5"))
    sent, cached = (int(w) for w in line.split(": ", 1)[1].split(";")[0].split()[0::2][:2])
    assert (sent, cached) == (8, 3), line
    assert len(out.read_text().splitlines()) == 4


def test_a_rejected_key_is_one_line_without_the_key_and_nothing_is_written(tmp_path,
                                                                           monkeypatch, capsys):
    docs = write_corpus(tmp_path / "docs")
    out = tmp_path / "golden.jsonl"

    def handler(path: str, body: dict):
        return 401, {"type": "error", "error": {"type": "authentication_error",
                                                "message": "invalid x-api-key"}}

    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123")
    with standin.serve(handler) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert main(["questions", "generate", str(docs), "--out", str(out), "--n", "2",
                     "--embedder", "none", "--chunk-size", "48", "--overlap", "8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ragkit: error: ") and ": writing a question about " in err
    assert "rejected the key in ANTHROPIC_API_KEY" in err and "sk-ant-secret-123" not in err
    assert not out.exists()


def three_lexical(tmp_path: Path, monkeypatch, handler, docs: Path) -> int:
    """`ragkit questions generate DOCS --n 3 --kinds lexical` against a loopback stand-in
    answering with `handler`, into tmp_path/g.jsonl; the exit status."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    with standin.serve(handler) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        return main(["questions", "generate", str(docs), "--out", str(tmp_path / "g.jsonl"),
                     "--n", "3", "--kinds", "lexical", "--embedder", "none"])


def test_a_document_longer_than_the_context_window_sends_the_part_around_each_passage(
        tmp_path, monkeypatch, capsys):
    """A folder's 1 MB log (a thesis, a transcript: over 200,000 tokens) went whole into every
    write request: the API refuses a prompt longer than the model's window, so the first
    request failed and `ragkit questions generate` stopped. Each request now sends the part
    of the document around its passage, and fits."""
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# Sensor log\n\n" + "\n\n".join(
        f"Sensor {i} on vineyard row {i % 40} read {i * 7 % 1000} units of moisture at dawn "
        f"and {i * 11 % 1000} units at dusk." for i in range(12_000)) + "\n"
    (docs / "log.md").write_text(text)
    body_text = text.split("\n\n", 1)[1]  # the title line is the document's, kept whole
    window = 200_000  # claude-haiku-4-5's context window
    sizes: list[int] = []

    def handler(path: str, body: dict):
        tokens = request_tokens(body)
        if path == "/v1/messages":
            sizes.append(tokens + body["max_tokens"])
            if tokens + body["max_tokens"] > window:  # as the API refuses it
                return 400, {"type": "error", "error": {
                    "type": "invalid_request_error",
                    "message": f"prompt is too long: {tokens} tokens > {window} maximum"}}
        return standin.respond(path, body)

    assert three_lexical(tmp_path, monkeypatch, handler, docs) == 0
    err = capsys.readouterr().err
    assert len(sizes) == 9 and max(sizes) <= window  # 3 written, answered back, closed-book
    (line,) = [x for x in err.splitlines() if x.startswith("questions: log.md: ")]
    tokens = request_tokens({"messages": [{"role": "user", "content": [
        document_block(text)]}]})
    assert line == (f"questions: log.md: {tokens:,} tokens exceed what claude-haiku-4-5's "
                    f"context window (200,000 tokens) leaves for a document beside the reply "
                    f"and the passages: each question sends the part around its passage (3 "
                    f"parts of whole consecutive chunks)")
    rows = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["golden"][0]["span"] in body_text for r in rows)


def test_a_failed_token_count_of_a_long_document_names_the_document(tmp_path, monkeypatch,
                                                                     capsys):
    """A document past the context window is counted before any question is written; a
    count the API refused said "counting a document's tokens: ..." without naming which of
    the folder's documents. It names it, and nothing is written."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "log.md").write_text("# Sensor log\n\n" + "\n\n".join(
        f"Sensor {i} on vineyard row {i % 40} read {i * 7 % 1000} units of moisture at dawn."
        for i in range(12_000)) + "\n")

    def handler(path: str, body: dict):
        if path == "/v1/messages/count_tokens":
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "counting is down"}}
        return standin.respond(path, body)

    assert three_lexical(tmp_path, monkeypatch, handler, docs) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ragkit: error: log.md: counting its tokens: the Anthropic API refused the request (400 "
        "invalid_request_error: counting is down)")
    assert not (tmp_path / "g.jsonl").exists()
