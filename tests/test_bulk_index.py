"""`ragkit index FILE.jsonl --embedder none` built block by block: the same folder, byte for
byte, as `Pipeline.build` + `save`, in one process or on two workers; bad input still named
at its first bad line."""
import json
import sys
from pathlib import Path

import orjson
import pytest

from ragkit.lexical.tokenizers import _HANGUL as HANGUL

from ragkit import bulk_index
from ragkit.cli import main
from ragkit.config import IndexConfig
from ragkit.datasets import load_dataset
from ragkit.pipeline import Pipeline
from test_bm25_build import MIXED

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gen_corpus  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
FILES = ["chunks.jsonl", "chunks.offsets.npy", "index.json", "bm25/bm25.json", "bm25/data.npy",
         "bm25/indices.npy", "bm25/indptr.npy", "bm25/idf.npy", "bm25/doc_len.npy",
         "bm25/terms.bin", "bm25/terms.npy", "bm25/terms_hash.npy"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The shipped documents (headings, code, long documents, metadata; not the Korean
    ones), CJK and accented examples, and 300 generated documents, as one JSONL file."""
    path = tmp_path_factory.mktemp("bulk") / "docs.jsonl"
    rows = [{"id": d.id, "text": d.text, "title": d.title, "metadata": d.metadata}
            for d in load_dataset(DATA).documents
            if not HANGUL.search(d.text)]  # Kiwi costs 2-7 s to load, in each process
    rows += [{"id": f"mixed{i}", "text": t} for i, t in enumerate(MIXED) if t and "청" not in t]
    rows += [{"id": i, "title": t, "text": x} for i, t, x in gen_corpus.documents(300, size=500)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory) -> Path:
    """The folder the one-process build writes."""
    out = tmp_path_factory.mktemp("ref") / "index"
    config = IndexConfig(embedder=None)
    Pipeline.build(load_dataset(corpus).documents, config, progress=False).save(out)
    return out


def assert_same_folder(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize("workers", [1, 2])
def test_block_build_writes_the_one_process_folder(corpus, reference, tmp_path, monkeypatch,
                                                   workers):
    monkeypatch.setattr(bulk_index, "BLOCK", 97)  # 5 blocks of 413 documents, merged
    monkeypatch.setattr(bulk_index, "THRESHOLD", 194)
    config = IndexConfig(embedder=None)
    found = bulk_index.index_jsonl(corpus, config, tmp_path / "index", workers, progress=False)
    assert found == (413, json.loads((reference / "index.json").read_text())["chunks"])
    assert_same_folder(tmp_path / "index", reference)


def test_cli_takes_the_block_build_and_prints_the_counts(corpus, reference, tmp_path, capsys):
    assert main(["index", str(corpus), "--out", str(tmp_path / "i"), "--embedder", "none"]) == 0
    chunks = json.loads((reference / "index.json").read_text())["chunks"]
    assert capsys.readouterr().out.strip().endswith(
        f"indexed 413 documents as {chunks} chunks into {tmp_path / 'i'}")
    assert_same_folder(tmp_path / "i", reference)


def _lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("bad, message", [
    ({"id": "d1", "text": "again"}, "docs.jsonl:9: field 'id': duplicate document id 'd1' "
                                    "(first at line 2)"),
    ("{not json", "docs.jsonl:9: malformed JSON"),
    ({"id": "x", "text": 3}, "docs.jsonl:9: field 'text': expected str, got int"),
])
def test_a_bad_line_in_a_later_block_is_named_and_nothing_is_written(tmp_path, monkeypatch,
                                                                     capsys, bad, message):
    monkeypatch.setattr(bulk_index, "BLOCK", 3)
    monkeypatch.setattr(bulk_index, "THRESHOLD", 6)
    rows = [{"id": f"d{i}", "text": f"word{i} text"} for i in range(8)]
    path = _lines(tmp_path / "docs.jsonl", [*rows, bad, {"id": "last", "text": "end"}])
    assert main(["index", str(path), "--out", str(tmp_path / "i"), "--embedder", "none"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "i").exists()


def test_a_colliding_id_hash_falls_back_to_the_one_process_build(tmp_path, monkeypatch):
    rows = [{"id": f"d{i}", "text": f"word{i} text"} for i in range(4)]
    path = _lines(tmp_path / "docs.jsonl", rows)
    monkeypatch.setattr(bulk_index.hashlib, "blake2b",
                        lambda data, digest_size: type("H", (), {"digest": lambda s: b"x" * 8})())
    with pytest.raises(bulk_index.Sequential):
        bulk_index.index_jsonl(path, IndexConfig(embedder=None), tmp_path / "i", 1, False)
    assert main(["index", str(path), "--out", str(tmp_path / "i"), "--embedder", "none"]) == 0
    assert len((tmp_path / "i" / "chunks.jsonl").read_text().splitlines()) == 4


def test_builds_it_does_not_cover_go_through_the_pipeline(tmp_path):
    config = IndexConfig(embedder=None)
    path = _lines(tmp_path / "docs.jsonl", [{"id": "a", "text": "b"}])
    assert bulk_index.applies(config, path, None, _Store("memory"))
    assert not bulk_index.applies(config, tmp_path, None, _Store("memory"))  # a folder
    assert not bulk_index.applies(config, path, object(), _Store("memory"))  # --vectors
    assert not bulk_index.applies(config, path, None, _Store("milvus"))
    assert not bulk_index.applies(IndexConfig(), path, None, _Store("memory"))  # an embedder
    assert not bulk_index.applies(IndexConfig(embedder=None, parent_child=True), path, None,
                                  _Store("memory"))
    assert not bulk_index.applies(IndexConfig(embedder=None, contextualizer="claude"), path,
                                  None, _Store("memory"))


class _Store:
    def __init__(self, kind: str) -> None:
        self.kind = kind
