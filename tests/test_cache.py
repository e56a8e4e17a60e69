"""The paid-call cache: keys, persistence, stats, clearing, and zero requests on a rerun."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit import standin
from ragkit.cache import CallCache, request_key
from ragkit.cli import main
from ragkit.documents import RagkitError
from ragkit.llm import LLM, Usage, UsageLog, make_client

HAIKU = "claude-haiku-4-5"
PARAMS = {"model": HAIKU, "max_tokens": 100, "temperature": 0.0,
          "messages": [{"role": "user", "content": "hi"}]}


def test_key_is_sha256_of_canonical_json():
    expected = hashlib.sha256(
        b'{"a":1,"backend":"b","endpoint":"/v1/messages","model":"m"}').hexdigest()
    assert request_key("/v1/messages", "b", {"model": "m", "a": 1}) == expected
    assert request_key("/v1/messages", "b", {"a": 1, "model": "m"}) == expected


@pytest.mark.parametrize("change", [
    {"temperature": 0.5}, {"model": "claude-3-haiku-20240307"}, {"system": "be brief"},
    {"tools": [{"name": "t", "input_schema": {}}]}, {"tool_choice": {"type": "any"}},
])
def test_every_parameter_is_part_of_the_key(change):
    assert request_key("/v1/messages", "b", {**PARAMS, **change}) != \
        request_key("/v1/messages", "b", PARAMS)


def test_endpoint_backend_and_model_are_required_parts_of_the_key():
    base = request_key("/v1/messages", "b", PARAMS)
    assert request_key("/v1/messages/count_tokens", "b", PARAMS) != base
    assert request_key("/v1/messages", "https://api.anthropic.com/", PARAMS) != base
    with pytest.raises(RagkitError, match="needs a model"):
        request_key("/v1/messages", "b", {"messages": []})


def test_entries_persist_and_stats_count_hits_misses_tokens_and_dollars(tmp_path):
    path = tmp_path / "calls.sqlite"
    cache = CallCache(path)
    cache.put("k1", "/v1/messages", HAIKU, {"x": 1}, Usage(1000, 100, 0, 0), priced=True)
    cache.put("k2", "/v1/messages", "claude-3-haiku-20240307", {"x": 2}, Usage(10, 1, 0, 0),
              priced=True)
    cache.close()
    cache = CallCache(path)  # a new process would see the same
    assert cache.get("k1").reply == {"x": 1}
    assert cache.get("k1").usage == Usage(1000, 100, 0, 0)
    assert cache.get("missing") is None
    row = next(s for s in cache.stats() if s.model == HAIKU)
    assert (row.misses, row.hits) == (1, 2)
    # spent: 1000·1 + 100·5 = 1500 µ$; saved: two hits of the same = 3000 µ$
    assert row.dollars_spent == pytest.approx(0.0015)
    assert row.dollars_saved == pytest.approx(0.003)
    assert row.saved == Usage(2000, 200, 0, 0)
    assert cache.clear(HAIKU) == 1
    assert [s.model for s in cache.stats()] == ["claude-3-haiku-20240307"]
    assert cache.clear() == 1 and cache.stats() == []


def test_refuses_to_use_a_file_that_is_not_a_cache(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(RagkitError, match="is not a ragkit call cache"):
        CallCache(notes)
    assert notes.read_text() == "my notes"


def test_a_cache_file_given_as_a_link_is_used_where_it_points(tmp_path):
    """sqlite writes the cache in place, through a link: a calls.sqlite linked to a bigger
    disk was refused as "a symbolic link ... give that file itself", and a link to a cache
    not made yet was a FileNotFoundError traceback."""
    elsewhere = tmp_path / "big" / "calls.sqlite"
    elsewhere.parent.mkdir()
    cache = CallCache(elsewhere)
    cache.put("k1", "/v1/messages", HAIKU, {"x": 1}, Usage(10, 1, 0, 0), priced=True)
    cache.close()
    link = tmp_path / "calls.sqlite"
    link.symlink_to(elsewhere)
    cache = CallCache(link)
    assert cache.get("k1").reply == {"x": 1}
    cache.close()
    assert link.is_symlink()
    dangling = tmp_path / "new.sqlite"
    dangling.symlink_to(tmp_path / "big" / "new.sqlite")
    cache = CallCache(dangling)
    cache.put("k2", "/v1/messages", HAIKU, {"x": 2}, Usage(10, 1, 0, 0), priced=True)
    cache.close()
    assert dangling.is_symlink() and (tmp_path / "big" / "new.sqlite").is_file()


def test_a_link_to_a_cache_in_a_folder_not_made_yet_makes_that_folder(tmp_path):
    """A calls.sqlite linked to a folder on another disk that does not exist yet was "the
    call cache cannot be used (unable to open database file)": only the link's own folder
    was made."""
    link = tmp_path / "home" / "calls.sqlite"
    link.parent.mkdir()
    target = tmp_path / "big" / "ragkit" / "calls.sqlite"
    link.symlink_to(target)
    cache = CallCache(link)
    cache.put("k", "/v1/messages", HAIKU, {"x": 1}, Usage(10, 1, 0, 0), priced=True)
    cache.close()
    assert link.is_symlink() and target.is_file()
    assert CallCache(target).get("k").reply == {"x": 1}

def _counting_llm(tmp_path, log):
    sent = []

    def handler(path, body):
        sent.append(path)
        return standin.respond(path, body)

    client = make_client(max_retries=0, transport=standin.transport(handler))
    return LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=log), sent


def test_second_identical_call_sends_nothing_and_counts_as_saved(tmp_path):
    log = UsageLog()
    llm, sent = _counting_llm(tmp_path, log)
    first = llm.create(**PARAMS)
    again = llm.create(**PARAMS)
    assert sent == ["/v1/messages"]
    assert again.to_dict() == first.to_dict()
    assert again.content[0].text == standin.NO_RULE
    row = log.models[HAIKU]
    assert (row.requests, row.cache_hits) == (1, 1)
    assert row.saved == row.spent == Usage.of(first.usage)
    fresh, sent2 = _counting_llm(tmp_path, UsageLog())  # a later run, same cache file
    fresh.create(**PARAMS)
    assert fresh.count_tokens(model=HAIKU, messages=PARAMS["messages"]) == 1
    fresh.count_tokens(model=HAIKU, messages=PARAMS["messages"])
    assert sent2 == ["/v1/messages/count_tokens"]


def test_a_reply_rejected_by_its_check_is_not_cached(tmp_path):
    llm, sent = _counting_llm(tmp_path, UsageLog())
    with pytest.raises(RagkitError, match="malformed reply .*no good"):
        llm.create(check=lambda message: "no good", **PARAMS)
    llm.create(**PARAMS)
    assert sent == ["/v1/messages", "/v1/messages"]


def test_cli_cache_stats_and_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    cache = CallCache()
    assert cache.path == tmp_path / "cache" / "calls.sqlite"
    cache.put("k1", "/v1/messages", HAIKU, {}, Usage(2000, 0, 0, 0), priced=True)
    cache.put("k2", "/v1/messages", "claude-3-haiku-20240307", {}, Usage(4, 0, 0, 0), True)
    cache.get("k1")
    assert main(["cache", "stats", "--model", HAIKU]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split() == [
        HAIKU, "/v1/messages", "1", "1", "2,000", "0", "0", "0", "$0.00200", "$0.00200"]
    assert main(["cache", "clear", "--model", HAIKU]) == 0
    assert "removed 1 cached calls of claude-haiku-4-5" in capsys.readouterr().out
    assert [s.model for s in cache.stats()] == ["claude-3-haiku-20240307"]


def test_a_model_the_cache_holds_no_call_of_is_answered_with_the_models_it_holds(
        tmp_path, monkeypatch):
    """`cache clear --model nonexistent` said "removed 0" and `cache stats --model
    nonexistent` "the call cache is empty", naming none of the models it holds."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    cache = CallCache()
    cache.put("k1", "/v1/messages", HAIKU, {}, Usage(20, 0, 0, 0), priced=True)
    cache.put("k2", "/v1/messages", "claude-3-haiku-20240307", {}, Usage(4, 0, 0, 0), True)
    cache.close()

    def ragkit(*args: str) -> str:
        done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "cache", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout
    held = "the cache holds calls of claude-3-haiku-20240307, claude-haiku-4-5"
    assert ragkit("stats", "--model", "nonexistent") == (
        f"no cached calls of nonexistent; {held}\n")
    assert ragkit("clear", "--model", "nonexistent") == (
        f"removed 0 cached calls of nonexistent from {cache.path}; {held}\n")
    assert ragkit("clear", "--model", HAIKU) == (
        f"removed 1 cached calls of {HAIKU} from {cache.path}\n")
    ragkit("clear")
    assert ragkit("clear", "--model", HAIKU) == (
        f"removed 0 cached calls of {HAIKU} from {cache.path}; the cache is empty\n")


