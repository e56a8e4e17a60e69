"""Batch prices, the batch runner's limits and journal, and the offline stand-in's batches."""
from __future__ import annotations

import json

import pytest

from ragkit import standin
from ragkit.batch_journal import BatchRecord, Journal
from ragkit.cache import CallCache
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.llm import LLM, Usage, UsageLog, make_client
from ragkit.pricing import batch_cost, seed_cost_table

HAIKU = "claude-haiku-4-5"


def test_seed_cost_table_has_batch_and_batch_plus_cache_columns():
    table = seed_cost_table()
    # half of the interactive columns (tests/test_llm.py): 11.6875 / 2 and 3.8375 / 2
    assert table["batch $/M doc tokens"].round(5).tolist() == [1.46094, 1.46094, 5.84375,
                                                                5.84375]
    assert table["batch + cache $/M doc tokens"].round(5).tolist() == [0.51094, 0.49594,
                                                                        1.91875, 2.29375]


def test_batch_cost_halves_every_counter():
    usage = Usage(1000, 100, 2000, 4000)  # in $1, out $5, write $1.25, read $0.10 per M
    assert batch_cost(usage, HAIKU) == pytest.approx((1000 + 500 + 2500 + 400) / 2e6)


def test_run_summary_prices_batch_results_at_batch_prices():
    log = UsageLog()
    log.record(HAIKU, Usage(1000, 10), cached=False, priced=True, batch=True)
    log.record(HAIKU, Usage(1000, 10), cached=False, priced=True)
    assert log.dollars(HAIKU) == pytest.approx(1050e-6 / 2 + 1050e-6)
    assert "(1 request in batches, at batch prices)" in log.summary()
    assert "$0.00158" in log.summary()


def test_requests_split_at_the_count_and_size_limits():
    from ragkit.message_batches import split
    items = [{"custom_id": f"r{i}", "params": {"x": "a" * 100}} for i in range(5)]
    assert [len(g) for g in split(items, max_requests=2)] == [2, 2, 1]
    one = len(json.dumps(items[0]).encode()) + 2
    assert [len(g) for g in split(items, max_bytes=3 * one)] == [3, 2]


def _standin_llm(tmp_path) -> LLM:
    return LLM(make_client(max_retries=0, transport=standin.transport()),
               cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())


def test_the_offline_stand_in_answers_a_batch_as_it_answers_one_by_one(tmp_path, monkeypatch):
    from ragkit.contextualize.batch import BatchContextualizer
    from ragkit.contextualize.claude import ClaudeContextualizer
    from ragkit.message_batches import BatchOptions
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    doc = Document("acme", "# Acme report\n\n## Revenue\n\nRevenue grew 3 %.\n\n## Costs\n\n"
                   "Costs fell.", title="Acme Q2")
    chunks = [Chunk("acme#0", "acme", "Revenue grew 3 %.", "", 26, 43),
              Chunk("acme#1", "acme", "Costs fell.", "", 54, 65)]
    lines: list[str] = []
    batch = BatchContextualizer(llm=_standin_llm(tmp_path), log=lines.append,
                                options=BatchOptions(poll=0.1, log=lines.append))
    got = batch(doc, chunks)
    plain = ClaudeContextualizer(llm=LLM(make_client(max_retries=0,
                                                     transport=standin.transport()),
                                         cache=None, usage=UsageLog()), log=None)(doc, chunks)
    assert [c.context for c in got] == [c.context for c in plain] and got[0].context
    assert any("offline stand-in, no cost" in line for line in lines)
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))


