"""Voyage embedders through the real voyageai SDK against a loopback HTTP stand-in."""
from __future__ import annotations

import base64
import hashlib

import numpy as np
import pytest

from ragkit import dense
from ragkit.cli import main
from ragkit.documents import Document, RagkitError
from ragkit.embed import get_embedder
from ragkit.embed.voyage import VoyageContextEmbedder, VoyageEmbedder, estimate_tokens
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from voyage_loopback import KEY, Loopback, serve


def vector(text: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def b64(text: str, dim: int) -> str:
    return base64.b64encode(vector(text, dim).tobytes()).decode()


class Stand_in(Loopback):
    """Answers deterministic vectors for every text (and every chunk in context)."""

    def default(self, body: dict) -> dict:
        dim = body.get("output_dimension") or 1024
        if self.path.endswith("/contextualizedembeddings"):
            data = [{"index": i, "data": [{"index": j, "embedding": b64(c, dim)}
                                          for j, c in enumerate(doc)]}
                    for i, doc in enumerate(body["inputs"])]
        else:
            data = [{"index": i, "embedding": b64(t, dim)} for i, t in enumerate(body["input"])]
        return {"data": data, "usage": {"total_tokens": 7}}


@pytest.fixture
def voyage(monkeypatch, tmp_path):
    """A loopback Voyage API answering vectors (tests/voyage_loopback.py)."""
    yield from serve(Stand_in, monkeypatch, tmp_path)


def bodies(server, path: str = "/v1/embeddings") -> list[dict]:
    return [body for p, body, _ in server.requests if p == path]


def test_documents_and_queries_carry_model_and_input_type_and_hit_the_cache(voyage):
    embedder = get_embedder("voyage:voyage-3.5")
    docs = embedder.embed(["refunds within seven days", "revenue grew 3 %"])
    query = embedder.embed(["how long do refunds take?"], input_type="query")
    np.testing.assert_allclose(docs[1], vector("revenue grew 3 %", 1024), atol=1e-6)
    np.testing.assert_allclose(query[0], vector("how long do refunds take?", 1024), atol=1e-6)
    sent = bodies(voyage)
    assert [(b["model"], b["input_type"], b["truncation"]) for b in sent] == [
        ("voyage-3.5", "document", True), ("voyage-3.5", "query", True)]
    assert sorted(sent[0]["input"]) == ["refunds within seven days", "revenue grew 3 %"]
    assert voyage.requests[0][2] == f"Bearer {KEY}"
    embedder.embed(["revenue grew 3 %"])
    assert len(voyage.requests) == 2  # served from the embedding cache


def test_batches_stay_within_text_and_token_limits(voyage):
    embedder = VoyageEmbedder("voyage-3.5", output_dimension=8)
    out = embedder.embed([f"t{i}" for i in range(2300)])
    assert out.shape == (2300, 8)
    assert [len(b["input"]) for b in bodies(voyage)] == [1000, 1000, 300]
    assert all(b["model"] == "voyage-3.5" and b["output_dimension"] == 8 for b in bodies(voyage))
    voyage.requests.clear()
    long = [f"{i:04d}" + "x" * 2996 for i in range(700)]  # 3000 ASCII chars: 1002 tokens each
    assert estimate_tokens(long[0]) == 1002
    embedder.embed(long)
    sizes = [len(b["input"]) for b in bodies(voyage)]
    assert sizes == [319, 319, 62]  # 319 × 1002 = 319,638 ≤ 320K < 320 × 1002
    assert [b["input"][0] for b in bodies(voyage)] == [long[0], long[319], long[638]]


def test_rate_limit_then_success_is_retried(voyage):
    voyage.queue.append((429, {"detail": "Rate limit exceeded"}))
    out = VoyageEmbedder("voyage-3-large").embed(["one", "two"])
    np.testing.assert_allclose(out, [vector("one", 1024), vector("two", 1024)], atol=1e-6)
    assert len(bodies(voyage)) == 2 and bodies(voyage)[0] == bodies(voyage)[1]


@pytest.mark.parametrize("status, attempts, message", [
    (401, 1, r"voyage:voyage-3.5: Voyage refused the API key \(HTTP 401\): bad key; check "
             r"VOYAGE_API_KEY"),
    (429, 3, r"Voyage rate limit \(HTTP 429\) after 3 attempts: slow down"),
    (500, 1, r"Voyage request failed \(HTTP 500\)"),
    # statuses voyageai 0.5 has no class for: 529 and 520 were an AttributeError traceback
    # (read as replies), 404's line held the response's headers
    (529, 3, r"^voyage:voyage-3.5: Voyage request failed \(HTTP 529\): overloaded; re-run"),
    (520, 3, r"^voyage:voyage-3.5: Voyage request failed \(HTTP 520\): origin error; re-run"),
    (404, 1, r"^voyage:voyage-3.5: Voyage request failed \(HTTP 404\): not found; re-run"),
])
def test_errors_past_retries_are_one_clear_line(voyage, status, attempts, message):
    detail = {401: "bad key", 429: "slow down", 500: "boom", 529: "overloaded",
              520: "origin error", 404: "not found"}[status]
    voyage.queue.extend([(status, {"detail": detail})] * 3)
    with pytest.raises(RagkitError, match=message) as info:
        VoyageEmbedder("voyage-3.5").embed(["x"])
    assert KEY not in str(info.value) and "\n" not in str(info.value)
    assert "Content-Type" not in str(info.value) and "{" not in str(info.value)
    assert len(voyage.requests) == attempts


def test_an_overload_the_sdk_does_not_know_is_retried_like_a_503(voyage):
    voyage.queue.append((529, {"detail": "overloaded"}))
    out = VoyageEmbedder("voyage-3-large").embed(["one"])
    np.testing.assert_allclose(out, [vector("one", 1024)], atol=1e-6)
    assert len(voyage.requests) == 2


def test_missing_key_says_which_variable_to_set(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    for name in ("voyage:voyage-3.5", "voyage-context:voyage-context-3"):
        embedder = get_embedder(name, cache=False)  # the key is checked by the first request
        with pytest.raises(RagkitError, match=f"the {name} embedder .* set VOYAGE_API_KEY"):
            embedder.embed(["Refunds?"], input_type="query")
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "Refunds within seven days."}\n')
    status = main(["index", str(docs), "--out", str(tmp_path / "idx"),
                   "--embedder", "voyage:voyage-3.5"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "set VOYAGE_API_KEY" in err
    # searching a Voyage index: not told to use 'auto', which cannot read its vectors
    assert err.endswith("or use an offline embedder ('auto', 'e5-small') to build; an index "
                        "built with voyage:voyage-3.5 is searched with the key, or by --mode "
                        "bm25 without it\n")


def test_a_new_build_without_the_key_stops_before_measuring_its_windows(
        monkeypatch, tmp_path, capsys):
    """`ragkit index --embedder voyage:MODEL` without a key measured every window of every
    chunk under a `windows` bar (40,000 chunks: 14 s) before its one line; the first chunk's
    windows are looked up first, and a new build (not in the cache) stops at once."""
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(dense, "BAR_DELAY", 0)  # any windows bar shows at once
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(f'{{"id": "d{i}", "text": "Refunds take {i} days."}}\n'
                            for i in range(50)))
    status = main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder",
                   "voyage:voyage-3.5"])
    assert (status, capsys.readouterr().err) == (2, (
        "ragkit: error: the voyage:voyage-3.5 embedder calls the Voyage API and needs a key: "
        "set VOYAGE_API_KEY (or VOYAGE_API_KEY_PATH to a file holding it), or use an offline "
        "embedder ('auto', 'e5-small') to build; an index built with voyage:voyage-3.5 is "
        "searched with the key, or by --mode bm25 without it\n"))
    assert not (tmp_path / "idx").exists()


