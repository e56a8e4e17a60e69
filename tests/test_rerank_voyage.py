"""The Voyage rerankers through the real voyageai SDK against a loopback HTTP server."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from ragkit.documents import Chunk, RagkitError, RagkitWarning
from ragkit.rerank import Candidate, get_reranker
from ragkit.rerank.voyage import VoyageReranker, estimate_tokens
from voyage_loopback import KEY, Loopback, serve

NO_KEY = ("the voyage:rerank-2.5 reranker calls the Voyage API and needs a key: set "
          "VOYAGE_API_KEY (or VOYAGE_API_KEY_PATH to a file holding it), or use the offline "
          "reranker 'offline'")


class Voyage(Loopback):
    """Scores document i by `server.score(text)`, keeps the top_k best and lists them by
    index (unsorted by score, as the API may)."""

    def default(self, body: dict) -> dict:
        scores = [self.server.score(d) for d in body["documents"]]
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[:body["top_k"]]
        return {"object": "list", "model": body["model"],
                "data": [{"index": i, "relevance_score": scores[i]} for i in sorted(best)],
                "usage": {"total_tokens": 10 * len(scores)}}


@pytest.fixture
def voyage(monkeypatch, tmp_path):
    """A loopback Voyage rerank API (tests/voyage_loopback.py)."""
    yield from serve(Voyage, monkeypatch, tmp_path, score=lambda text: 0.5)


def bodies(server) -> list[dict]:
    return [body for path, body, _ in server.requests if path == "/v1/rerank"]


CANDIDATES = [Candidate(Chunk("c0", "policy", "Refunds take seven days.",
                              context="From the refund policy."), 0.9, {"bm25_rank": 1}),
              Candidate(Chunk("c1", "shipping", "Shipping is free."), 0.8),
              Candidate(Chunk("c2", "faq", "Refund window: 7 days."), 0.7)]
REPLY = {"data": [{"index": 0, "relevance_score": 0.4}, {"index": 2, "relevance_score": 0.9}],
         "usage": {"total_tokens": 123}}


def test_request_body_and_results_sorted_by_relevance(voyage):
    voyage.queue.append((200, REPLY))
    ranker = get_reranker("voyage:rerank-2.5")
    assert ranker.rerank("how long do refunds take?", CANDIDATES, k=2) == [
        ("c2", 0.9), ("c0", 0.4)]
    assert bodies(voyage) == [{
        "model": "rerank-2.5", "query": "how long do refunds take?",
        "documents": ["Refunds take seven days.\n\nContext: From the refund policy.",
                      "Shipping is free.", "Refund window: 7 days."],
        "top_k": 2, "truncation": True}]
    assert voyage.requests[0][2] == f"Bearer {KEY}"
    assert (ranker.requests, ranker.tokens) == (1, 123)
    assert ranker.dollars == pytest.approx(123 * 0.05 / 1e6)


def test_rate_limit_then_success_is_retried(voyage):
    voyage.queue += [(429, {"detail": "Rate limit exceeded"}), (200, REPLY)]
    out = VoyageReranker("rerank-2.5").rerank("refunds?", CANDIDATES, k=2)
    assert out == [("c2", 0.9), ("c0", 0.4)]
    assert len(bodies(voyage)) == 2 and bodies(voyage)[0] == bodies(voyage)[1]


def test_a_rerun_is_served_from_the_cache_with_zero_requests(voyage):
    voyage.queue.append((200, REPLY))
    first = VoyageReranker("rerank-2.5").rerank("refunds?", CANDIDATES, k=2)
    again = VoyageReranker("rerank-2.5")
    assert again.rerank("refunds?", CANDIDATES, k=2) == first
    assert len(voyage.requests) == 1
    assert (again.requests, again.cache_hits, again.tokens, again.saved_tokens) == (0, 1, 0, 123)
    assert again.dollars == 0.0
    again.rerank("refunds?", CANDIDATES, k=1)  # another top_k is another request
    assert len(voyage.requests) == 2


def test_lite_model_and_its_price(voyage):
    voyage.queue.append((200, REPLY))
    ranker = get_reranker("voyage:rerank-2.5-lite")
    ranker.rerank("refunds?", CANDIDATES, k=2)
    assert bodies(voyage)[0]["model"] == "rerank-2.5-lite"
    assert ranker.dollars == pytest.approx(123 * 0.02 / 1e6)
    assert "1 requests, 0 from the call cache; 123 tokens, $0.00000246" in ranker.summary()


def test_missing_key_is_named_when_a_call_must_be_sent_and_nothing_is_sent(voyage,
                                                                         monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    ranker = get_reranker("voyage:rerank-2.5")  # built without the key: the cache may serve
    with pytest.raises(RagkitError) as caught:
        ranker.rerank("refunds?", CANDIDATES, k=2)
    assert str(caught.value) == NO_KEY
    assert voyage.requests == [] and ranker.requests == 0


def test_unreadable_key_file_is_named(voyage, monkeypatch, tmp_path):
    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.setenv("VOYAGE_API_KEY_PATH", str(tmp_path / "no-such-key-file"))
    with pytest.raises(RagkitError, match="cannot read the key file named by "
                                          "VOYAGE_API_KEY_PATH"):
        VoyageReranker("rerank-2.5").rerank("refunds?", CANDIDATES, k=2)
    assert voyage.requests == []


def test_without_a_key_the_cache_is_read_at_the_endpoint_a_key_would_use(voyage,
                                                                        monkeypatch):
    monkeypatch.delenv("VOYAGE_BASE_URL")
    keyed = VoyageReranker("rerank-2.5").backend
    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    assert VoyageReranker("rerank-2.5").backend == keyed == "https://api.voyageai.com/v1"


def ragkit(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return subprocess.run([str(Path(sys.executable).parent / "ragkit"), *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_search_reranked_from_the_call_cache_needs_no_key(voyage, tmp_path, monkeypatch):
    # before: the cached search stopped with the no-key line although it sends nothing
    voyage.score = lambda text: len(text) / 100
    (tmp_path / "docs.jsonl").write_text(
        '{"id": "a", "text": "Refunds take seven days."}\n'
        '{"id": "b", "text": "Refunds of sale items take fourteen days."}\n'
        '{"id": "c", "text": "Shipping is free."}\n')
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "refunds days"}\n')
    assert ragkit("index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                  "--embedder", "none").returncode == 0
    search = ("search", tmp_path / "ix", "--mode", "bm25", "--rerank", "voyage:rerank-2.5",
              "--k", "2", "--queries")
    keyed = ragkit(*search, tmp_path / "q.jsonl", "--out", tmp_path / "keyed.trec")
    assert keyed.returncode == 0, keyed.stderr
    assert [line.split()[2] for line in (tmp_path / "keyed.trec").read_text().splitlines()] \
        == ["b#0", "a#0"]
    assert len(bodies(voyage)) == 1
    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    cached = ragkit(*search, tmp_path / "q.jsonl", "--out", tmp_path / "cached.trec")
    assert cached.returncode == 0, cached.stderr
    assert (tmp_path / "cached.trec").read_text() == (tmp_path / "keyed.trec").read_text()
    assert "reranker voyage:rerank-2.5: reranked 1 query" in cached.stdout
    assert len(voyage.requests) == 1
    # a query the cache does not hold needs the key: one line, no run file, nothing sent
    (tmp_path / "new.jsonl").write_text('{"id": "q2", "text": "sale refunds"}\n')
    new = ragkit(*search, tmp_path / "new.jsonl", "--out", tmp_path / "new.trec")
    assert one_error_line(new) == f"ragkit: error: {NO_KEY}"
    assert not (tmp_path / "new.trec").exists() and len(voyage.requests) == 1


def test_rejected_key_is_one_line_without_the_key(voyage):
    voyage.queue.append((401, {"detail": f"Provided API key is invalid: {KEY}"}))
    with pytest.raises(RagkitError) as caught:
        VoyageReranker("rerank-2.5").rerank("refunds?", CANDIDATES, k=2)
    message = str(caught.value)
    assert "HTTP 401" in message and "check VOYAGE_API_KEY" in message and KEY not in message


def _six_queries(tmp_path: Path) -> tuple:
    (tmp_path / "docs.jsonl").write_text(
        '{"id": "a", "text": "Refunds take seven days."}\n'
        '{"id": "b", "text": "Refunds of sale items take fourteen days."}\n')
    (tmp_path / "q.jsonl").write_text("".join(
        f'{{"id": "q{n}", "text": "refunds {n} days"}}\n' for n in range(6)))
    assert ragkit("index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                  "--embedder", "none").returncode == 0
    return ("search", tmp_path / "ix", "--mode", "bm25", "--rerank", "voyage:rerank-2.5",
            "--queries", tmp_path / "q.jsonl", "--out", tmp_path / "run.trec")


def test_a_rejected_key_stops_a_reranked_search_at_its_first_query(voyage, tmp_path):
    """It cost a refused call and a warning per query, and wrote the first stage's order as
    the reranked run, exit 0."""
    voyage.queue.extend([(401, {"detail": "Provided API key is invalid"})] * 6)
    done = ragkit(*_six_queries(tmp_path))
    assert one_error_line(done) == (
        "ragkit: error: voyage:rerank-2.5: Voyage refused the API key (HTTP 401): Provided "
        "API key is invalid; check VOYAGE_API_KEY")
    assert len(bodies(voyage)) == 1 and not (tmp_path / "run.trec").exists()


def test_an_api_failing_query_after_query_stops_the_search(voyage, tmp_path, monkeypatch):
    """A 529 on every call: each query waited out its retries and kept the first stage's
    order, hours for a large query set, exit 0. Five failed in a row end it."""
    monkeypatch.setenv("RAGKIT_API_RETRIES", "0")
    voyage.queue.extend([(529, {"detail": "overloaded"})] * 6)
    done = ragkit(*_six_queries(tmp_path))
    line = one_error_line(done)
    assert line.startswith("ragkit: error: reranker voyage:rerank-2.5: the last 5 queries "
                           "failed (voyage:rerank-2.5: Voyage request failed (HTTP 529): "
                           "overloaded")
    assert line.endswith("; stopped rather than try every query alike")
    assert len(bodies(voyage)) == 5 and not (tmp_path / "run.trec").exists()


def test_unknown_model_is_refused(voyage):
    with pytest.raises(RagkitError, match="unknown Voyage reranker 'rerank-9'.*rerank-2.5"):
        VoyageReranker("rerank-9")


def test_more_than_1000_documents_are_split_and_merged_by_score(voyage):
    voyage.score = lambda text: int(text[1:]) / 10_000  # d1499 is best
    cands = [Candidate(Chunk(f"d{i:04d}", "x", f"d{i:04d}"), 1.0) for i in range(1500)]
    ranker = VoyageReranker("rerank-2.5")
    out = ranker.rerank("q", cands, k=3)
    assert [len(b["documents"]) for b in bodies(voyage)] == [1000, 500]
    assert [b["top_k"] for b in bodies(voyage)] == [3, 3]
    assert out == [("d1499", 0.1499), ("d1498", 0.1498), ("d1497", 0.1497)]
    assert ranker.split_queries == 1


def test_calls_stay_under_600k_tokens(voyage):
    docs = [f"{i:04d}" + "x" * 2996 for i in range(700)]  # 3000 ASCII characters each
    assert (estimate_tokens(docs[0]), estimate_tokens("q")) == (1002, 3)
    cands = [Candidate(Chunk(f"c{i}", "x", d), 1.0) for i, d in enumerate(docs)]
    VoyageReranker("rerank-2.5").rerank("q", cands, k=5)
    # 597 × (3 + 1002) = 599,985 ≤ 600,000 < 598 × 1005
    assert [len(b["documents"]) for b in bodies(voyage)] == [597, 103]


def test_long_query_and_documents_are_cut_with_a_warning(voyage):
    query, long = "q" * 30_000, "y" * 100_000
    cands = [Candidate(Chunk("long", "x", long), 1.0), Candidate(Chunk("short", "x", "z"), 0.5)]
    ranker = VoyageReranker("rerank-2.5")
    with pytest.warns(RagkitWarning) as caught:
        ranker.rerank(query, cands, k=2)
    [body] = bodies(voyage)
    # query: 2 + ceil(a/3) ≤ 8,000 → a ≤ 23,994; document: 32,000 − 8,000 → a ≤ 71,994
    assert (len(body["query"]), len(body["documents"][0]), body["documents"][1]) == (
        23_994, 71_994, "z")
    assert (ranker.cut_queries, ranker.cut_documents) == (1, 1)
    assert [str(w.message).split(": ", 2)[-1][:22] for w in caught] == [
        "cut from 10002 to 8000", "1 document(s) cut to 2"]


@pytest.mark.parametrize("reply", [
    {"data": [{"index": 0, "relevance_score": 0.4}, {"index": 7, "relevance_score": 0.9}],
     "usage": {"total_tokens": 5}},
    {"data": [{"index": 0, "relevance_score": 0.4}, {"index": 0, "relevance_score": 0.9}],
     "usage": {"total_tokens": 5}},
    {"data": [{"index": 0, "relevance_score": 0.4}, {"index": -1, "relevance_score": 0.9}],
     "usage": {"total_tokens": 5}},
    {"data": [{"index": 0}, {"index": 2, "relevance_score": 0.9}], "usage": {"total_tokens": 5}},
    {"data": [{"index": 0, "relevance_score": "high"}, {"index": 2, "relevance_score": 0.9}],
     "usage": {"total_tokens": 5}},
    {"data": [{"index": 2, "relevance_score": 0.9}], "usage": {"total_tokens": 5}},
    {"data": [{"index": 0, "relevance_score": 0.4}, {"index": 2, "relevance_score": 0.9}]},
    b'{"data": [{"index": 0, "relevance',
])
def test_a_malformed_reply_keeps_the_first_stage_order(voyage, reply):
    voyage.queue.append((200, reply))
    ranker = VoyageReranker("rerank-2.5")
    with pytest.warns(RagkitWarning, match="malformed reply from Voyage"):
        out = ranker.rerank("refunds?", CANDIDATES, k=2)
    assert out == [("c0", 0.9), ("c1", 0.8)]
    assert ranker.fallbacks == 1
    voyage.queue.append((200, REPLY))  # not cached: the next run asks again
    assert ranker.rerank("refunds?", CANDIDATES, k=2) == [("c2", 0.9), ("c0", 0.4)]
    assert len(voyage.requests) == 2


def test_no_candidates_send_nothing(voyage):
    assert VoyageReranker("rerank-2.5").rerank("q", [], k=5) == []
    assert voyage.requests == []