def test_the_stand_in_refuses_a_custom_id_the_api_refuses(tmp_path):
    client = make_client(max_retries=0, transport=standin.transport())
    with pytest.raises(Exception, match="custom_id"):
        client.messages.batches.create(requests=[{"custom_id": "has space", "params": {
            "model": HAIKU, "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}}])


def test_a_damaged_journal_record_is_one_line_naming_the_file(tmp_path):
    journal = Journal("anthropic", "http://x", tmp_path)
    journal.write(BatchRecord("anthropic", "http://x", "msgbatch_1", ["a"]))
    assert [r.id for r in journal.open_batches()] == ["msgbatch_1"]
    assert Journal("anthropic", "http://other", tmp_path).open_batches() == []
    (tmp_path / "msgbatch_2.json").write_text("{not json")
    with pytest.raises(RagkitError, match=r"msgbatch_2\.json: not a readable batch record"):
        journal.open_batches()


def test_batch_without_a_paid_api_to_batch_is_refused(tmp_path, capsys):
    from ragkit.cli import main
    docs = tmp_path / "d.jsonl"
    docs.write_text(json.dumps({"id": "a", "text": "hello"}) + "\n")
    assert main(["index", str(docs), "--out", str(tmp_path / "i"), "--batch"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ragkit: error: --batch sends Claude's context requests or Voyage's embeddings through "
        "their batch APIs: it needs --contextualizer claude or --embedder voyage:MODEL / "
        "voyage-context:MODEL")
    assert not (tmp_path / "i").exists()


def test_batch_round_trip_offline_gives_the_one_by_one_contexts(monkeypatch, tmp_path):
    from ragkit.contextualize.batch import batch_round_trip
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    doc = Document("acme", "# Acme\n\n## Revenue\n\nRevenue grew 3 %.", title="Acme Q2")
    chunks = [Chunk("acme#0", "acme", "Revenue grew 3 %.", "", 21, 38)]
    assert batch_round_trip(doc, chunks) == ("1 chunks of acme: 1 batch, 1 results; the same "
                                             "contexts as one by one: True")


def test_a_journaled_batch_the_api_no_longer_knows_is_sent_again_once(tmp_path, monkeypatch):
    """The stand-in forgets its batches with its process, as the API does after 29 days."""
    from ragkit.cache import request_key
    from ragkit.contextualize.batch import BatchContextualizer
    from ragkit.contextualize.claude import build_request
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    llm = _standin_llm(tmp_path)
    doc = Document("acme", "# Acme\n\n## Revenue\n\nRevenue grew 3 %.", title="Acme Q2")
    chunk = Chunk("acme#0", "acme", "Revenue grew 3 %.", "", 21, 38)
    key = request_key("/v1/messages", llm.backend,
                      build_request("claude-haiku-4-5", doc.text, chunk.text))
    journal = Journal("anthropic", llm.backend)
    journal.write(BatchRecord("anthropic", llm.backend, "msgbatch_gone", [key]))
    lines: list[str] = []
    made = BatchContextualizer(llm=llm, log=lines.append, options={"log": lines.append,
                                                                   "poll": 0.1})
    assert made(doc, [chunk])[0].context
    assert made.report.resumed == ["msgbatch_gone"] and len(made.report.created) == 1
    assert made.report.retried == 0 and journal.open_batches() == []
    assert any("msgbatch_gone: unknown to offline stand-in" in line for line in lines)


def test_an_interactive_run_after_a_batch_run_sends_nothing(tmp_path, monkeypatch):
    from ragkit.contextualize.batch import BatchContextualizer
    from ragkit.contextualize.claude import ClaudeContextualizer
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    llm = _standin_llm(tmp_path)
    doc = Document("acme", "# Acme\n\n## Revenue\n\nRevenue grew 3 %.\n\nCosts fell.")
    chunks = [Chunk("acme#0", "acme", "Revenue grew 3 %.", "", 21, 38),
              Chunk("acme#1", "acme", "Costs fell.", "", 40, 51)]
    batched = BatchContextualizer(llm=llm, log=None, options={"log": lambda line: None})(
        doc, chunks)
    later = LLM(llm.client, cache=llm.cache, usage=UsageLog())
    again = ClaudeContextualizer(llm=later, log=None)(doc, chunks)
    assert [c.context for c in again] == [c.context for c in batched]
    row = later.usage.models[HAIKU]
    assert (row.requests, row.cache_hits) == (0, 2)
