"""The Milvus store (Milvus Lite, embedded) against the memory store on the shipped corpus.

Parity: ragkit's BM25 as sparse vectors ranks exactly as the memory store with scores equal to
float32 precision; dense (FLAT, MaxP over windows) and hybrid rank the same up to float32
ties (two cosines equal to ~1e-7 computed in another order may swap). Also: Milvus's RRF
equals ragkit's RRF on the same candidates, the offline reranker, resumed ingestion, a failed
rebuild leaving the index answering, schema/version/dimension/VARCHAR errors, an unreachable
server, and the CLI round trip.
"""
from __future__ import annotations

import json
import grpc
import re
import socket
import zlib

import numpy as np
import pytest

pytest.importorskip("milvus_lite", reason="milvus-lite cannot be imported on this platform; "
                                          "the Milvus store tests need it")

from ragkit.cli import main  # noqa: E402
from ragkit.datasets import load_dataset  # noqa: E402
from ragkit.documents import Chunk, RagkitError  # noqa: E402
from ragkit.fusion import fuse  # noqa: E402
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig  # noqa: E402
from ragkit.runs import read_trec  # noqa: E402
from ragkit.stores import StoreSpec, parse_store  # noqa: E402
from ragkit.stores import milvus_index, milvus_schema  # noqa: E402

N_QUERIES = 40
CONFIG = IndexConfig(embedder="hash-test", tokenizer="words")  # words: no Kiwi start-up
TIE = 1e-5  # float32 cosines, and hybrid's min-max scaling of them
N_DOCS = 40  # a slice of the shipped corpus keeps each test fast


class HashEmbedder:
    """Deterministic 64-d word-hash vectors (no model): counts per hashed word, L2-normed."""

    name, fingerprint, dim = "hash-test", "hash-test-1", 64

    def __init__(self, max_tokens: int = 512) -> None:
        self.max_tokens = max_tokens

    def embed(self, texts, *, input_type="document", progress=False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, -1] = 1e-3
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % (self.dim - 1)] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def token_lengths(self, texts) -> list[int]:
        return [len(re.findall(r"\w+", t)) for t in texts]


@pytest.fixture(scope="module")
def shipped():
    data = load_dataset("data")
    docs = {d.id for d in data.documents[:N_DOCS]}
    queries = [q for q in data.queries if any(g.doc_id in docs for g in q.golden)]
    return data, [q.text for q in queries[:N_QUERIES]]


@pytest.fixture(scope="module")
def pair(shipped, tmp_path_factory):
    """(memory pipeline, the same index written to and reopened from Milvus Lite)."""
    data, _ = shipped
    embedder = HashEmbedder()
    memory = Pipeline.build(data.documents[:N_DOCS], CONFIG, progress=False, embedder=embedder)
    folder = tmp_path_factory.mktemp("milvus") / "index"
    memory.save(folder, store="milvus", progress=False)
    return memory, Pipeline.load(folder, embedder=embedder), folder


def same_up_to_ties(a, b) -> None:
    """Equal scores (to float32) at every rank, equal ids except among float32 ties (the
    last rank counts as tied: with equal scores there, an item past the cut ties it)."""
    assert len(a) == len(b)
    np.testing.assert_allclose([s for _, s in a], [s for _, s in b], rtol=TIE, atol=TIE)
    scores = [s for _, s in a]
    for i, ((x, _), (y, _)) in enumerate(zip(a, b)):
        tied = i == len(scores) - 1 or any(abs(scores[i] - scores[j]) <= TIE
                                           for j in (i - 1, i + 1) if 0 <= j < len(scores))
        assert x == y or tied, (i, a[max(0, i - 2):i + 3], b[max(0, i - 2):i + 3])


def test_milvus_bm25_equals_ragkit_bm25_exactly(pair, shipped):
    memory, milvus, _ = pair
    texts = shipped[1]
    for mine, theirs in zip(memory.search(texts, 20, SearchConfig(mode="bm25")),
                            milvus.search(texts, 20, SearchConfig(mode="bm25"))):
        assert [i for i, _ in theirs] == [i for i, _ in mine]
        np.testing.assert_allclose([s for _, s in theirs], [s for _, s in mine], rtol=1e-6)


def test_dense_and_hybrid_rank_as_the_memory_store(pair, shipped):
    memory, milvus, _ = pair
    assert len(memory.dense.owners) > len(memory.chunks)  # several windows per chunk (MaxP)
    for config in (SearchConfig(mode="dense"), SearchConfig(candidates=30)):
        for mine, theirs in zip(memory.search(shipped[1], 20, config),
                                milvus.search(shipped[1], 20, config)):
            same_up_to_ties(mine, theirs)


