"""`ragkit index --contextualizer claude --batch`: Message Batches end to end, resumable.

Against a loopback Message Batches server run as its own process (`batches_loopback.py`:
asserts the SDK's request shapes, answers out of order, expires one request, keeps its state
across a restart), the installed CLI is killed with -9 while it polls and run again: it
must resume the same batch (no new one), retry the expired request as `--batch-retry` says,
give every chunk its own result, and a later identical run must send nothing at all.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_errors import one_error_line
from loopback_process import LoopbackProcess

HERE = Path(__file__).resolve().parent
RAGKIT = Path(sys.executable).parent / "ragkit"
WORDS = ("revenue margin quarter growth customer churn pipeline guidance segment retail cloud "
         "hardware services backlog inventory pricing forecast region europe asia").split()


def _docs(path: Path) -> Path:
    rng = random.Random(7)
    with path.open("w") as f:
        for d in range(2):
            text = "\n\n".join(" ".join(rng.choices(WORDS, k=60)) + "." for _ in range(4))
            f.write(json.dumps({"id": f"doc-{d}", "title": f"Report {d}", "text": text}) + "\n")
    return path


class Server(LoopbackProcess):
    """The Message Batches stand-in (tests/batches_loopback.py) as its own process."""

    def __init__(self, tmp: Path, hold: float, expire: int, mode: str = "") -> None:
        super().__init__(HERE / "batches_loopback.py", tmp / "state.json",
                         tmp / "requests.jsonl", hold, expire, mode)

    def calls(self, method: str, path: str) -> list[dict]:
        return [x for x in self.requests() if x["method"] == method and x["path"] == path]


@pytest.fixture
def server(tmp_path, request):
    made = Server(tmp_path, *getattr(request, "param", (3.0, 1)))
    yield made
    made.stop()


def _env(tmp_path: Path, server: Server) -> dict[str, str]:
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}",
           "ANTHROPIC_API_KEY": "test-key", "RAGKIT_HOME": str(tmp_path / "home"),
           "RAGKIT_API_RETRIES": "0"}
    return env


def _index(tmp_path: Path, server: Server, out: str, *extra: str,
           wait: bool = True) -> subprocess.CompletedProcess | subprocess.Popen:
    args = [str(RAGKIT), "index", str(_docs(tmp_path / "docs.jsonl")), "--out",
            str(tmp_path / out), "--contextualizer", "claude", "--batch", "--embedder", "none",
            "--chunk-size", "64", "--overlap", "0", "--batch-poll", "0.3", *extra]
    if not wait:
        return subprocess.Popen(args, env=_env(tmp_path, server), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    return subprocess.run(args, env=_env(tmp_path, server), capture_output=True, text=True,
                          timeout=120)


def _chunks(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "chunks.jsonl").read_text().splitlines()]


def _wait_for_batch(server: Server) -> None:
    for _ in range(1200):  # a minute: the command's start-up is slow on a loaded machine
        if server.calls("POST", "/v1/messages/batches"):
            return
        time.sleep(0.05)
    raise AssertionError("no batch was submitted")


def test_killed_run_resumes_its_batch_and_every_chunk_gets_its_own_result(tmp_path, server):
    first = _index(tmp_path, server, "index", wait=False)
    _wait_for_batch(server)
    time.sleep(0.5)  # polling now
    first.send_signal(signal.SIGKILL)
    first.wait()
    journal = list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))
    assert len(journal) == 1 and json.loads(journal[0].read_text())["id"] == "msgbatch_0001"
    server.restart()  # the API side restarts too, mid-poll; it still knows the batch

    done = _index(tmp_path, server, "index")
    assert done.returncode == 0, done.stderr
    assert "resuming 1 batch(es)" in done.stderr
    assert len(server.calls("POST", "/v1/messages/batches")) == 1  # never re-submitted
    chunks = _chunks(tmp_path / "index")
    posted = server.calls("POST", "/v1/messages/batches")[0]["n"]
    assert posted == len(chunks) > 4
    contexts = {c["context"] for c in chunks}
    assert len(contexts) == len(chunks)  # out-of-order results matched by custom_id
    batched = [c for c in chunks if c["context"] == ("batched: " + c["text"][:60]).strip()]
    retried = [c for c in chunks if c["context"] == ("interactive: " + c["text"][:60]).strip()]
    assert (len(batched), len(retried)) == (len(chunks) - 1, 1)  # the expired one
    assert len(server.calls("POST", "/v1/messages")) == 1
    assert "1 expired" in done.stderr and "1 retried interactively" in done.stderr
    # measured at batch prices: (N-1) results × (1000 in · $1 + 10 out · $5) / 1e6 / 2
    n = len(chunks) - 1
    assert f"${n * 1050 / 2e6:.5f}"[:6] in done.stderr
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))

    before = len(server.log.read_text().splitlines())
    again = _index(tmp_path, server, "index2")
    assert again.returncode == 0, again.stderr
    assert len(server.log.read_text().splitlines()) == before  # nothing sent at all
    assert [c["context"] for c in _chunks(tmp_path / "index2")] == \
        [c["context"] for c in chunks]


def _contextualize(tmp_path: Path, server: Server, retry: str):
    """In process (no CLI start-up): the batch contextualizer over the loopback server."""
    import anthropic
    from ragkit.cache import CallCache
    from ragkit.chunking import ChunkerConfig, chunk_document
    from ragkit.contextualize.batch import BatchContextualizer
    from ragkit.datasets import load_dataset
    from ragkit.llm import LLM, UsageLog
    from ragkit.message_batches import BatchOptions
    llm = LLM(anthropic.Anthropic(api_key="test-key", base_url=f"http://127.0.0.1:{server.port}",
                                  max_retries=0), cache=CallCache(tmp_path / "calls.sqlite"),
              usage=UsageLog())
    docs = load_dataset(_docs(tmp_path / "docs.jsonl")).documents
    pairs = [(d, chunk_document(d, ChunkerConfig(64, 0))) for d in docs]
    lines: list[str] = []
    made = BatchContextualizer(llm=llm, log=lines.append,
                               options=BatchOptions(poll=0.2, retry=retry, log=lines.append))
    return made, pairs, lines


@pytest.mark.parametrize("server", [(0.0, 2)], indirect=True)
def test_retry_batch_sends_only_the_expired_request_in_a_new_batch(tmp_path, server,
                                                                    monkeypatch):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "batch")
    chunks = [c for done in made.many(pairs, progress=False) for c in done]
    sizes = [c["n"] for c in server.calls("POST", "/v1/messages/batches")]
    assert sizes == [len(chunks), 1]
    assert server.calls("POST", "/v1/messages") == []
    assert all(c.context == ("batched: " + c.text[:60]).strip() for c in chunks)


@pytest.mark.parametrize("server", [(0.0, 0)], indirect=True)
def test_retry_none_fails_in_one_line_and_a_rerun_sends_only_the_rest(tmp_path, server,
                                                                      monkeypatch):
    from ragkit.documents import RagkitError
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "none")
    with pytest.raises(RagkitError, match=r"^1 batch request\(s\) got no usable reply "
                                          r"\(1 expired\); the 7 answered are in the call "
                                          r"cache: re-run"):
        made.many(pairs, progress=False)
    made, pairs, lines = _contextualize(tmp_path, server, "none")
    chunks = [c for done in made.many(pairs, progress=False) for c in done]
    assert [c["n"] for c in server.calls("POST", "/v1/messages/batches")] == [8, 1]
    assert len({c.context for c in chunks}) == len(chunks) == 8
    assert "7 from the call cache" in lines[-1]


def test_a_dead_api_while_polling_is_one_line_and_the_journal_stays(tmp_path, server):
    run = _index(tmp_path, server, "index", wait=False)
    journal = tmp_path / "home" / "batches" / "anthropic" / "msgbatch_0001.json"
    deadline = time.monotonic() + 60  # the journal: the batch was sent
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert journal.exists(), "no journal within 60 s"
    server.stop()
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 2 and "Traceback" not in out
    assert "re-run the same command to collect their results" in out.splitlines()[-1]
    assert len(list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))) == 1


@pytest.mark.parametrize("server", [(60.0, -1)], indirect=True)
def test_ctrl_c_while_polling_says_how_to_resume_and_keeps_the_journal(tmp_path, server):
    run = _index(tmp_path, server, "index", wait=False)
    journal = tmp_path / "home" / "batches" / "anthropic" / "msgbatch_0001.json"
    deadline = time.monotonic() + 60  # the journal: the batch was sent
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert journal.exists(), "no journal within 60 s"
    time.sleep(0.5)
    run.send_signal(signal.SIGINT)
    out, _ = run.communicate(timeout=60)
    assert run.returncode != 0 and "Traceback" not in out
    assert ("interrupted: batch(es) msgbatch_0001 keep running; the journal in "
            f"{journal.parent} keeps them: re-run the same command to collect their results "
            "without sending any request again") in out
    assert journal.exists() and not (tmp_path / "index").exists()


@pytest.mark.parametrize("server", [(60.0, -1)], indirect=True)
def test_batch_timeout_stops_waiting_in_one_line_and_keeps_the_journal(tmp_path, server,
                                                                       monkeypatch):
    from ragkit.message_batches import BatchPending
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "interactive")
    made.options.timeout = 1.0
    with pytest.raises(BatchPending, match=r"^1 batch\(es\) still in progress after \d s "
                                           r"\(msgbatch_0001\); the journal in .* keeps them"):
        made.many(pairs, progress=False)
    assert [p.name for p in (tmp_path / "home" / "batches" / "anthropic").iterdir()] == \
        ["msgbatch_0001.json"]


@pytest.mark.parametrize("server", [(0.0, -1, "strange")], indirect=True)
def test_a_result_given_twice_or_for_a_request_not_sent_is_counted_nowhere(tmp_path, server,
                                                                           monkeypatch):
    """8 requests reported "10 results", priced as measured, and the stranger's reply went
    into the call cache as a paid call."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, lines = _contextualize(tmp_path, server, "none")
    made.many(pairs, progress=False)
    assert any(line.endswith(": 2 result(s) for requests it was not sent or given twice, "
                             "left out") for line in lines)
    assert "; 8 results (tokens in " in lines[-1]
    assert made.llm.usage.models["claude-haiku-4-5"].requests == 8
    assert not made.llm.cache.holds(["f" * 64])


