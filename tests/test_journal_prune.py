"""Stale batch journal records go when the journal is next read: a batch that ended with every
result in the call cache, or one past Anthropic's 29-day retention of results. A batch not
known to have ended stays while it may still run. Checked as a user meets it: records left by
earlier runs, then `ragkit index --contextualizer claude --batch` in a new process."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ragkit.batch_journal import BatchRecord, Journal
from ragkit.cache import CallCache
from ragkit.pricing import Usage

RAGKIT = Path(sys.executable).parent / "ragkit"
API = "https://api.anthropic.com"  # the records of an earlier run online
DAY = 86400


def _key(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _stamp(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def _records(home: Path) -> list[BatchRecord]:
    k1, k2, k3, k4, k5 = (_key(f"request {n}") for n in range(1, 6))
    return [BatchRecord("anthropic", API, "msgbatch_done", [k1, k2], _stamp(3600), "ended"),
            BatchRecord("anthropic", API, "msgbatch_partial", [k1, k3], _stamp(3600), "ended"),
            BatchRecord("anthropic", API, "msgbatch_running", [k1, k2], _stamp(3600),
                        "in_progress"),
            BatchRecord("anthropic", API, "msgbatch_old", [k4], _stamp(30 * DAY),
                        "in_progress"),
            BatchRecord("anthropic", API, "msgbatch_recent", [k5], _stamp(28 * DAY), "ended")]


def _seed(home: Path) -> Path:
    """The journal with the five records, and the call cache holding requests 1 and 2."""
    journal = Journal("anthropic", API, home / "batches" / "anthropic")
    for record in _records(home):
        journal.write(record)
    cache = CallCache(home / "cache" / "calls.sqlite")
    for name in ("request 1", "request 2"):
        cache.put(_key(name), "/v1/messages", "claude-haiku-4-5", {"id": "msg"},
                  Usage(10, 2), priced=True)
    cache.close()
    return journal.folder


def test_a_batch_run_prunes_the_stale_records_and_keeps_the_rest(tmp_path):
    home = tmp_path / "home"
    folder = _seed(home)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d", "title": "Report",
                                "text": "Revenue grew in the third quarter."}) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(home)
    done = subprocess.run([str(RAGKIT), "index", str(docs), "--out", str(tmp_path / "ix"),
                           "--contextualizer", "claude", "--batch", "--embedder", "none"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.stem for p in folder.glob("*.json")) == [
        "msgbatch_partial", "msgbatch_recent", "msgbatch_running"]
    assert (f"journal: removed 2 stale batch record(s) from {folder} (ended with every result "
            f"in the call cache, or past the API's 29-day retention)") in done.stderr


def test_without_a_cache_only_age_prunes(tmp_path):
    folder = _seed(tmp_path / "home")
    journal = Journal("anthropic", API, folder)
    assert [r.id for r in journal.open_batches()] == [
        "msgbatch_recent", "msgbatch_done", "msgbatch_partial", "msgbatch_running"]
    assert journal.pruned == ["msgbatch_old"]
    assert not (folder / "msgbatch_old.json").exists()


def test_a_record_pruned_while_another_run_finishes_it_sends_nothing_again(tmp_path):
    # two runs at once: run 2 holds the submit lock while run 1, already polling, caches the
    # last result of its ended batch. Run 2 must read the journal before the cache: read the
    # other way round, its requests looked uncached, the record then looked collected and was
    # pruned, and run 2 submitted a second batch for answered requests (seen in CI as
    # msgbatch_1 and msgbatch_2 in tests/test_batch_lock.py)
    from ragkit.cache import request_key
    from ragkit.llm import LLM
    from ragkit.message_batches import MessageBatches
    llm = LLM(cache=CallCache(tmp_path / "calls.sqlite"))
    requests = [{"model": "claude-haiku-4-5", "max_tokens": 50,
                 "messages": [{"role": "user", "content": f"question {n}"}]} for n in (1, 2)]
    keys = [request_key("/v1/messages", llm.backend, r) for r in requests]
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
             "content": [{"type": "text", "text": "from run 1"}], "stop_reason": "end_turn",
             "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2}}

    class Racing(Journal):
        def open_batches(self):  # run 1 caches its results just before run 2 reads this
            for key in keys:
                llm.cache.put(key, "/v1/messages", "claude-haiku-4-5", reply, Usage(10, 2),
                              priced=True)
            return super().open_batches()

    journal = Racing("anthropic", llm.backend, tmp_path / "journal",
                     collected=llm.cache.holds)
    journal.write(BatchRecord("anthropic", llm.backend, "msgbatch_1", keys, _stamp(5), "ended"))
    batches = MessageBatches(llm, journal=journal)
    replies = batches.run(requests)
    assert batches.report.created == [] and batches.report.submitted == 0
    assert [r.content[0].text for r in replies] == ["from run 1", "from run 1"]


def test_an_offline_submit_record_left_by_a_kill_is_looked_for_then_sent(tmp_path):
    """A run killed between journaling its submit and sending it leaves a `submitting`
    record: the re-run asks the stand-in's list of batches (it has none), says so and sends
    the requests — the list was a 404 there, and every re-run stopped on it."""
    from ragkit.batch_submit import pending
    from ragkit.cache import request_key
    from ragkit.llm import LLM
    from ragkit.message_batches import BatchOptions, MessageBatches
    llm = LLM(cache=CallCache(tmp_path / "calls.sqlite"))
    requests = [{"model": "claude-haiku-4-5", "max_tokens": 50,
                 "messages": [{"role": "user", "content": f"question {n}"}]} for n in (1, 2)]
    keys = [request_key("/v1/messages", llm.backend, r) for r in requests]
    journal = Journal("anthropic", llm.backend, tmp_path / "journal")
    journal.write(pending(llm.backend, keys, llm.client.messages.batches))
    lines: list[str] = []
    batches = MessageBatches(llm, BatchOptions(log=lines.append), journal=journal)
    replies = batches.run(requests)
    assert len(replies) == 2 and batches.report.submitted == 2
    assert any(line.endswith("that got no answer made no batch; its requests are sent now")
               for line in lines)
    assert not list((tmp_path / "journal").glob("*.json"))


def test_a_batch_another_run_collected_first_is_not_counted_again(tmp_path):
    """Two `--batch` runs at once share one batch; each reported its results as its own
    measured spend — twice the cost of the one batch paid for."""
    from ragkit.cache import request_key
    from ragkit.llm import LLM, UsageLog
    from ragkit.message_batches import MessageBatches
    llm = LLM(cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    requests = [{"model": "claude-haiku-4-5", "max_tokens": 50,
                 "messages": [{"role": "user", "content": f"question {n}"}]} for n in (1, 2)]
    keys = [request_key("/v1/messages", llm.backend, r) for r in requests]
    batch = llm.client.messages.batches.create(
        requests=[{"custom_id": k, "params": r} for k, r in zip(keys, requests)])
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
             "content": [{"type": "text", "text": "from the other run"}],
             "stop_reason": "end_turn", "stop_sequence": None,
             "usage": {"input_tokens": 10, "output_tokens": 2}}
    for key in keys:  # the other run, polling the same batch, collected it a moment earlier
        llm.cache.put(key, "/v1/messages", "claude-haiku-4-5", reply, Usage(10, 2), priced=True)
    runner = MessageBatches(llm, journal=Journal("anthropic", llm.backend, tmp_path / "j"))
    answers: dict = {}
    runner._collect(BatchRecord("anthropic", llm.backend, batch.id, keys),
                    dict(zip(keys, requests)), answers, None)
    assert runner.report.usage == Usage() and runner.report.succeeded == 0
    assert [answers[k].content[0].text for k in keys] == ["from the other run"] * 2
    assert llm.usage.models["claude-haiku-4-5"].cache_hits == 2