def test_more_queries_than_one_request_holds_come_back_in_order(pair, shipped):
    memory, milvus, _ = pair
    texts = (shipped[1] * 70)[:70]  # 64 a request: two requests
    vectors = HashEmbedder().embed(texts, input_type="query")
    assert milvus.store.grouped
    lexical, dense = milvus.store.bm25(texts, 10), milvus.store.dense(vectors, 10)
    assert len(lexical) == len(dense) == 70
    for mine, theirs in zip(memory.store.bm25(texts, 10), lexical):
        assert [i for i, _ in theirs] == [i for i, _ in mine]
    for mine, theirs in zip(memory.store.dense(vectors, 10), dense):
        same_up_to_ties(mine, theirs)


def test_chunks_come_back_from_milvus_whole(pair):
    memory, milvus, folder = pair
    assert milvus.chunks == memory.chunks
    manifest = json.loads((folder / "index.json").read_text())
    assert manifest["store"]["kind"] == "milvus" and manifest["store"]["uri"] is None
    assert milvus.store.count() == manifest["store"]["rows"] == len(memory.dense.owners)


def test_offline_rerank_reads_the_milvus_rows(pair, shipped):
    memory, milvus, _ = pair
    config = SearchConfig(rerank="offline", candidates=30, rerank_candidates=40)
    for mine, theirs in zip(memory.search(shipped[1][:20], 10, config),
                            milvus.search(shipped[1][:20], 10, config)):
        same_up_to_ties(mine, theirs)
    positions = np.array([0, 5, 17])
    vector = HashEmbedder().embed([shipped[1][0]])[0]
    np.testing.assert_allclose(milvus.store.maxp_scores(vector, positions),
                               memory.store.maxp_scores(vector, positions), atol=TIE)
    np.testing.assert_allclose(milvus.store.bm25_scores(shipped[1][0], positions),
                               memory.store.bm25_scores(shipped[1][0], positions), rtol=1e-6,
                               atol=1e-12)


def test_milvus_rrf_equals_ragkit_rrf_on_the_same_candidates(shipped, tmp_path):
    data, texts = shipped
    docs = data.documents[:N_DOCS]
    embedder = HashEmbedder(max_tokens=100_000)  # one window per chunk: Milvus fuses rows
    memory = Pipeline.build(docs, IndexConfig(embedder="hash-test", tokenizer="words", window=4096),
                            progress=False, embedder=embedder)
    assert len(memory.dense.owners) == len(memory.chunks)
    memory.save(tmp_path / "idx", store="milvus", progress=False)
    store = Pipeline.load(tmp_path / "idx", embedder=embedder).store
    vectors = embedder.embed(texts[:15], input_type="query")
    assert not store.grouped  # one row per chunk: searched without group_by, same results
    for mine, theirs in zip(memory.store.dense(vectors, 20), store.dense(vectors, 20)):
        same_up_to_ties(mine, theirs)
    theirs = store.milvus_rrf(texts[:15], vectors, depth=30, k=10, rrf_k=60)
    for text, vector, got in zip(texts[:15], vectors, theirs):
        lists = {"dense": store.dense(vector[None], 30)[0], "bm25": store.bm25([text], 30)[0]}
        same_up_to_ties(fuse(lists, "rrf", top=10, rrf_k=60), got)


def _small(data, n_docs: int) -> Pipeline:
    docs = data.documents[:n_docs]
    return Pipeline.build(docs, CONFIG, progress=False,
                          embedder=HashEmbedder())


def test_interrupted_build_resumes_without_duplicates_and_keeps_the_old_index(shipped,
                                                                              tmp_path):
    data, _ = shipped
    folder = tmp_path / "idx"
    old = _small(data, 3)
    old.save(folder, store="milvus", progress=False)
    new = _small(data, 8)
    client = milvus_schema.connect(str(folder / "milvus.db"))
    real, calls = client.insert, []

    def failing(name, rows):
        calls.append(len(rows))
        if len(calls) == 2 and failing.armed:
            failing.armed = False
            raise RuntimeError("connection lost")
        return real(name, rows)

    failing.armed = True

    client.insert = failing
    try:
        with pytest.raises(RuntimeError):
            milvus_index.save(new, folder, StoreSpec("milvus"), batch=20, progress=False)
        again = Pipeline.load(folder, embedder=HashEmbedder())  # the old index still answers
        assert again.chunks == old.chunks
        calls.clear()
        milvus_index.save(new, folder, StoreSpec("milvus"), batch=20, progress=False)
    finally:
        client.insert = real
    rows = len(new.dense.owners)
    assert sum(calls) == rows - 20  # the first batch is in and was not sent again
    reopened = Pipeline.load(folder, embedder=HashEmbedder())
    assert reopened.chunks == new.chunks
    pks = [r["pk"] for r in client.query(reopened.store.collection, filter="",
                                         output_fields=["pk"], limit=16_384)]
    assert len(pks) == len(set(pks)) == rows
    assert client.list_collections() == [reopened.store.collection]  # the old one dropped


