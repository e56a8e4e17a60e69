"""An index built with a Voyage embedder is searched in another process through the CLI.

The installed `ragkit` runs in subprocesses against a loopback Voyage API (the real voyageai
SDK talks to it): one process builds the index, others search it, answer from it and build
it again, as a user would.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_errors import one_error_line
from voyage_loopback import KEY, Loopback, serve

from ragkit import standin

RAGKIT = str(Path(sys.executable).parent / "ragkit")
DOCS = ('{"id": "kettle", "text": "The kettle boils water in two minutes."}\n'
        '{"id": "toaster", "text": "A toaster browns bread slices evenly."}\n'
        '{"id": "grinder", "text": "Grinders crush coffee beans to powder."}\n')
QUERIES = ('{"id": "q1", "text": "how long does the kettle take"}\n'
           '{"id": "q2", "text": "coffee beans"}\n')


def vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    return (v / np.linalg.norm(v)).tolist()


class Vectors(Loopback):
    """Deterministic vectors for every text, and for every chunk of a document in context."""

    def default(self, body: dict) -> dict:
        dim = body.get("output_dimension") or 1024
        if self.path.endswith("/contextualizedembeddings"):
            data = [{"index": i, "data": [{"index": j, "embedding": vector(c, dim)}
                                          for j, c in enumerate(doc)]}
                    for i, doc in enumerate(body["inputs"])]
        else:
            data = [{"index": i, "embedding": vector(t, dim)} for i, t in enumerate(body["input"])]
        return {"data": data, "usage": {"total_tokens": 7}}


@pytest.fixture
def voyage(monkeypatch, tmp_path):
    yield from serve(Vectors, monkeypatch, tmp_path)


def ragkit(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return subprocess.run([RAGKIT, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def sent(server, start: int = 0) -> list[tuple[str, str, str]]:
    """(path, model, input_type) of each request since `start`."""
    return [(path, body["model"], body["input_type"])
            for path, body, _ in server.requests[start:]]


@pytest.mark.parametrize("embedder, path", [
    ("voyage:voyage-3.5", "/v1/embeddings"),
    ("voyage-context:voyage-context-3", "/v1/contextualizedembeddings"),
])
def test_a_voyage_index_is_searched_answered_and_rebuilt_from_other_processes(
        voyage, tmp_path, embedder, path):
    model = embedder.partition(":")[2]
    (tmp_path / "docs.jsonl").write_text(DOCS)
    (tmp_path / "q.jsonl").write_text(QUERIES)
    built = ragkit("index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                   "--embedder", embedder)
    assert built.returncode == 0, built.stderr
    indexed = len(voyage.requests)
    assert indexed >= 1 and sent(voyage) == [(path, model, "document")] * indexed

    for mode in ("dense", "hybrid"):
        start = len(voyage.requests)
        run = tmp_path / f"{mode}.trec"
        found = ragkit("search", tmp_path / "ix", "--queries", tmp_path / "q.jsonl",
                       "--mode", mode, "--k", "2", "--out", run)
        assert found.returncode == 0, found.stderr
        # the same questions again: their vectors come from the embedding cache
        assert sent(voyage, start) == ([(path, model, "query")] if mode == "dense" else [])
        rows = [line.split() for line in run.read_text().splitlines()]
        assert [r[0] for r in rows] == ["q1", "q1", "q2", "q2"]

    start = len(voyage.requests)
    asked = ragkit("ask", "--index", tmp_path / "ix", "how long does the kettle take?")
    assert asked.returncode == 0, asked.stderr
    assert sent(voyage, start) == [(path, model, "query")]

    start = len(voyage.requests)
    again = ragkit("index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix2",
                   "--embedder", embedder)
    assert again.returncode == 0, again.stderr
    assert len(voyage.requests) == start  # every document vector came from the cache


@pytest.mark.parametrize("embedder", ["voyage:voyage-3.5", "voyage-context:voyage-context-3"])
def test_cached_query_vectors_search_a_voyage_index_without_the_key(
        voyage, tmp_path, monkeypatch, embedder):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    (tmp_path / "q.jsonl").write_text(QUERIES)
    assert ragkit("index", tmp_path / "docs.jsonl", "--out", tmp_path / "ix",
                  "--embedder", embedder).returncode == 0
    keyed = ragkit("search", tmp_path / "ix", "--queries", tmp_path / "q.jsonl", "--mode",
                   "dense", "--k", "2", "--out", tmp_path / "keyed.trec")
    assert keyed.returncode == 0, keyed.stderr
    start = len(voyage.requests)
    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    # every query vector is in the embedding cache: no key needed, no request sent
    cached = ragkit("search", tmp_path / "ix", "--queries", tmp_path / "q.jsonl", "--mode",
                    "dense", "--k", "2", "--out", tmp_path / "cached.trec")
    assert cached.returncode == 0, cached.stderr
    assert (tmp_path / "cached.trec").read_text() == (tmp_path / "keyed.trec").read_text()
    # a question not in the cache still needs the key: the same one line as before
    (tmp_path / "new.jsonl").write_text('{"id": "q3", "text": "bread slices"}\n')
    new = ragkit("search", tmp_path / "ix", "--queries", tmp_path / "new.jsonl", "--mode",
                 "dense", "--k", "2", "--out", tmp_path / "new.trec")
    assert one_error_line(new) == (
        f"ragkit: error: the {embedder} embedder calls the Voyage API and needs a key: set "
        f"VOYAGE_API_KEY (or VOYAGE_API_KEY_PATH to a file holding it), or use an offline "
        f"embedder ('auto', 'e5-small') to build; an index built with {embedder} is searched "
        f"with the key, or by --mode bm25 without it")
    assert not (tmp_path / "new.trec").exists() and len(voyage.requests) == start


@pytest.mark.parametrize("embedder", ["voyage:voyage-3.5", "voyage-context:voyage-context-3"])
def test_a_build_without_the_voyage_key_stops_before_claude_writes_a_context(
        voyage, tmp_path, monkeypatch, embedder):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    claude: list[str] = []

    def handler(path, body):
        claude.append(path)
        return standin.respond(path, body)

    def build(out: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([RAGKIT, "index", tmp_path / "docs.jsonl", "--out", tmp_path / out,
                               "--contextualizer", "claude", "--embedder", embedder, *extra],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ANTHROPIC_API_KEY": "x",
                                   "ANTHROPIC_BASE_URL": url})

    monkeypatch.delenv("VOYAGE_API_KEY")
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)
    with standin.serve(handler) as url:
        for extra in ([], ["--batch"]):  # before: the contexts were paid for, then this line
            assert one_error_line(build("ix", *extra)) == (
                f"ragkit: error: the {embedder} embedder calls the Voyage API and needs a key: "
                f"set VOYAGE_API_KEY (or VOYAGE_API_KEY_PATH to a file holding it), or use an "
                f"offline embedder ('auto', 'e5-small') to build; an index built with "
                f"{embedder} is searched with the key, or by --mode bm25 without it")
            assert claude == [] and voyage.requests == [] and not (tmp_path / "ix").exists()
        monkeypatch.setenv("VOYAGE_API_KEY", KEY)
        assert build("ix").returncode == 0
        asked, embedded = len(claude), len(voyage.requests)
        assert asked >= 2 and embedded >= 1
        # no key again, but every context is in the call cache and every vector in the
        # embedding cache: nothing to send, so the build needs no key
        monkeypatch.delenv("VOYAGE_API_KEY")
        again = build("ix2")
        assert again.returncode == 0, again.stderr
        assert (len(claude), len(voyage.requests)) == (asked, embedded)