def test_unknown_embedder_lists_names_and_prefixes():
    with pytest.raises(RagkitError, match=r"known embedders: minilm, auto, use-multilingual, "
                                          r"e5-small, voyage:MODEL, voyage-context:MODEL"):
        get_embedder("voyager:x")


DOCS = [
    Document("acme.md", "# Results\n\nRevenue grew 3 % over the previous quarter.\n\n"
             "# Outlook\n\nMargins held and costs fell in every region we serve.", "ACME Q2"),
    Document("refund.md", "Refunds are accepted within seven days of purchase.", "Refunds"),
]


def test_voyage_context_sends_each_documents_chunks_as_one_inner_list(voyage):
    config = IndexConfig(chunk_size=16, overlap=0, contextualizer="none",
                         embedder="voyage-context:voyage-context-3")
    pipeline = Pipeline.build(DOCS, config, progress=False)
    (request,) = bodies(voyage, "/v1/contextualizedembeddings")
    by_doc = [[c.text for c in pipeline.chunks if c.doc_id == d.id] for d in DOCS]
    assert len(by_doc[0]) > 1  # the first document really has several chunks
    assert request["inputs"] == by_doc
    assert (request["model"], request["input_type"]) == ("voyage-context-3", "document")
    assert len(pipeline.dense.vectors) == len(pipeline.chunks)  # one vector per chunk
    np.testing.assert_allclose(pipeline.dense.vectors[0], vector(by_doc[0][0], 1024), atol=1e-6)
    pipeline.search(["refund window?"], k=2, config=SearchConfig("dense"))
    query = bodies(voyage, "/v1/contextualizedembeddings")[-1]
    assert (query["inputs"], query["input_type"]) == ([["refund window?"]], "query")
    Pipeline.build(DOCS, config, progress=False)  # same documents again: all from the cache
    assert len(voyage.requests) == 2


