"""The claude contextualizer end to end through the real SDK against local stand-ins."""
from __future__ import annotations

import json
import threading
import time

import httpx2
import pytest

from ragkit import standin
from ragkit.cache import CallCache
from ragkit.cli import main
from ragkit.contextualize import get_contextualizer
from ragkit.contextualize.claude import ClaudeContextualizer
from ragkit.contextualize.prompts import CHUNK_CONTEXT_PROMPT, load_prompt
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.llm import LLM, UsageLog, make_client
from ragkit.pipeline import IndexConfig, Pipeline

TEXT = "# Widget manual\n\n## Setup\n\nPlug it in.\n\n## Care\n\nWipe it dry."
DOC = Document("widget", TEXT, title="Widget manual")
PIECES = ["# Widget manual", "## Setup\n\nPlug it in.", "Wipe it dry."]
CHUNKS = [Chunk(f"widget#{i}", "widget", p, start=TEXT.index(p), end=TEXT.index(p) + len(p))
          for i, p in enumerate(PIECES)]
# structural_context of each chunk from the document text alone (title = first heading):
EXPECTED = ["Document: Widget manual.",
            "Document: Widget manual. Section: Widget manual > Setup.",  # it opens on it
            "Document: Widget manual. Section: Widget manual > Care."]


class Recorder:
    """The stand-in behind a transport that logs requests and can fail on cue."""

    def __init__(self, fail_after: int | None = None, slow_first: float = 0.0,
                 statuses: tuple[int, ...] = ()) -> None:
        self.events, self.bodies, self.replies = [], [], 0
        self.fail_after, self.slow_first, self.statuses = fail_after, slow_first, list(statuses)
        self.lock = threading.Lock()

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.read())
        with self.lock:
            if self.statuses:
                return httpx2.Response(self.statuses.pop(0), headers={"retry-after-ms": "1"},
                                       json={"type": "error", "error": {
                                           "type": "overloaded_error", "message": "busy"}})
            if self.fail_after is not None and self.replies >= self.fail_after:
                raise httpx2.ConnectError("stand-in stopped")
            self.bodies.append((request.url.path, body))
        tag = request.url.path.rsplit("/", 1)[-1]
        if tag == "messages":
            tag = next(i for i, p in enumerate(PIECES)
                       if f"<chunk>\n{p}\n</chunk>" in body["messages"][0]["content"][1]["text"])
        self.events.append(f"request {tag}")
        if tag == 0:
            time.sleep(self.slow_first)
        status, reply = standin.respond(request.url.path, body)
        with self.lock:
            self.replies += 1
            self.events.append(f"reply {tag}")
        return httpx2.Response(status, json=reply)

    def messages(self) -> list[dict]:
        return [b for path, b in self.bodies if path == "/v1/messages"]


def _contextualizer(tmp_path, recorder, **options):
    client = make_client(max_retries=2, transport=httpx2.MockTransport(recorder))
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    return ClaudeContextualizer(llm=llm, log=None, **options)


def test_requests_follow_the_cookbook_and_contexts_come_back(tmp_path):
    recorder = Recorder()
    out = _contextualizer(tmp_path, recorder)(DOC, CHUNKS)
    assert [c.context for c in out] == EXPECTED
    assert [c.text for c in out] == PIECES
    assert len(recorder.messages()) == 3
    for body, piece in zip(sorted(recorder.messages(), key=lambda b: str(b)), PIECES):
        assert body["model"] == "claude-haiku-4-5" and body["temperature"] == 0.0
        document, chunk = body["messages"][0]["content"]
        assert document == {"type": "text", "text": f"\n<document>\n{TEXT}\n</document>\n",
                            "cache_control": {"type": "ephemeral"}}
        assert "cache_control" not in chunk
    chunks = {b["messages"][0]["content"][1]["text"] for b in recorder.messages()}
    assert chunks == {CHUNK_CONTEXT_PROMPT.replace("{chunk_content}", p) for p in PIECES}


def test_first_chunk_is_answered_before_the_rest_fan_out(tmp_path):
    recorder = Recorder(slow_first=0.05)
    _contextualizer(tmp_path, recorder, workers=4)(DOC, CHUNKS)
    assert recorder.events[:4] == ["request count_tokens", "reply count_tokens",
                                   "request 0", "reply 0"]
    assert sorted(recorder.events[4:]) == ["reply 1", "reply 2", "request 1", "request 2"]


