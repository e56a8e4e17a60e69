import dataclasses
import json
import re
import zlib

import numpy as np
import pytest

from ragkit import embed
from ragkit.dense import DenseIndex, top_k
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig, is_index


class HashEmbedder:
    """A deterministic bag-of-words embedder for tests (no model needed)."""

    name, dim, max_tokens = "hash-test", 64, 256

    def __init__(self):
        self.calls = []

    def embed(self, texts, *, input_type="document", progress=False):
        self.calls.append((input_type, list(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def token_lengths(self, texts):
        return [len(t.split()) + 2 for t in texts]


DOCS = [
    Document("acme-q2.md", "Revenue grew 3 % over the previous quarter. Margins held.",
             "ACME Corp quarterly report Q2 2023"),
    Document("globex-q2.md", "Revenue grew 5 % over the previous quarter. Costs fell.",
             "Globex quarterly report Q2 2023"),
    Document("refund.md", "Refunds are accepted within seven days of purchase.", "Refund policy"),
]


@pytest.fixture
def pipeline():
    return Pipeline.build(DOCS, IndexConfig(embedder="hash-test"), progress=False,
                          embedder=HashEmbedder())


def test_structural_context_disambiguates_alike_chunks(pipeline):
    assert pipeline.chunks[0].context.startswith("Document: ACME Corp quarterly report")
    for mode in ("bm25", "dense", "hybrid"):
        (ranking,) = pipeline.search(["How much did ACME revenue grow?"], k=3,
                                     config=SearchConfig(mode=mode))
        assert ranking[0][0] == "acme-q2.md#0", mode


def test_without_context_the_alike_chunks_are_confused():
    bare = Pipeline.build(DOCS, IndexConfig(contextualizer="none", embedder=None), progress=False)
    (ranking,) = bare.search(["How much did ACME revenue grow?"], k=3, config=SearchConfig("bm25"))
    assert ranking[0][1] == ranking[1][1]  # both reports score the same without their titles


def test_save_load_roundtrip_gives_identical_results(pipeline, tmp_path):
    pipeline.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [
        "bm25", "chunks.jsonl", "chunks.offsets.npy", "dense_owners.npy", "dense_vectors.npy",
        "index.json"]
    first = json.loads((tmp_path / "idx" / "chunks.jsonl").read_text().splitlines()[0])
    assert set(first) >= {"id", "doc_id", "text", "context"}
    loaded = Pipeline.load(tmp_path / "idx", embedder=HashEmbedder())
    query = ["refund within seven days"]
    for mode in ("bm25", "dense", "hybrid"):
        assert loaded.search(query, 3, SearchConfig(mode)) == pipeline.search(query, 3, SearchConfig(mode))
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # no temporary folder left


def test_failed_save_leaves_previous_index_untouched(pipeline, tmp_path, monkeypatch):
    pipeline.save(tmp_path / "idx")
    before = (tmp_path / "idx" / "chunks.jsonl").read_text()
    monkeypatch.setattr(pipeline.bm25, "save", lambda folder: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(RagkitError, match=r"idx: cannot write a ragkit index \(disk full\)"):
        pipeline.save(tmp_path / "idx")
    assert (tmp_path / "idx" / "chunks.jsonl").read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


def test_index_from_another_version_is_refused(pipeline, tmp_path):
    pipeline.save(tmp_path / "idx")
    manifest = tmp_path / "idx" / "index.json"
    manifest.write_text(manifest.read_text().replace('"version": 1', '"version": 99'))
    with pytest.raises(RagkitError, match=r"index.json: field 'version': index format 99"):
        Pipeline.load(tmp_path / "idx")
    with pytest.raises(RagkitError, match="not a ragkit index"):
        Pipeline.load(tmp_path)


# ---------------------------------------------------------------------- lossless save / load

class FingerprintedEmbedder(HashEmbedder):
    """HashEmbedder with explicit weights: another fingerprint means other vectors."""

    def __init__(self, fingerprint="weights-v1", dim=64):
        super().__init__()
        self.fingerprint, self.dim = fingerprint, dim


def saved(pipeline, tmp_path):
    return pipeline.save(tmp_path / "idx")


def manifest(folder):
    return json.loads((folder / "index.json").read_text())


def rewrite_rows(folder, edit):
    path = folder / "chunks.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in edit(rows)))


def test_chunk_metadata_survives_save_and_load(tmp_path):
    chunks = [Chunk("acme-q2.md#0", "acme-q2.md", DOCS[0].text, start=0, end=len(DOCS[0].text),
                    metadata={"page": 3, "tags": ["finance", "ACME"], "score": 0.5}),
              Chunk("refund.md#0", "refund.md", DOCS[2].text)]
    built = Pipeline.build(DOCS, IndexConfig(embedder=None), chunks=chunks, progress=False)
    loaded = Pipeline.load(saved(built, tmp_path))
    assert loaded.chunks == built.chunks
    assert loaded.chunks[0].metadata == {"page": 3, "tags": ["finance", "ACME"], "score": 0.5}
    assert loaded.chunks[1].metadata == {}


def test_index_json_records_the_embedder_actually_used(tmp_path):
    custom = Pipeline.build(DOCS, IndexConfig(embedder="mine"), progress=False,
                            embedder=FingerprintedEmbedder())
    assert manifest(saved(custom, tmp_path))["embedder"] == {
        "name": "hash-test", "dim": 64, "max_tokens": 256, "fingerprint": "weights-v1"}
    bare = Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    assert manifest(bare.save(tmp_path / "bare"))["embedder"] is None


def test_custom_embedder_index_needs_that_embedder_for_dense_search(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)  # built with HashEmbedder, which has no fingerprint
    assert manifest(folder)["embedder"]["fingerprint"] == "hash-test"  # falls back to name
    loaded = Pipeline.load(folder)
    (ranking,) = loaded.search(["refund within seven days"], 1, SearchConfig("bm25"))
    assert ranking[0][0] == "refund.md#0"  # BM25 needs no embedder
    with pytest.raises(RagkitError, match=r"built with the in-code embedder 'hash-test' "
                                          r"\(dim 64, fingerprint hash-test\).*embedder=\.\.\."):
        loaded.search(["refund"], 1, SearchConfig("dense"))


@pytest.mark.parametrize("other, message", [
    (FingerprintedEmbedder("weights-v2"), "fingerprint weights-v2"),
    (FingerprintedEmbedder("weights-v1", dim=32), "dim 32"),
])
def test_loading_with_another_embedder_is_refused(tmp_path, other, message):
    built = Pipeline.build(DOCS, IndexConfig(embedder="mine"), progress=False,
                           embedder=FingerprintedEmbedder())
    folder = saved(built, tmp_path)
    with pytest.raises(RagkitError, match=r"built with embedder 'hash-test' \(dim 64, "
                                          r"fingerprint weights-v1\), not .*" + message):
        Pipeline.load(folder, embedder=other)
    assert Pipeline.load(folder, embedder=FingerprintedEmbedder()).dense is not None


def test_registered_embedder_is_checked_against_the_record(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    built = Pipeline.build(DOCS, IndexConfig(embedder="mine"), progress=False,
                           embedder=FingerprintedEmbedder())
    folder = saved(built, tmp_path)
    query = ["refund within seven days"]
    monkeypatch.setitem(embed.EMBEDDERS, "mine", lambda: FingerprintedEmbedder("retrained"))
    with pytest.raises(RagkitError, match="fingerprint weights-v1.*fingerprint retrained"):
        Pipeline.load(folder).search(query, 1, SearchConfig("dense"))
    monkeypatch.setitem(embed.EMBEDDERS, "mine", FingerprintedEmbedder)
    assert Pipeline.load(folder).search(query, 3, SearchConfig("dense")) == \
        built.search(query, 3, SearchConfig("dense"))


def test_index_written_before_embedder_and_metadata_were_recorded_loads(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)
    old = {k: v for k, v in manifest(folder).items() if k != "embedder"}
    (folder / "index.json").write_text(json.dumps(old))
    rewrite_rows(folder, lambda rows: [{k: v for k, v in r.items() if k != "metadata"}
                                       for r in rows])
    (folder / "chunks.offsets.npy").unlink()  # written before the row offsets, too
    loaded = Pipeline.load(folder, embedder=HashEmbedder())
    assert loaded.embedder_record is None and loaded.chunks[0].metadata == {}
    query = ["refund within seven days"]
    assert loaded.search(query, 3) == pipeline.search(query, 3)
    with pytest.raises(RagkitError, match="gives 32-d vectors, but this index holds 64-d"):
        Pipeline.load(folder, embedder=FingerprintedEmbedder(dim=32))
    assert "embedder" not in manifest(loaded.save(tmp_path / "again"))  # unknown stays unknown


def test_corrupt_index_json_names_file_and_line(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)
    (folder / "index.json").write_text('{\n  "format": "ragkit-index",\n  "version": 1,,\n}')
    with pytest.raises(RagkitError, match=r"idx/index.json:3: malformed JSON \(Expecting"):
        Pipeline.load(folder)
    assert not is_index(folder)
    (folder / "index.json").unlink()
    with pytest.raises(RagkitError, match=r"idx: not a ragkit index \(no index.json\)"):
        Pipeline.load(folder)


@pytest.mark.parametrize("edit, message", [
    (lambda rows: [rows[0], {k: v for k, v in rows[1].items() if k != "text"}, rows[2]],
     r"chunks.jsonl:2: field 'text': missing"),
    (lambda rows: [rows[0], rows[1], dict(rows[2], start="0")],
     r"chunks.jsonl:3: field 'start': expected int, got str"),
    (lambda rows: [dict(rows[0], metadata=[1]), *rows[1:]],
     r"chunks.jsonl:1: field 'metadata': expected dict, got list"),
    (lambda rows: rows[:2], r"chunks.jsonl: 2 chunks, but index.json field 'chunks' says 3"),
])
def test_bad_chunk_rows_name_file_line_and_field(pipeline, tmp_path, edit, message):
    folder = saved(pipeline, tmp_path)
    rewrite_rows(folder, edit)
    with pytest.raises(RagkitError, match=message):
        Pipeline.load(folder)


def test_chunks_that_are_not_json_or_absent(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)
    path = folder / "chunks.jsonl"
    path.write_text(path.read_text() + '{"id": "x", "doc_id"\n')
    with pytest.raises(RagkitError, match=r"chunks.jsonl:4: malformed JSON"):
        Pipeline.load(folder)
    path.unlink()
    with pytest.raises(RagkitError, match=r"chunks.jsonl: missing"):
        Pipeline.load(folder)


def test_chunk_count_must_match_bm25(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)
    rewrite_rows(folder, lambda rows: rows[:2])
    (folder / "index.json").write_text(json.dumps(dict(manifest(folder), chunks=2)))
    with pytest.raises(RagkitError, match=r"bm25.json: field 'n_docs': 3 documents, but the "
                                          r"index has 2 chunks"):
        Pipeline.load(folder)


@pytest.mark.parametrize("vectors, owners, message", [
    (np.zeros((3, 64), np.float32), np.array([0, 1]), r"dense_owners.npy: 2 rows, but "
                                                       r"dense_vectors.npy has 3"),
    (np.zeros((3, 64), np.float32), np.array([0, 1, 3]), r"dense_owners.npy: damaged \(chunk "
     r"positions 0..3, but the index has 3 chunks\); rebuild the index"),
    (np.zeros((3, 64), np.float32), np.array([0, 2, 1]), r"dense_owners.npy: damaged \(chunk "
     r"positions out of order\)"),
    (np.zeros((3, 64), np.float32), np.array([0, 0, 0]), r"dense_owners.npy: damaged \(chunk "
     r"1 of 3 owns no vector; every chunk owns at least one\); rebuild the index"),
    (np.zeros((3, 64), np.float32), np.array([0, 0, 2]), r"chunk 1 of 3 owns no vector"),
    (np.zeros((3, 64), np.float32), np.array([1, 1, 2]), r"chunk 0 of 3 owns no vector"),
    (np.zeros((0, 64), np.float32), np.zeros(0, np.int64), r"dense_owners.npy: damaged \(no "
     r"vector, but the index has 3 chunks\)"),
    (np.zeros((3, 32), np.float32), np.array([0, 1, 2]), r"dense_vectors.npy: vectors are "
                                                          r"32-d, but .* records dim 64"),
])
def test_dense_files_are_checked_against_the_chunks(pipeline, tmp_path, vectors, owners,
                                                    message):
    folder = saved(pipeline, tmp_path)
    np.save(folder / "dense_vectors.npy", vectors)
    np.save(folder / "dense_owners.npy", owners)
    with pytest.raises(RagkitError, match=message):
        Pipeline.load(folder, embedder=HashEmbedder())


def test_search_refuses_owners_that_leave_chunks_without_a_vector(pipeline, tmp_path, capsys):
    """All-zero owners passed as sorted and in range: a dense search then found 1 chunk."""
    from ragkit.cli import main
    folder = saved(pipeline, tmp_path)
    np.save(folder / "dense_owners.npy", np.zeros(len(pipeline.dense.owners), np.int64))
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "refund"}\n')
    assert main(["search", str(folder), "--queries", str(tmp_path / "q.jsonl"), "--mode",
                 "dense", "--out", str(tmp_path / "r.trec")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ragkit: error: {folder}/dense_owners.npy: damaged (chunk 1 of {len(pipeline.chunks)} "
        f"owns no vector; every chunk owns at least one); rebuild the index")
    assert not (tmp_path / "r.trec").exists()


def test_missing_dense_vectors_are_reported(pipeline, tmp_path):
    folder = saved(pipeline, tmp_path)
    (folder / "dense_vectors.npy").unlink()
    with pytest.raises(RagkitError, match=r"dense_vectors.npy: missing"):
        Pipeline.load(folder)
    (folder / "dense_owners.npy").unlink()
    with pytest.raises(RagkitError, match=r"dense_vectors.npy: missing, but index.json names "
                                          r"embedder 'hash-test'"):
        Pipeline.load(folder)


def test_save_refuses_a_folder_that_is_not_an_index(pipeline, tmp_path):
    user = tmp_path / "work"
    user.mkdir()
    (user / "notes.md").write_text("mine")
    with pytest.raises(RagkitError, match=r"work: exists and is not a ragkit index; refusing"):
        pipeline.save(user)
    assert [p.name for p in user.iterdir()] == ["notes.md"]
    assert not is_index(user) and not is_index(user / "notes.md")
    assert is_index(pipeline.save(tmp_path / "idx"))


def test_bm25_only_index_refuses_dense_search():
    bare = Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)
    with pytest.raises(RagkitError, match="no dense vectors"):
        bare.search(["x"], 3, SearchConfig("dense"))
    with pytest.raises(RagkitError, match="unknown mode 'sparse'"):
        SearchConfig("sparse")


def test_maxp_scores_a_chunk_by_its_best_window():
    vectors = np.eye(3, dtype=np.float32)
    index = DenseIndex(vectors, np.array([0, 0, 1]))  # chunk 0 owns two windows
    scores = index.chunk_scores(np.array([[0, 1, 0]], dtype=np.float32))
    np.testing.assert_allclose(scores, [[1, 0]])
    (best,) = index.search(np.array([[0.0, 0.2, 0.9]], dtype=np.float32), k=2)
    assert best[0].tolist() == [1, 0]


def test_top_k_breaks_ties_by_position():
    idx, vals = top_k(np.array([0.5, 0.9, 0.5, 0.9]), 3)
    assert idx.tolist() == [1, 3, 0] and vals.tolist() == [0.9, 0.9, 0.5]


def test_cookbook_bm25_numbers(cookbook_dir):
    """Regression on Anthropic's data: the floor it publishes, and what ragkit's BM25 adds."""
    from ragkit.datasets import load_cookbook
    from ragkit.evaluate import judge
    from ragkit.pipeline import compare
    data = load_cookbook(cookbook_dir)
    # the published BM25 floor is 59.7 / 68.0 / 77.0 with ties at the cut taken by position;
    # under the tie rule (id descending) one query's tied licence headers gain a golden copy
    expected = {("words", "none"): (59.7, 68.0, 77.1),
                ("auto", "none"): (78.6, 85.0, 87.6),
                ("auto", "structural"): (83.0, 86.9, 91.1)}
    for (tokenizer, context), numbers in expected.items():
        config = IndexConfig(contextualizer=context, tokenizer=tokenizer, embedder=None)
        pipeline = Pipeline.build(data.documents, config, chunks=data.chunks, progress=False)
        judgments = judge(data.queries, data.documents, pipeline.chunks)
        row = compare(pipeline, data.queries, judgments, {"bm25": SearchConfig("bm25")}).loc["bm25"]
        assert tuple(row[["Pass@5", "Pass@10", "Pass@20"]].round(1)) == numbers, (tokenizer, context)


def test_windows_fit_the_embedders_limit_with_the_context_prefix():
    """A window that fits in chunker tokens but not, with its context, in the embedder's
    limit is cut again, so the embedder never truncates any part of a chunk."""
    class Small(HashEmbedder):
        max_tokens = 30  # word count + 2 must stay ≤ 30

    embedder = Small()
    long_title = " ".join(f"title{i}" for i in range(20))  # ~20 words of context per window
    text = " ".join(f"word{i}" for i in range(90)) + "."
    Pipeline.build([Document("d.md", text, long_title)], IndexConfig(embedder="small"),
                   progress=False, embedder=embedder)
    embedded = embedder.calls[0][1]
    assert max(embedder.token_lengths(embedded)) <= 30
    covered = {w for t in embedded for w in re.findall(r"word\d+", t)}
    assert covered == {f"word{i}" for i in range(90)}  # every word still embedded


def test_search_returns_the_chunk_ids_of_the_found_positions():
    """Ids with non-ASCII letters, spaces and `#` come back as the chunks spell them, with
    their scores, from either retriever (the memory store packs the ids into one buffer)."""
    docs = [Document("보고서 2026.md", "# 분기\n\nrevenue grew in the north region"),
            Document("a#b c.md", "revenue fell in the south region"),
            Document("plain.md", "unrelated text about the weather")]
    pipeline = Pipeline.build(docs, IndexConfig(embedder="hash-test"), progress=False,
                              embedder=HashEmbedder())
    ids = [c.id for c in pipeline.chunks]
    assert any(not i.isascii() for i in ids) and any("#b c" in i for i in ids)
    positions, scores = pipeline.bm25.search("revenue region", 3)
    assert pipeline.store.bm25(["revenue region"], 3) == [
        [(ids[p], s) for p, s in zip(positions.tolist(), scores.tolist())]]
    vectors = pipeline.embedder.embed(["revenue region"], input_type="query")
    (positions, scores), = pipeline.dense.search(vectors, 3)
    assert pipeline.store.dense(vectors, 3) == [
        [(ids[p], s) for p, s in zip(positions.tolist(), scores.tolist())]]
    assert len(positions) == 3
    from ragkit.stores.memory import ChunkIds
    odd = [Chunk(i, "d", "t") for i in ("a\ud800b", "", "x" * 300, "보고서")]
    assert ChunkIds(odd).take(np.array([3, 0, 2, 1, 0])) == [
        "보고서", "a\ud800b", "x" * 300, "", "a\ud800b"]


@pytest.mark.parametrize("given, message", [
    ({"chunk_size": "512"}, "IndexConfig chunk_size: expected a whole number, got '512'"),
    ({"window": 9.5}, "IndexConfig window: expected a whole number, got 9.5"),
    ({"child_size": True}, "IndexConfig child_size: expected a whole number, got True"),
    ({"parent_child": "yes"}, "IndexConfig parent_child: expected bool, got 'yes'"),
    ({"embedder": 7}, "IndexConfig embedder: expected str or null, got 7")])
def test_index_config_refuses_a_wrong_type_when_made(given, message):
    """`IndexConfig(chunk_size="512")` (a parameter read as text) was a TypeError from inside
    chunking once the documents were read; `window="x"` one from the embedding step."""
    with pytest.raises(RagkitError) as caught:
        IndexConfig(**given)
    assert str(caught.value) == message
    # numpy's ints and bools are taken as Python's, which index.json can hold (a build with
    # them ran whole, then `save` raised "Object of type int64 is not JSON serializable")
    config = IndexConfig(chunk_size=np.int64(256), parent_child=np.bool_(True))
    assert (type(config.chunk_size), type(config.parent_child)) == (int, bool)
    assert json.loads(json.dumps(dataclasses.asdict(config)))["chunk_size"] == 256


def test_a_size_out_of_range_is_said_by_the_rule_it_breaks(tmp_path, capsys):
    """The type check at IndexConfig leaves sizes to chunking, whose line names the option's
    rule (it said "IndexConfig chunk_size: expected a number of tokens, got 0")."""
    from ragkit.cli import main
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"id": "a", "text": "The kettle boils water."}\n')
    for options, line in [
            (["--chunk-size", "0"], "chunk size must be at least 16 tokens, got 0"),
            (["--overlap", "-1"], "overlap must be between 0 and half the chunk size (256), "
                                  "got -1")]:
        assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none",
                     *options]) == 2
        assert capsys.readouterr().err == f"ragkit: error: {line}\n"


def test_an_embedder_given_by_its_registered_name_is_made(tmp_path, monkeypatch):
    """`Pipeline.build(docs, config, embedder="minilm")` and `Pipeline.load(folder,
    embedder="e5-small")` were AttributeErrors ('str' object has no attribute 'embed'),
    where the question generator takes a name."""
    from ragkit import models
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "models").symlink_to(models.ragkit_home() / "models")
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    docs = [Document("a", "Refunds are paid within seven days."),
            Document("b", "Shipping is free above fifty euros.")]
    built = Pipeline.build(docs, IndexConfig(contextualizer="none", embedder="minilm"),
                           progress=False, embedder="minilm")
    built.save(tmp_path / "idx")
    loaded = Pipeline.load(tmp_path / "idx", embedder="minilm")
    dense = SearchConfig("dense")
    assert loaded.search(["refund"], 2, dense) == built.search(["refund"], 2, dense)
    assert loaded.search(["refund"], 1, dense)[0][0][0] == "a#0"
    with pytest.raises(RagkitError, match=r"^this index was built with embedder "
                                          r"'minilm-l6-v2' .*, not 'multilingual-e5-small-q4'"):
        Pipeline.load(tmp_path / "idx", embedder="e5-small")


def test_a_metric_the_tables_were_not_scored_with_is_named():
    """Tables scored with k = 10 have no "Pass@20", the default of `by_kind` and
    `confidence_table`: a bare KeyError: 'Pass@20'."""
    import pandas as pd
    from ragkit.documents import Query
    from ragkit.evaluate import by_kind, confidence_table
    tables = {"bm25": pd.DataFrame({"Pass@5": [100.0], "Pass@10": [100.0]}, index=["q1"])}
    line = ("no Pass@20 in the scores of 'bm25' (scored: Pass@5, Pass@10); give metric=one of "
            "them, or score with a deeper k")
    for call in (lambda: by_kind(tables, [Query("q1", "?", kind="lexical")]),
                 lambda: confidence_table(tables)):
        with pytest.raises(RagkitError) as caught:
            call()
        assert str(caught.value) == line
    assert by_kind(tables, [Query("q1", "?", kind="lexical")], "Pass@5").loc[
        "lexical", "bm25"] == 100.0