def test_a_document_past_the_context_limit_is_sent_in_parts(voyage):
    chunks = [f"{i:04d}" + "y" * 2996 for i in range(40)]  # 40 × 1002 tokens > 32K
    (vectors,) = VoyageContextEmbedder().embed_documents([chunks])
    assert vectors.shape == (40, 1024)
    (request,) = bodies(voyage, "/v1/contextualizedembeddings")
    assert [len(part) for part in request["inputs"]] == [31, 9]  # 31 × 1002 ≤ 32K < 32 × 1002


def _raw(rows: list[np.ndarray]) -> dict:
    return {"data": [{"index": i, "embedding": base64.b64encode(
        np.asarray(r, np.float32).tobytes()).decode()} for i, r in enumerate(rows)],
        "usage": {"total_tokens": 7}}


@pytest.mark.parametrize("reply, message", [
    (_raw([np.full(1024, np.nan)]), "1 vector(s) holding NaN or infinite values (the first: "
                                    "row 0 of its reply); nothing was kept from that reply"),
    (_raw([np.zeros(1024)]), "1 vector(s) holding all zeros (the first: row 0 of its reply)"),
    (_raw([]), "Voyage returned 0 vectors for 1 texts"),
])
@pytest.mark.parametrize("input_type", ["document", "query"])
def test_nan_zero_or_missing_vectors_are_refused_not_kept(voyage, reply, message, input_type):
    """NaN and all-zero vectors were kept (the index failed only at its first search, or
    scored every chunk 0; a NaN query vector made every fused score NaN); one vector too few
    was a traceback."""
    embedder = get_embedder("voyage:voyage-3.5")
    voyage.queue.append((200, reply))
    with pytest.raises(RagkitError) as info:
        embedder.embed(["one text"], input_type=input_type)
    assert str(info.value).startswith("voyage:voyage-3.5: Voyage returned ")
    assert message in str(info.value)
    got = embedder.embed(["one text"], input_type=input_type)  # nothing bad was cached
    np.testing.assert_allclose(got[0], vector("one text", 1024), atol=1e-6)
    assert len(voyage.requests) == 2


def test_an_index_with_nan_vectors_is_not_written(voyage, tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "Refunds within seven days."}\n')
    voyage.queue.append((200, _raw([np.full(1024, np.nan)])))
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"),
                 "--embedder", "voyage:voyage-3.5"]) == 2
    assert "holding NaN or infinite values" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()