@pytest.mark.parametrize("server", [(0.0, -1, "cut")], indirect=True)
def test_a_results_download_cut_off_is_counted_once_when_resumed(tmp_path, server,
                                                                 monkeypatch):
    """Run 2 reported 12 results for 8 requests: the ones run 1 cached were counted as
    spent again and as saved."""
    from ragkit.documents import RagkitError
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "none")
    with pytest.raises(RagkitError, match=r"reading its results: cannot reach the Anthropic API .*"
                                          r"also when its reply breaks off before its end"):
        made.many(pairs, progress=False)
    first = made.llm.usage.models["claude-haiku-4-5"].requests
    made, pairs, lines = _contextualize(tmp_path, server, "none")
    chunks = [c for done in made.many(pairs, progress=False) for c in done]
    assert len(chunks) == 8 and 0 < first < 8
    assert len(server.calls("POST", "/v1/messages/batches")) == 1
    assert f"; {8 - first} results (tokens in " in lines[-1]
    assert f"; {first} from the call cache" in lines[-1]


@pytest.mark.parametrize("server", [(0.0, 0, "newtype")], indirect=True)
def test_a_result_type_this_version_does_not_know_is_named(tmp_path, server, monkeypatch):
    """The line said "1 batch request(s) got no usable reply ()" and the summary "none
    failed"."""
    from ragkit.documents import RagkitError
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "none")
    with pytest.raises(RagkitError, match=r"^1 batch request\(s\) got no usable reply \(1 of "
                                          r"an unknown result type\); the 7 answered"):
        made.many(pairs, progress=False)