def test_second_run_makes_zero_requests(tmp_path):
    _contextualizer(tmp_path, Recorder())(DOC, CHUNKS)
    again = Recorder()
    contextualizer = _contextualizer(tmp_path, again)
    assert [c.context for c in contextualizer(DOC, CHUNKS)] == EXPECTED
    assert again.bodies == []
    assert contextualizer.llm.usage.models["claude-haiku-4-5"].cache_hits == 3


def test_429_then_500_then_success(tmp_path):
    recorder = Recorder(statuses=(429, 500))
    assert [c.context for c in _contextualizer(tmp_path, recorder)(DOC, CHUNKS)] == EXPECTED


def test_an_interrupted_run_resumes_with_only_the_missing_calls(tmp_path):
    broken = Recorder(fail_after=2)  # count_tokens and the first chunk, then the link dies
    with pytest.raises(RagkitError, match="widget: chunk widget#\\d: .*cannot reach the "
                                          "Anthropic API.*rerun to continue"):
        _contextualizer(tmp_path, broken)(DOC, CHUNKS)
    resumed = Recorder()
    assert [c.context for c in _contextualizer(tmp_path, resumed)(DOC, CHUNKS)] == EXPECTED
    assert [path for path, _ in resumed.bodies] == ["/v1/messages", "/v1/messages"]


def test_short_documents_are_reported_as_uncached(tmp_path):
    contextualizer = _contextualizer(tmp_path, Recorder())
    contextualizer(DOC, CHUNKS)
    # document block: 12 bytes "\n<document>\n" + 61 of TEXT + 13 "\n</document>\n" = 86
    # bytes → ceil(86 / 4) = 22 tokens by the stand-in's rule
    assert contextualizer.doc_tokens == {"widget": 22}
    assert contextualizer.notes == ["1 document(s) below claude-haiku-4-5's minimum cacheable "
                                    "length (4096 tokens) ran uncached: widget (22 tokens)"]


def test_on_a_terminal_notes_are_stderr_lines_and_stdout_stays_clean(tmp_path, capsys):
    """The default `log` off a Jupyter kernel: each note a line on stderr (in a notebook it is
    the cell's plain output, tests/test_progress.py); stdout is a command's data."""
    client = make_client(max_retries=2, transport=httpx2.MockTransport(Recorder()))
    llm = LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    ClaudeContextualizer(llm=llm)(DOC, CHUNKS)
    assert capsys.readouterr() == ("", "1 document(s) below claude-haiku-4-5's minimum "
                                   "cacheable length (4096 tokens) ran uncached: widget "
                                   "(22 tokens)\n")


def test_a_document_over_the_context_window_is_split_never_truncated(tmp_path):
    recorder = Recorder()
    # 22 tokens over 61 characters; longest chunk 21 chars ≈ 7.6 tokens. Budget = 323 - 100
    # reply - 7.6 chunk - 200 room = 15.4 < 22: parts [0, 1] (38 chars ≈ 13.7) and [2].
    contextualizer = _contextualizer(tmp_path, recorder, context_window=323, max_tokens=100)
    out = contextualizer(DOC, CHUNKS)
    assert [c.text for c in out] == PIECES
    assert any("contextualized in 2 parts" in note for note in contextualizer.notes)
    assert len(recorder.messages()) == 3
    for body in recorder.messages():
        document, chunk = (b["text"] for b in body["messages"][0]["content"])
        piece = chunk.split("<chunk>\n")[1].split("\n</chunk>")[0]
        assert piece in PIECES and piece in document  # each chunk sent whole, with its part
        assert document != f"\n<document>\n{TEXT}\n</document>\n"


def test_a_user_prompt_replaces_the_instruction_and_changes_the_key(tmp_path):
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("Glossary: widget = small device.\n<chunk>\n{chunk_content}\n"
                           "</chunk>\nSituate it.")
    _contextualizer(tmp_path, Recorder())(DOC, CHUNKS)
    custom = Recorder()
    _contextualizer(tmp_path, custom, prompt=load_prompt(prompt_file))(DOC, CHUNKS)
    assert len(custom.messages()) == 3
    assert all(b["messages"][0]["content"][1]["text"].startswith("Glossary: widget")
               for b in custom.messages())
    bad = tmp_path / "bad.txt"
    bad.write_text("no placeholder here")
    with pytest.raises(RagkitError, match="bad.txt: field '{chunk_content}': missing"):
        load_prompt(bad)


def test_unknown_model_is_refused_before_any_request(tmp_path):
    recorder = Recorder()
    with pytest.raises(RagkitError, match="unknown model 'claude-nope'"):
        _contextualizer(tmp_path, recorder, model="claude-nope")
    assert recorder.bodies == []


