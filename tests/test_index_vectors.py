"""`ragkit index --vectors FILE.npy`: precomputed chunk vectors, one row per chunk."""
import json

import numpy as np
import pytest

from ragkit import embed
from ragkit.cli import main
from ragkit.pipeline import Pipeline, SearchConfig
from word_embedder import WordEmbedder

WORDS = ["revenue", "refund", "costs"]
DOCS = [
    {"id": "acme", "title": "ACME report", "text": "Revenue grew 3 % over the quarter."},
    {"id": "refund", "title": "Refund policy", "text": "Refunds within seven days."},
    {"id": "globex", "title": "Globex report", "text": "Costs fell sharply."},
]


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A documents file, and a test embedder registered as 'words' (dim 4)."""
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setitem(embed.EMBEDDERS, "words", lambda: WordEmbedder(WORDS))
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return docs, tmp_path


def _index(docs, out, vectors, *extra):
    return main(["index", str(docs), "--out", str(out), "--embedder", "words",
                 "--vectors", str(vectors), *extra])


def _save(path, array):
    np.save(path, array)
    return path


def test_round_trip_vectors_are_normalised_rows_in_chunk_order(setup, capsys):
    docs, tmp = setup
    # chunk 0 points at "revenue", chunk 1 at "refund", chunk 2 at "costs" (unnormalised)
    rows = np.array([[3, 0, 0, 0], [0, 2, 0, 0], [0, 0, 5, 0]], dtype=np.float64)
    assert _index(docs, tmp / "idx", _save(tmp / "v.npy", rows)) == 0
    assert "indexed 3 documents as 3 chunks" in capsys.readouterr().out
    manifest = json.loads((tmp / "idx" / "index.json").read_text())
    assert manifest["embedder"]["name"] == "word-test" and manifest["embedder"]["dim"] == 4
    pipeline = Pipeline.load(tmp / "idx")
    assert [c.id for c in pipeline.chunks] == ["acme#0", "refund#0", "globex#0"]
    assert np.array_equal(pipeline.dense.vectors, np.eye(4, dtype=np.float32)[:3])
    assert pipeline.dense.owners.tolist() == [0, 1, 2]
    found = pipeline.search(["refund please"], 2, SearchConfig(mode="dense"))[0]
    assert found[0][0] == "refund#0"
    assert found[0][1] == pytest.approx(1 / np.sqrt(1 + 1e-6), abs=1e-6)


@pytest.mark.parametrize("array, message", [
    (np.ones((2, 4), np.float32), "2 rows, but the documents make 3 chunks"),
    (np.ones((3, 5), np.float32), "vectors are 5-d, but embedder 'word-test' gives 4-d"),
    (np.ones((3, 4), np.int64), "expected float vectors (float16/32/64), got dtype int64"),
    (np.ones(12, np.float32), "expected a 2-d array (one row per chunk), got shape (12,)"),
    (np.array([[1, 0, 0, 0], [0, np.nan, 0, 0], [1, 1, 1, 1]], np.float32),
     "row 1 holds NaN or infinite values"),
    (np.array([[1, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]], np.float32), "row 2 is all zeros"),
])
def test_bad_vectors_are_one_clear_error_and_leave_the_old_index(setup, capsys, array, message):
    docs, tmp = setup
    assert main(["index", str(docs), "--out", str(tmp / "idx"), "--embedder", "none"]) == 0
    before = (tmp / "idx" / "chunks.jsonl").read_bytes()
    capsys.readouterr()
    assert _index(docs, tmp / "idx", _save(tmp / "v.npy", array)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "v.npy" in err
    assert json.loads((tmp / "idx" / "index.json").read_text())["embedder"] is None
    assert (tmp / "idx" / "chunks.jsonl").read_bytes() == before
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".idx")) == []


def test_vectors_need_a_query_embedder_and_a_readable_file(setup, capsys):
    docs, tmp = setup
    vectors = _save(tmp / "v.npy", np.eye(4, dtype=np.float32)[:3])
    assert main(["index", str(docs), "--out", str(tmp / "idx"), "--embedder", "none",
                 "--vectors", str(vectors)]) == 2
    assert "--vectors needs --embedder NAME" in capsys.readouterr().err
    (tmp / "bad.npy").write_text("not numpy")
    assert _index(docs, tmp / "idx", tmp / "bad.npy") == 2
    assert "bad.npy: not a readable .npy array" in capsys.readouterr().err
    assert _index(docs, tmp / "idx", tmp / "absent.npy") == 2
    assert "absent.npy: no such file" in capsys.readouterr().err
    assert not (tmp / "idx").exists()


def test_build_refuses_vectors_without_an_embedder(setup):
    from ragkit.datasets import load_dataset
    from ragkit.documents import RagkitError
    from ragkit.pipeline import IndexConfig
    docs, _ = setup
    with pytest.raises(RagkitError, match="need the embedder that embeds the queries"):
        Pipeline.build(load_dataset(docs).documents, IndexConfig(embedder=None),
                       progress=False, vectors=np.eye(3, dtype=np.float32))


# ---------------------------------------------------------------- float32 range, damaged files

def test_float64_values_beyond_float32_are_refused_before_any_work(setup, capsys):
    docs, tmp = setup
    rows = np.eye(4)[:3] * 1.0
    rows[1] = 1e300  # finite in float64, infinite once stored as float32
    assert _index(docs, tmp / "idx", _save(tmp / "v.npy", rows)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "v.npy: row 1 holds values beyond float32 range" in err
    assert not (tmp / "idx").exists()


def test_large_values_within_float32_give_unit_rows_not_zeros(setup):
    docs, tmp = setup
    rows = np.array([[3e30, 0, 0, 0], [0, 1e-30, 0, 0], [0, 0, 5, 0]], np.float32)
    assert _index(docs, tmp / "idx", _save(tmp / "v.npy", rows)) == 0
    vectors = Pipeline.load(tmp / "idx").dense.vectors  # squares overflow float32 / underflow
    assert np.array_equal(vectors, np.eye(4, dtype=np.float32)[:3])


def _dense_index(tmp, vectors):
    from ragkit.dense import DenseIndex
    from ragkit.index_folder import write_index
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import IndexConfig
    docs, _ = tmp
    pipeline = Pipeline.build(load_dataset(docs).documents, IndexConfig(embedder=None),
                              progress=False)
    out = docs.parent / "idx"
    write_index(out, {"config": json.loads(json.dumps(pipeline.config.__dict__)),
                      "embedder": None}, pipeline.chunks, pipeline.bm25,
                DenseIndex(np.asarray(vectors, np.float32), np.arange(len(vectors))))
    return out


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_stored_nan_or_infinite_vector_is_an_error_naming_the_file_at_its_first_read(
        setup, capsys, bad):
    """The vectors are memory-mapped, not read at load: the first scan that reads them
    refuses the damaged row (never a NaN score); BM25 search does not read them."""
    from ragkit.documents import RagkitError
    vectors = np.eye(4, dtype=np.float32)[:3]
    vectors[2, 1] = bad
    out = _dense_index(setup, vectors)
    loaded = Pipeline.load(out)
    with pytest.raises(RagkitError, match=r"dense_vectors.npy: row 2 holds NaN or infinite"):
        loaded.dense.search(np.eye(4, dtype=np.float32)[:1], 2)
    with pytest.raises(RagkitError, match=r"dense_vectors.npy: row 2 holds NaN or infinite"):
        loaded.dense.maxp_at(np.eye(4, dtype=np.float32)[0], np.array([0, 2]))
    queries = out.parent / "q.jsonl"
    queries.write_text('{"id": "q", "text": "refund"}\n')
    assert main(["search", str(out), "--queries", str(queries), "--mode", "bm25",
                 "--out", str(out.parent / "run.trec")]) == 0
    capsys.readouterr()
    assert loaded.search(["refund"], 2, SearchConfig("bm25"))
    with pytest.raises(RagkitError, match=r"dense_vectors.npy: row 2 holds NaN or infinite"):
        loaded.dense.chunk_scores(np.full((1, 4), 0.5, dtype=np.float32))


@pytest.mark.parametrize("row, length", [(np.array([0, 0, 4e18, 0]), r"4e\+18"),
                                         (np.zeros(4), "0")], ids=["damaged bytes", "zeroed"])
def test_a_stored_vector_not_of_unit_length_is_an_error_naming_the_file(setup, row, length):
    """A row of damaged bytes scored cosines of 9e36 and ranked first, a zeroed row scored
    0 for every query, both with exit 0. A row at right angles to the query scores 0 too,
    and is not refused: its length is 1."""
    from ragkit.documents import RagkitError
    vectors = np.eye(4, dtype=np.float32)[:3]
    vectors[2] = row
    loaded = Pipeline.load(_dense_index(setup, vectors))
    message = rf"dense_vectors.npy: row 2 has length {length}, not 1; the index is damaged"
    with pytest.raises(RagkitError, match=message):
        loaded.dense.search(np.full((1, 4), 0.5, dtype=np.float32), 2)
    with pytest.raises(RagkitError, match=message):
        loaded.dense.maxp_at(np.full(4, 0.5, dtype=np.float32), np.array([0, 2]))
    sound = Pipeline.load(_dense_index(setup, np.eye(4, dtype=np.float32)[:3]))
    positions, scores = sound.dense.search(np.eye(4, dtype=np.float32)[:1], 3)[0]
    assert positions.tolist() == [0, 1, 2] and scores.tolist() == [1.0, 0.0, 0.0]


def test_a_sound_dense_index_still_loads(setup):
    out = _dense_index(setup, np.eye(4, dtype=np.float32)[:3])
    assert Pipeline.load(out).dense.vectors.shape == (3, 4)