@pytest.mark.parametrize("server", [(0.0, 0, "refuse")], indirect=True)
def test_a_failing_interactive_retry_says_what_is_kept(tmp_path, server, monkeypatch):
    """The line was the API's error alone: no word of which retry failed or that the
    contexts already answered are kept."""
    from ragkit.documents import RagkitError
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, _ = _contextualize(tmp_path, server, "interactive")
    with pytest.raises(RagkitError, match=r"^.*sending batch request 1 of 1 interactively: the "
                                          r"Anthropic API refused the request \(400 "
                                          r"invalid_request_error: no\); the 7 answered are in "
                                          r"the call cache: re-run to send the rest"):
        made.many(pairs, progress=False)


def test_a_damaged_cache_met_while_retrying_interactively_is_its_own_line(tmp_path,
                                                                          monkeypatch):
    """The retry wrapped it with "re-run to send the rest", which a re-run cannot honour."""
    import anthropic
    from ragkit.cache import CallCache, DamagedCache
    from ragkit.llm import LLM, UsageLog
    from ragkit.message_batches import BatchOptions, MessageBatches
    llm = LLM(anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9"),
              cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())
    runner = MessageBatches(llm, BatchOptions(retry="interactive", log=lambda line: None))
    damaged = DamagedCache("calls.sqlite: the call cache is damaged", tmp_path, "malformed")
    monkeypatch.setattr(runner, "_wait", lambda *a: {"k1": "errored"})
    monkeypatch.setattr(runner, "_submit", lambda fresh: [])
    monkeypatch.setattr(llm, "create", lambda **kw: (_ for _ in ()).throw(damaged))
    with pytest.raises(DamagedCache) as caught:
        runner._answer({"k1": {"model": "claude-haiku-4-5"}}, [], {}, None, 1)
    assert str(caught.value) == "calls.sqlite: the call cache is damaged"