def test_delete_document_removes_its_rows(shipped, tmp_path):
    pipeline = _small(shipped[0], 3)
    pipeline.save(tmp_path / "idx", store="milvus", progress=False)
    store = Pipeline.load(tmp_path / "idx", embedder=HashEmbedder()).store
    doc = pipeline.chunks[0].doc_id
    owned = sum(1 for o in pipeline.dense.owners if pipeline.chunks[o].doc_id == doc)
    assert store.delete_document(doc) == owned
    assert store.count() == len(pipeline.dense.owners) - owned


def test_collection_of_another_version_or_dimension_is_refused(shipped, tmp_path):
    folder = tmp_path / "idx"
    _small(shipped[0], 2).save(folder, store="milvus", progress=False)
    manifest = json.loads((folder / "index.json").read_text())
    manifest["embedder"]["dim"] = 8
    (folder / "index.json").write_text(json.dumps(manifest))
    with pytest.raises(RagkitError, match=r"holds 64-d vectors, but the index records dim 8"):
        Pipeline.load(folder)
    manifest["embedder"]["dim"] = 64
    (folder / "index.json").write_text(json.dumps(manifest))
    client = milvus_schema.connect(str(folder / "milvus.db"))
    client.alter_collection_properties(manifest["store"]["collection"],
                                       properties={"ragkit.version": "0"})
    with pytest.raises(RagkitError, match=r"made by another ragkit version or format"):
        Pipeline.load(folder)


def test_chunk_longer_than_varchar_is_named(tmp_path):
    from ragkit.documents import Document
    text = "word " * 14_000  # 70,000 bytes
    doc = Document("big.md", text)
    chunk = Chunk("big.md#0", "big.md", text)
    pipeline = Pipeline.build([doc], IndexConfig(embedder=None, contextualizer="none",
                                                    tokenizer="words"),
                              chunks=[chunk], progress=False)
    with pytest.raises(RagkitError, match=r"chunk 'big.md#0': field 'text' is 70000 bytes"):
        pipeline.save(tmp_path / "idx", store="milvus", progress=False)
    assert not (tmp_path / "idx" / "index.json").exists()


def test_unreachable_server_is_one_clear_error(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    with pytest.raises(RagkitError, match=rf"cannot reach Milvus at {re.escape(uri)}"):
        milvus_schema.connect(uri)


def test_store_specs(monkeypatch):
    monkeypatch.delenv("MILVUS_URI", raising=False)
    assert parse_store("memory") == StoreSpec()
    assert parse_store("milvus") == StoreSpec("milvus", None)
    assert parse_store("milvus:http://h:19530").uri == "http://h:19530"
    monkeypatch.setenv("MILVUS_URI", "http://env:19530")
    assert parse_store("milvus").uri == "http://env:19530"
    with pytest.raises(RagkitError, match="unknown store 'redis'"):
        parse_store("redis")


def test_cli_round_trip_on_milvus(shipped, tmp_path, capsys):
    data, texts = shipped
    queries, docs = tmp_path / "q.jsonl", tmp_path / "docs.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{i}", "text": t}) + "\n"
                               for i, t in enumerate(texts)))
    docs.write_text("".join(json.dumps({"id": d.id, "text": d.text, "title": d.title}) + "\n"
                            for d in data.documents[:N_DOCS]))
    for store in ("memory", "milvus"):
        assert main(["index", str(docs), "--out", str(tmp_path / store), "--embedder", "none",
                     "--tokenizer", "words", "--store", store]) == 0
        assert main(["search", str(tmp_path / store), "--queries", str(queries), "--mode",
                     "bm25", "--out", str(tmp_path / f"{store}.trec")]) == 0
    memory, milvus = (read_trec(tmp_path / f"{s}.trec") for s in ("memory", "milvus"))
    assert memory.keys() == milvus.keys()
    for qid, ranking in memory.items():  # BM25 ranks exactly
        assert [i for i, _ in milvus[qid]] == [i for i, _ in ranking]
        np.testing.assert_allclose([s for _, s in milvus[qid]], [s for _, s in ranking],
                                   rtol=1e-6)
    capsys.readouterr()
    assert main(["eval", "--run", str(tmp_path / "milvus.trec"), "--qrels",
                 str(_qrels(tmp_path, memory))]) == 0
    assert "Pass@5" in capsys.readouterr().out
    outs = []
    for store in ("memory", "milvus"):  # eval --index on either store: the same table
        assert main(["eval", "data", "--index", str(tmp_path / store), "--mode", "bm25"]) == 0
        outs.append(capsys.readouterr().out)
    assert "Pass@5" in outs[0] and outs[0] == outs[1]
    assert main(["index", str(docs), "--out", str(tmp_path / "memory"), "--embedder", "none",
                 "--tokenizer", "words", "--store", "milvus"]) == 2
    assert "holds an in-memory index" in capsys.readouterr().err


