"""`--embedder voyage:MODEL --batch`: Voyage's Batch API end to end, resumable.

Against a loopback Voyage Batch API run as its own process (`voyage_batch_loopback.py`:
asserts the file and job shapes, answers out of order, fails one request, keeps its state
across a restart), vectors must be those of their own texts, the failed request is embedded
interactively, a killed `ragkit index` resumes its job without creating another, and a later
identical run sends nothing at all (the embedding cache).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
RAGKIT = Path(sys.executable).parent / "ragkit"
sys.path.insert(0, str(HERE))
from cli_errors import one_error_line  # noqa: E402
from loopback_process import LoopbackProcess  # noqa: E402
from voyage_batch_loopback import vector  # noqa: E402


class Server(LoopbackProcess):
    """The Voyage Batch API stand-in (tests/voyage_batch_loopback.py) as its own process."""

    def __init__(self, tmp: Path, hold: float, fail: int, kind: str = "error") -> None:
        super().__init__(HERE / "voyage_batch_loopback.py", tmp / "vstate.json",
                         tmp / "vrequests.jsonl", hold, fail, kind)

    def file_lines(self, file_id: str) -> int:
        return len(json.loads(self.state.read_text())["files"][file_id])

    def calls(self, method: str, path: str) -> int:
        return sum(1 for x in self.requests() if x == {"method": method, "path": path})


@pytest.fixture
def server(tmp_path, request):
    made = Server(tmp_path, *getattr(request, "param", (0.0, 1)))
    yield made
    made.stop()


def _unit(text: str) -> np.ndarray:
    v = np.asarray(vector(text), np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def voyage_env(server, tmp_path, monkeypatch):
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-test-key-not-secret")
    monkeypatch.setenv("VOYAGE_BASE_URL", f"http://127.0.0.1:{server.port}/v1")
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))


def test_batch_vectors_belong_to_their_texts_and_a_failed_one_is_embedded_at_once(
        server, voyage_env):
    from ragkit.embed.voyage import VoyageEmbedder
    texts = [f"text number {i} about revenue" for i in range(6)]
    lines: list[str] = []
    got = VoyageEmbedder("voyage-3.5", batch={"poll": 0.1, "log": lines.append}).embed(texts)
    assert np.allclose(got, np.stack([_unit(t) for t in texts]), atol=1e-6)
    assert server.calls("POST", "/v1/batches") == 1 and server.calls("POST", "/v1/files") == 1
    assert server.calls("POST", "/v1/embeddings") == 1  # the failed request, at once
    assert any("1 batch request(s) got no usable result" in line for line in lines)


@pytest.mark.parametrize("server", [(0.0, -1)], indirect=True)
def test_contextualized_batch_vectors_keep_each_documents_chunks_in_order(server, voyage_env):
    from ragkit.embed.voyage import VoyageContextEmbedder
    docs = [["alpha one", "alpha two"], ["beta one"], ["gamma one", "gamma two", "gamma 3"]]
    got = VoyageContextEmbedder(batch={"poll": 0.1, "log": lambda line: None}
                                ).embed_documents(docs)
    for doc, rows in zip(docs, got, strict=True):
        assert np.allclose(rows, np.stack([_unit(c) for c in doc]), atol=1e-6)
    assert server.calls("POST", "/v1/contextualizedembeddings") == 0


@pytest.mark.parametrize("server", [(0.0, 0)], indirect=True)
def test_retry_none_fails_in_one_line_and_keeps_what_came(server, voyage_env, tmp_path):
    """The line said the others were in the embedding cache; none were, and the re-run sent
    all of them again (paid twice)."""
    from ragkit.documents import RagkitError
    from ragkit.embed.cache import CachedEmbedder
    from ragkit.embed.voyage import VoyageEmbedder

    def embedder(retry: str) -> CachedEmbedder:
        return CachedEmbedder(VoyageEmbedder("voyage-3.5", batch={
            "poll": 0.1, "retry": retry, "log": lambda line: None}), tmp_path / "e.sqlite")

    with pytest.raises(RagkitError) as err:
        embedder("none").embed(["a", "b", "c"])
    assert str(err.value) == ("voyage:voyage-3.5: 1 batch request(s) got no usable result "
                              "(re-run to send them again, or use --batch-retry interactive); "
                              "the 2 others are kept in the embedding cache")
    got = embedder("none").embed(["a", "b", "c"])
    assert np.allclose(got, np.stack([_unit(t) for t in "abc"]), atol=1e-6)
    assert server.file_lines("file-2") == 1  # only the one without a result is sent again


@pytest.mark.parametrize("server", [(0.0, 1, kind) for kind in (
    "nan", "zero", "emptydata", "strresp", "strstatus", "wrongdim")], indirect=True)
def test_an_unusable_result_is_no_result_not_a_traceback(server, voyage_env):
    """Each was a traceback (IndexError, KeyError, AttributeError, TypeError, ValueError) or
    NaN / zero vectors kept, after the journal record was gone: the paid batch was lost."""
    from ragkit.embed.voyage import VoyageEmbedder
    lines: list[str] = []
    texts = ["a", "b", "c"]
    got = VoyageEmbedder("voyage-3.5", batch={"poll": 0.1, "log": lines.append}).embed(texts)
    assert np.allclose(got, np.stack([_unit(t) for t in texts]), atol=1e-6)
    assert server.calls("POST", "/v1/embeddings") == 1  # the unusable one, at once
    assert any(": results not usable, counted as none (first: line" in line for line in lines)


@pytest.mark.parametrize("server", [(0.0, 1, "deep")], indirect=True)
def test_an_output_line_nested_too_deeply_is_one_error_and_the_job_is_kept(server, voyage_env,
                                                                            tmp_path):
    """A line of 100,000 "[" in the output file raised RecursionError: a traceback."""
    from ragkit.documents import RagkitError
    from ragkit.embed.voyage import VoyageEmbedder
    embedder = VoyageEmbedder("voyage-3.5", batch={"poll": 0.1, "log": lambda line: None})
    with pytest.raises(RagkitError, match=r"output file out-\S+ line 2: not a result \(nested "
                       r"too deeply\); "):
        embedder.embed(["a", "b", "c"])
    assert [p.name for p in (tmp_path / "home" / "batches" / "voyage").glob("*.json")] == [
        "batch-1.json"]  # a re-run fetches the job's results again, it does not pay twice


@pytest.mark.parametrize("server", [(0.0, 1, "dup")], indirect=True)
def test_a_result_given_twice_is_counted_once(server, voyage_env):
    from ragkit.embed.voyage import VoyageEmbedder
    lines: list[str] = []
    texts = ["a", "b", "c"]
    got = VoyageEmbedder("voyage-3.5", batch={"poll": 0.1, "log": lines.append}).embed(texts)
    assert np.allclose(got, np.stack([_unit(t) for t in texts]), atol=1e-6)
    assert server.calls("POST", "/v1/embeddings") == 0
    assert any("1 result(s) for requests it was not sent or given twice, left out" in line
               for line in lines)
    assert any("15 tokens at Voyage's batch price" in line for line in lines)  # 3 × 5, not 20


@pytest.mark.parametrize("server", [(3.0, -1)], indirect=True)
def test_killed_index_resumes_its_voyage_job_and_a_rerun_sends_nothing(tmp_path, server):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Report {i}. Revenue grew "
                                        f"{i} percent in quarter {i}."}) + "\n"
                            for i in range(4)))
    env = {**os.environ, "VOYAGE_API_KEY": "pa-test-key-not-secret",
           "VOYAGE_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
           "RAGKIT_HOME": str(tmp_path / "home"), "RAGKIT_API_RETRIES": "0"}

    def index(out: str, wait: bool = True):
        args = [str(RAGKIT), "index", str(docs), "--out", str(tmp_path / out), "--embedder",
                "voyage:voyage-3.5", "--contextualizer", "none", "--batch", "--batch-poll",
                "0.3"]
        if not wait:
            return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)

    first = index("i1", wait=False)
    journal = tmp_path / "home" / "batches" / "voyage"
    deadline = time.monotonic() + 60  # the journal: the batch was sent
    while not list(journal.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(journal.glob("*.json")), "no journal within 60 s"
    time.sleep(0.5)
    first.send_signal(signal.SIGKILL)
    first.wait()
    server.restart()
    done = index("i1")
    assert done.returncode == 0, done.stderr
    assert "resuming 1 Voyage batch(es)" in done.stderr
    assert server.calls("POST", "/v1/batches") == 1 and server.calls("POST", "/v1/embeddings") == 0
    assert not list(journal.glob("*.json"))
    before = len(server.log.read_text().splitlines())
    again = index("i2")
    assert again.returncode == 0, again.stderr
    assert len(server.log.read_text().splitlines()) == before


@pytest.mark.parametrize("server", [(0.0, -1)], indirect=True)
def test_a_journaled_job_voyage_no_longer_knows_is_sent_again_once(server, voyage_env):
    from ragkit.batch_journal import BatchRecord, Journal
    from ragkit.embed.voyage import VoyageEmbedder
    texts = ["one text", "another text"]
    embedder = VoyageEmbedder("voyage-3.5", batch={"poll": 0.1, "log": lambda line: None})
    journal = Journal("voyage", f"http://127.0.0.1:{server.port}/v1")
    journal.write(BatchRecord("voyage", journal.backend, "batch-gone",
                              [embedder._custom_id("document", t) for t in texts],
                              extra={"endpoint": "/v1/embeddings"}))
    got = embedder.embed(texts)
    assert np.allclose(got, np.stack([_unit(t) for t in texts]), atol=1e-6)
    assert server.calls("GET", "/v1/batches/batch-gone") == 1
    assert server.calls("POST", "/v1/batches") == 1 and server.calls("POST", "/v1/embeddings") == 0
    assert journal.open_batches() == []


@pytest.mark.parametrize("server", [(60.0, -1)], indirect=True)
def test_batch_timeout_stops_waiting_in_one_line_and_keeps_the_voyage_journal(server, voyage_env,
                                                                              tmp_path):
    from ragkit.documents import RagkitError
    from ragkit.embed.voyage import VoyageEmbedder
    embedder = VoyageEmbedder("voyage-3.5", batch={"poll": 0.2, "timeout": 1.0,
                                                   "log": lambda line: None})
    with pytest.raises(RagkitError, match=r"1 Voyage batch\(es\) still running \(batch-1\); the "
                                          r"journal in .* keeps submitted jobs: re-run"):
        embedder.embed(["a", "b"])
    assert [p.name for p in (tmp_path / "home" / "batches" / "voyage").iterdir()] == \
        ["batch-1.json"]


@pytest.mark.parametrize("server", [(0.0, 0)], indirect=True)
def test_contextualized_retry_none_keeps_the_whole_documents_that_came(server, voyage_env,
                                                                        tmp_path):
    from ragkit.documents import RagkitError
    from ragkit.embed.contextual import CachedContextualEmbedder
    from ragkit.embed.voyage import VoyageContextEmbedder
    docs = [["alpha one", "alpha two"], ["beta one"], ["gamma one"]]

    def embedder() -> CachedContextualEmbedder:
        return CachedContextualEmbedder(VoyageContextEmbedder(batch={
            "poll": 0.1, "retry": "none", "log": lambda line: None}), tmp_path / "e.sqlite")

    with pytest.raises(RagkitError, match=r"got no usable result \(re-run to send them again, "
                                          r"or use --batch-retry interactive\); the 2 documents "
                                          r"that came are kept in the embedding cache$"):
        embedder().embed_documents(docs)
    got = embedder().embed_documents(docs)
    for doc, rows in zip(docs, got, strict=True):
        assert np.allclose(rows, np.stack([_unit(c) for c in doc]), atol=1e-6)
    assert server.file_lines("file-2") == 1


@pytest.mark.parametrize("server", [(0.0, 0, "refuse")], indirect=True)
def test_a_failing_interactive_fallback_keeps_the_batch_results(server, voyage_env, tmp_path):
    """The batch's 2 vectors were lost (paid, not cached) when sending the third at once
    failed; the re-run paid for all three again."""
    from ragkit.documents import RagkitError
    from ragkit.embed.cache import CachedEmbedder
    from ragkit.embed.voyage import VoyageEmbedder

    def embedder() -> CachedEmbedder:
        return CachedEmbedder(VoyageEmbedder("voyage-3.5", batch={
            "poll": 0.1, "log": lambda line: None}), tmp_path / "e.sqlite")

    with pytest.raises(RagkitError, match=r"\(sending 1 request\(s\) without a batch result "
                                          r"interactively\); the 2 others are kept in the "
                                          r"embedding cache$"):
        embedder().embed(["a", "b", "c"])
    got = embedder().embed(["a", "b", "c"])
    assert np.allclose(got, np.stack([_unit(t) for t in "abc"]), atol=1e-6)
    assert server.file_lines("file-2") == 1


def test_ctrl_c_after_results_came_keeps_them_in_the_embedding_cache(server, voyage_env,
                                                                      tmp_path, monkeypatch):
    """Ctrl-C once a job's output was read (its journal record gone) threw its vectors away:
    the re-run, told it would send nothing again, paid for them again."""
    from ragkit.embed.cache import CachedEmbedder
    from ragkit.embed.voyage import VoyageEmbedder
    from ragkit.voyage_batch import VoyageBatches
    rounds = VoyageBatches._rounds

    def then_ctrl_c(self, *args):
        rounds(self, *args)
        raise KeyboardInterrupt

    def embedder() -> CachedEmbedder:
        return CachedEmbedder(VoyageEmbedder("voyage-3.5", batch={
            "poll": 0.1, "log": lambda line: None}), tmp_path / "e.sqlite")

    monkeypatch.setattr(VoyageBatches, "_rounds", then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        embedder().embed(["a", "b", "c"])
    monkeypatch.setattr(VoyageBatches, "_rounds", rounds)
    got = embedder().embed(["a", "b", "c"])
    assert np.allclose(got, np.stack([_unit(t) for t in "abc"]), atol=1e-6)
    assert server.calls("POST", "/v1/batches") == 1  # nothing sent again


def _index_batch(tmp_path: Path, server: Server) -> tuple[subprocess.CompletedProcess, float]:
    """`ragkit index --embedder voyage:voyage-3.5 --batch --api-timeout 1` of two texts;
    (result, seconds). A run past 30 s fails the test (subprocess.TimeoutExpired)."""
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "Revenue grew."}\n'
                                         '{"id": "b", "text": "Costs fell."}\n')
    env = {**os.environ, "VOYAGE_API_KEY": "pa-test-key-not-secret",
           "VOYAGE_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
           "RAGKIT_HOME": str(tmp_path / "home")}
    start = time.monotonic()
    done = subprocess.run([str(RAGKIT), "index", str(tmp_path / "docs.jsonl"), "--out",
                           str(tmp_path / "ix"), "--embedder", "voyage:voyage-3.5", "--batch",
                           "--batch-poll", "0.2", "--api-timeout", "1"], env=env,
                          capture_output=True, text=True, timeout=30)
    return done, time.monotonic() - start


@pytest.mark.parametrize("server, what", [
    ((0.0, -1, "drip"), "was too slow: gave up after 1 s: the reply trickled in after it began "
                        "and was not whole by then (1 attempt, each waiting up to 1 s for a "
                        "reply to begin and 1 s more for all of it;"),
    ((0.0, -1, "stall"), "timed out mid-reply: the reply began, then nothing more came for 1 s "
                         "(1 attempt, each waiting up to 1 s for a reply;"),
], indirect=["server"])
def test_a_job_status_that_trickles_in_or_stops_is_one_line_and_the_journal_keeps_the_job(
        tmp_path, server, what):
    """Polled with each read within --api-timeout, a status sent a byte at a time held the run
    for as long as it took (minutes here, for ever from a stuck server); one that stopped
    mid-way read 'cannot reach the Voyage Batch API'."""
    done, seconds = _index_batch(tmp_path, server)
    journal = tmp_path / "home" / "batches" / "voyage"
    assert one_error_line(done) == (
        f"ragkit: error: voyage:voyage-3.5: the Voyage Batch API at http://127.0.0.1:"
        f"{server.port}/v1 {what} change with --api-timeout / RAGKIT_API_TIMEOUT, "
        f"RAGKIT_API_CONNECT_TIMEOUT); the journal in {journal} keeps submitted jobs: re-run "
        f"the same command to collect them without sending them again")
    assert seconds < 15 and not (tmp_path / "ix").exists()
    assert [p.name for p in journal.iterdir()] == ["batch-1.json"]
    assert server.calls("GET", "/v1/batches/batch-1") == 1


@pytest.mark.parametrize("server", [(0.0, -1, "slowfile")], indirect=True)
def test_the_output_file_may_take_longer_than_the_timeout_in_all(tmp_path, server):
    """It may be many MB: only each of its reads is bounded (five pieces over 1.6 s here)."""
    done, seconds = _index_batch(tmp_path, server)
    assert done.returncode == 0, done.stderr
    assert server.calls("GET", "/v1/files/out-batch-1/content") == 1
    assert server.calls("POST", "/v1/embeddings") == 0 and seconds > 1.6