def test_a_reply_without_text_stops_the_run_and_is_not_cached(tmp_path):
    def empty(request):
        path = request.url.path
        status, reply = standin.respond(path, json.loads(request.read()))
        if path == "/v1/messages":
            reply["content"] = []
        return httpx2.Response(status, json=reply)

    with pytest.raises(RagkitError, match="malformed reply.*no text block"):
        _contextualizer(tmp_path, empty)(DOC, CHUNKS)
    assert [s.endpoint for s in CallCache(tmp_path / "calls.sqlite").stats()] == \
        ["/v1/messages/count_tokens"]


def test_pipeline_build_writes_claude_contexts_to_chunks_jsonl(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    config = IndexConfig(chunk_size=16, overlap=0, contextualizer="claude", embedder=None)
    pipeline = Pipeline.build([DOC], config, chunks=CHUNKS, progress=False)
    pipeline.save(tmp_path / "idx")
    rows = [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]
    assert [r["context"] for r in rows] == EXPECTED
    assert pipeline.chunks[1].indexed_text == f"{EXPECTED[1]}\n\n{PIECES[1]}"
    assert callable(get_contextualizer("claude"))
    old = {"chunk_size": 16, "overlap": 0, "contextualizer": "structural", "tokenizer": "auto",
           "embedder": None, "window": 96}  # an index.json written before context_model
    assert IndexConfig(**old).context_model is None


def test_cli_against_a_loopback_server_works_as_against_the_api(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "widget", "title": "Widget manual", "text": TEXT}) + "\n")
    seen = []

    def handler(path, body):
        seen.append(path)
        return standin.respond(path, body)

    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    with standin.serve(handler) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        argv = ["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none",
                "--contextualizer", "claude", "--chunk-size", "16", "--overlap", "0"]
        assert main(argv) == 0
        first = len(seen)
        assert main(argv) == 0
    assert first >= 2 and seen[0] == "/v1/messages/count_tokens" and len(seen) == first
    out = capsys.readouterr()
    assert "through the Anthropic API" in out.err
    assert "(answered by the offline stand-in): 0 requests, " in out.out
    assert "; estimated tokens in " in out.out and out.out.count("; no cost") >= 1
    rows = [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]
    assert all(r["context"].startswith("Document: Widget manual.") for r in rows)


def test_cli_with_a_rejected_key_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "widget", "text": TEXT}) + "\n")

    def handler(path, body):
        return 401, {"type": "error", "error": {"type": "authentication_error",
                                                "message": "invalid x-api-key"}}

    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123")
    with standin.serve(handler) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder",
                     "none", "--contextualizer", "claude"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ragkit: error: widget: counting tokens: ") and "rejected the key" in err
    assert "sk-ant-secret-123" not in err
    assert not (tmp_path / "idx").exists()


def test_project_cost_counts_the_document_block_and_bills_short_documents_uncached():
    from ragkit.contextualize.claude import project_cost
    doc = Document("d", "x" * 100)
    chunks = [Chunk("d#0", "d", "a" * 10), Chunk("d#1", "d", "b" * 20)]
    words = len  # one token per character, so every count below is a string length
    table = project_cost([doc], chunks, "claude-haiku-4-5", prompt="Q{chunk_content}",
                         context_tokens=10, count=words)
    # document block "\n<document>\n" + 100 x + "\n</document>\n" = 12 + 100 + 13 = 125 tokens,
    # under Haiku 4.5's 4096 minimum → uncached: 2 calls × 125 input, chunks 10 and 20,
    # instruction "Q" = 1 each, 10 output tokens each at $5/M:
    # (250 + 11 + 21)·1 + 20·5 = 282 + 100 = 382 µ$
    assert table.cached == table.uncached == pytest.approx(382e-6)
    assert (table.documents, table.below_cache_minimum, table.document_tokens) == (1, 1, 125)


def test_projection_table_has_one_row_per_model_with_whole_counts():
    from ragkit.contextualize.claude import projection_table
    doc = Document("d", "x" * 100)
    table = projection_table([doc], [Chunk("d#0", "d", "a" * 10)], count=len)
    assert list(table.index) == ["claude-haiku-4-5", "claude-3-haiku-20240307"]
    assert list(table.columns) == ["cached $", "uncached $", "batch $", "batch + cache $",
                                   "documents", "under cache minimum", "document tokens"]
    assert table["batch $"].tolist() == pytest.approx((table["uncached $"] / 2).tolist())
    assert table["batch + cache $"].tolist() == pytest.approx((table["cached $"] / 2).tolist())
    assert table["under cache minimum"].tolist() == [1, 1]  # 125 tokens: under both minimums
    assert str(table["documents"].dtype) == "int64"