def test_replacing_a_document_equals_a_fresh_build_and_saves_to_milvus(shipped, tmp_path):
    from dataclasses import replace
    from ragkit.update import replace_documents
    docs = shipped[0].documents[:6]
    before = _small(shipped[0], 6)
    edited = replace(docs[2], text=docs[2].text + "\n\nA new closing paragraph on refunds.")
    after = replace_documents(before, [edited], remove=[docs[4].id])
    fresh = Pipeline.build([docs[0], docs[1], docs[3], docs[5], edited],
                           CONFIG, progress=False,
                           embedder=HashEmbedder())
    assert after.chunks == fresh.chunks
    np.testing.assert_array_equal(after.dense.owners, fresh.dense.owners)
    np.testing.assert_allclose(after.dense.vectors, fresh.dense.vectors, atol=1e-7)
    query = "refunds closing paragraph"
    assert after.search([query], 5, SearchConfig(mode="bm25")) == \
        fresh.search([query], 5, SearchConfig(mode="bm25"))
    before.save(tmp_path / "idx", store="milvus", progress=False)
    after.save(tmp_path / "idx", store="milvus", progress=False)
    assert Pipeline.load(tmp_path / "idx", embedder=HashEmbedder()).chunks == fresh.chunks


def _qrels(tmp_path, run) -> "Path":
    """TREC qrels judging each query's memory-store top hit relevant."""
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{qid} 0 {ranking[0][0]} 1\n" for qid, ranking in run.items()
                            if ranking))
    return path


class _Refused(grpc.RpcError):
    """What a Milvus server with authentication answers a bad token: gRPC UNAUTHENTICATED."""

    def code(self):
        return grpc.StatusCode.UNAUTHENTICATED

    def details(self):
        return "auth check failure, please check username, password or token"


def test_bad_token_is_one_clear_error_both_ways_pymilvus_raises_it():
    from pymilvus.exceptions import MilvusException
    uri = "http://milvus.example:19530"
    raw = _Refused()
    try:  # while connecting: wrapped by GrpcHandler._wait_for_channel_ready
        raise MilvusException(message=f"Fail connecting to server on {uri}, illegal "
                                      f"connection params or server unavailable") from raw
    except MilvusException as exc:
        wrapped = exc
    for exc in (wrapped, raw):
        error = milvus_schema.connect_error(uri, exc)
        assert isinstance(error, RagkitError)
        assert str(error) == (f"Milvus at {uri} refused the token (MILVUS_TOKEN): auth check "
                              f"failure, please check username, password or token")
    down = milvus_schema.connect_error(uri, MilvusException(message="Fail connecting"))
    assert str(down).startswith(f"cannot reach Milvus at {uri} within 5 s")


def test_ivf_flat_is_built_and_searched(shipped, tmp_path):
    pipeline = _small(shipped[0], 6)
    pipeline.save(tmp_path / "idx", StoreSpec("milvus", None, "IVF_FLAT"), progress=False)
    loaded = Pipeline.load(tmp_path / "idx", embedder=HashEmbedder())
    assert loaded.store.record()["dense_index"] == "IVF_FLAT"
    vectors = HashEmbedder().embed(shipped[1][:5], input_type="query")
    exact = pipeline.store.dense(vectors, 5)
    found = loaded.store.dense(vectors, 5)
    # nlist = 4·√rows, nprobe 32 ≥ nlist here: every list is probed, so the search is exact
    assert milvus_schema.index_params("IVF_FLAT", len(pipeline.dense.owners))["nlist"] <= 32
    for mine, theirs in zip(exact, found):
        same_up_to_ties(mine, theirs)


def _docs_file(path, docs) -> None:
    path.write_text("".join(json.dumps({"id": d.id, "text": d.text, "title": d.title}) + "\n"
                            for d in docs))