@pytest.mark.parametrize("server", [(0.5, -1, "slow")], indirect=True)
def test_a_submit_answered_too_late_is_sent_once_and_its_batch_collected(tmp_path, server):
    """The API made the batch but answered after the client's timeout: the SDK sent the
    submit again — each a batch paid for, the first one never journaled nor collected."""
    done = _index(tmp_path, server, "index", "--api-timeout", "1", "--api-retries", "2")
    assert done.returncode == 0, done.stderr
    assert len(server.calls("POST", "/v1/messages/batches")) == 1
    assert "batch msgbatch_0001: made by an unanswered submit; collected" in done.stderr
    chunks = _chunks(tmp_path / "index")
    assert all(c["context"] == ("batched: " + c["text"][:60]).strip() for c in chunks)
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))


@pytest.mark.parametrize("server", [(0.5, -1, "slow")], indirect=True)
def test_a_run_killed_while_its_submit_was_unanswered_finds_the_batch_it_made(tmp_path,
                                                                            server):
    """Killed after the API accepted the batch but before its record was written: the
    re-run knew nothing of it and paid for its requests again."""
    first = _index(tmp_path, server, "index", wait=False)
    _wait_for_batch(server)
    first.send_signal(signal.SIGKILL)
    first.wait()
    (record,) = (tmp_path / "home" / "batches" / "anthropic").glob("*.json")
    assert json.loads(record.read_text())["status"] == "submitting"

    done = _index(tmp_path, server, "index")
    assert done.returncode == 0, done.stderr
    assert len(server.calls("POST", "/v1/messages/batches")) == 1  # not sent again
    assert "batch msgbatch_0001: made by the submit of " in done.stderr
    chunks = _chunks(tmp_path / "index")
    assert all(c["context"] == ("batched: " + c["text"][:60]).strip() for c in chunks)
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))


@pytest.mark.parametrize("server", [(0.5, -1, "fail500")], indirect=True)
def test_a_submit_that_failed_without_making_a_batch_is_sent_by_the_rerun(tmp_path, server):
    """A 500 may come before or after the API made the batch: the run says so in one line and
    keeps the submit's record; the re-run finds no batch in the API's list, says so, and
    sends the requests (once)."""
    first = _index(tmp_path, server, "index")
    line = one_error_line(first)
    assert "the API may have made the batch all the same: the same command run again looks " \
           "for it before sending any of its requests again" in line
    (record,) = (tmp_path / "home" / "batches" / "anthropic").glob("*.json")
    assert json.loads(record.read_text())["status"] == "submitting"

    done = _index(tmp_path, server, "index")
    assert done.returncode == 0, done.stderr
    assert "that got no answer made no batch; its requests are sent now" in done.stderr
    assert len(server.calls("POST", "/v1/messages/batches")) == 2  # the 500, then the batch
    # the newest batch noted before each submit, and the batch looked for in each run
    assert len(server.calls("GET", "/v1/messages/batches")) == 4
    assert not list((tmp_path / "home" / "batches" / "anthropic").glob("*.json"))


@pytest.mark.parametrize("server", [(0.0, -1, "nousage")], indirect=True)
def test_results_that_report_no_usage_are_unknown_not_zero(tmp_path, server, monkeypatch):
    """Results without usage counts were summed as 0 tokens and "$0.00 measured"."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    made, pairs, lines = _contextualize(tmp_path, server, "none")
    chunks = [c for done in made.many(pairs, progress=False) for c in done]
    assert len(chunks) == 8
    assert lines[-1].endswith("; 0 from the call cache; 4 replies reported no usage: their "
                              "tokens and cost are unknown, not in these figures")
    assert "; 8 results (tokens in 4000, out 40, " in lines[-1]  # the other four's counts
    assert made.llm.usage.summary().endswith("; 4 replies reported no usage: their tokens "
                                             "and cost are unknown, not in these figures")