def test_stand_in_replies_are_reported_without_a_cost(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    llm, _ = _counting_llm(tmp_path / "cache", UsageLog())
    llm.create(**PARAMS)
    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "no cost" in out and "offline stand-in" in out
    row = next(line for line in out.splitlines() if "/v1/messages" in line)
    assert row.startswith(f"{HAIKU} *")  # marked: its token counts are the stand-in's estimate
    assert "tokens estimated" in out


def test_stand_in_and_paid_replies_of_one_model_are_separate_rows(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    cache.put("k1", "/v1/messages", HAIKU, {}, Usage(2000, 0, 0, 0), priced=True)
    cache.put("k2", "/v1/messages", HAIKU, {}, Usage(4, 0, 0, 0), priced=False)
    rows = cache.stats()
    assert [(s.standin, s.spent.input, s.dollars_spent) for s in rows] == [
        (False, 2000, pytest.approx(0.002)), (True, 4, None)]  # the paid row keeps its price


def test_commits_are_not_flushed_one_by_one(tmp_path):
    """WAL with synchronous=NORMAL: a hit's counter update costs no disk flush."""
    cache = CallCache(tmp_path / "calls.sqlite")
    assert cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert cache._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    cache.close()


def _keep_writing(path, barrier, n) -> None:
    first = CallCache(path)
    first.put("a-first", "/v1/messages", "m", {"x": 0}, Usage(), False)
    barrier.wait()
    for i in range(n):
        CallCache(path)  # another cache object in this process, as each LLM() makes
        first.put(f"a{i}", "/v1/messages", "m", {"x": i}, Usage(), False)


def _open_write_close(path, barrier, n) -> None:
    barrier.wait()
    for i in range(n):
        cache = CallCache(path)
        cache.put(f"b{i}", "/v1/messages", "m", {"x": i}, Usage(), False)
        cache.close()


def test_two_processes_writing_keep_every_entry(tmp_path):
    """A second CallCache must not read the file's header while this process has it open:
    closing that descriptor dropped sqlite's locks, and the other process's close then reset
    the write-ahead log under this one ("disk I/O error", entries lost)."""
    import multiprocessing
    import sqlite3

    ctx, path, n = multiprocessing.get_context("fork"), tmp_path / "calls.sqlite", 150
    barrier = ctx.Barrier(2)
    workers = [ctx.Process(target=f, args=(path, barrier, n))
               for f in (_keep_writing, _open_write_close)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM calls").fetchone() == (2 * n + 1,)