@pytest.mark.parametrize("store", ["memory", "milvus"])
def test_index_update_equals_a_fresh_build(shipped, tmp_path, capsys, store):
    from dataclasses import replace
    data, texts = shipped
    docs = data.documents[:8]
    edited = replace(docs[2], text=docs[2].text + "\n\nA new closing paragraph on refunds.")
    after = [docs[0], docs[1], edited, docs[3], data.documents[20], docs[5], docs[6], docs[7]]
    v1, v2, queries = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl", tmp_path / "q.jsonl"
    _docs_file(v1, docs)
    _docs_file(v2, after)  # doc 2 edited, doc 4 removed, another added in its place
    queries.write_text("".join(json.dumps({"id": f"q{i}", "text": t}) + "\n"
                               for i, t in enumerate(texts + ["refunds closing paragraph"])))
    common = ["--embedder", "none", "--tokenizer", "words"]
    assert main(["index", str(v1), "--out", str(tmp_path / "idx"), "--store", store,
                 *common]) == 0
    capsys.readouterr()
    assert main(["index", str(v2), "--out", str(tmp_path / "idx"), "--update", *common]) == 0
    assert "2 documents added or changed, 1 removed, 6 unchanged" in capsys.readouterr().out
    assert main(["index", str(v2), "--out", str(tmp_path / "fresh"), *common]) == 0
    for name in ("idx", "fresh"):
        assert main(["search", str(tmp_path / name), "--queries", str(queries), "--mode",
                     "bm25", "--out", str(tmp_path / f"{name}.trec")]) == 0
    assert (Pipeline.load(tmp_path / "idx").chunks == Pipeline.load(tmp_path / "fresh").chunks)
    updated, fresh = read_trec(tmp_path / "idx.trec"), read_trec(tmp_path / "fresh.trec")
    assert updated.keys() == fresh.keys()
    for qid, ranking in fresh.items():  # same ranking; Milvus scores are float32
        assert [i for i, _ in updated[qid]] == [i for i, _ in ranking]
        np.testing.assert_allclose([s for _, s in updated[qid]], [s for _, s in ranking],
                                   rtol=1e-6)
    capsys.readouterr()
    assert main(["index", str(v2), "--out", str(tmp_path / "idx"), "--update", *common]) == 0
    assert "0 documents added or changed, 0 removed, 8 unchanged" in capsys.readouterr().out
    other = "memory" if store == "milvus" else "milvus"
    assert main(["index", str(v2), "--out", str(tmp_path / "idx"), "--update", "--store", other,
                 *common]) == 2
    assert f"--update keeps the index's store ({store})" in capsys.readouterr().err
    # an index option that differs from the index's own is refused, not silently ignored
    before = (tmp_path / "idx" / "index.json").read_bytes()
    assert main(["index", str(v2), "--out", str(tmp_path / "idx"), "--update", *common,
                 "--chunk-size", "128"]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {tmp_path / 'idx'}: --update keeps the index's own options, and "
        f"--chunk-size 128 differs from its 512; rebuild the index to change it\n")
    assert (tmp_path / "idx" / "index.json").read_bytes() == before


def test_update_of_a_milvus_index_keeps_the_unchanged_vectors(shipped, tmp_path):
    from dataclasses import replace
    from ragkit.update import update_index
    docs = shipped[0].documents[:5]
    _small(shipped[0], 5).save(tmp_path / "idx", store="milvus", progress=False)
    loaded = Pipeline.load(tmp_path / "idx", embedder=HashEmbedder())
    edited = replace(docs[1], text=docs[1].text + "\n\nRefunds take five days.")
    now = [docs[0], edited, docs[3], docs[4]]
    new, changed, removed = update_index(loaded, now)
    assert [d.id for d in changed] == [edited.id] and removed == [docs[2].id]
    fresh = Pipeline.build(now, CONFIG, progress=False, embedder=HashEmbedder())
    assert new.chunks == fresh.chunks
    np.testing.assert_array_equal(new.dense.owners, fresh.dense.owners)
    np.testing.assert_allclose(new.dense.vectors, fresh.dense.vectors, atol=1e-6)
    new.save(tmp_path / "idx", store="milvus", progress=False)
    again = Pipeline.load(tmp_path / "idx", embedder=HashEmbedder())
    assert again.chunks == fresh.chunks
    for mine, theirs in zip(fresh.search(shipped[1][:10], 10, SearchConfig(mode="bm25")),
                            again.search(shipped[1][:10], 10, SearchConfig(mode="bm25"))):
        assert [i for i, _ in mine] == [i for i, _ in theirs]
