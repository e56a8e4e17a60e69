"""An open index while another process re-indexes the same folder.

`ragkit index` replaces the folder atomically; a process that opened the old index keeps
its memory-mapped files. Its chunk table must then keep giving the old rows — read whole
(an update, `--level doc`, a reranker) or handed to a worker process (pickled) — never the
new folder's rows under the old BM25 and vectors, nor a "damaged, rebuild it" error.
"""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.documents import RagkitError
from ragkit.pipeline import Pipeline


def _index(tmp: Path, texts: list[str]) -> None:
    (tmp / "docs.jsonl").write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n"
                                            for i, t in enumerate(texts)))
    env = {**os.environ, "RAGKIT_HOME": str(tmp / ".home")}
    done = subprocess.run([sys.executable, "-m", "ragkit.cli", "index", "docs.jsonl", "--out",
                           "ix", "--embedder", "none"], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


OLD = ["alpha apples grow here", "beta bananas ripen there", "gamma grapes hang low"]
NEW = ["delta dates dry fast", "epsilon elderberries", "zeta zucchini squash"]  # same count


@pytest.fixture
def reopened(tmp_path) -> Pipeline:
    """A pipeline opened on OLD, its folder then re-indexed with NEW by another process."""
    _index(tmp_path, OLD)
    pipeline = Pipeline.load(tmp_path / "ix")
    assert pipeline.chunks[1].text == OLD[1]  # read one row: the table is open and lazy
    _index(tmp_path, NEW)
    return pipeline


def test_reading_every_row_after_a_reindex_gives_the_rows_it_opened(reopened):
    assert [c.text for c in reopened.chunks] == OLD


def test_a_table_pickled_after_a_reindex_carries_the_rows_it_opened(reopened):
    copy = pickle.loads(pickle.dumps(reopened.chunks))
    assert len(copy) == 3 and [c.text for c in copy] == OLD and copy[2].text == OLD[2]


def test_a_table_unpickled_after_a_reindex_refuses_the_new_file(tmp_path):
    _index(tmp_path, OLD)
    data = pickle.dumps(Pipeline.load(tmp_path / "ix").chunks)
    _index(tmp_path, NEW)
    with pytest.raises(RagkitError, match="chunks.jsonl: replaced since"):
        pickle.loads(data)
    _index(tmp_path, OLD)  # ... while a pickle of the current file opens as before
    assert [c.text for c in pickle.loads(pickle.dumps(Pipeline.load(tmp_path / "ix").chunks))
            ] == OLD


def test_a_same_size_edit_that_moves_a_row_is_one_line_naming_chunks_jsonl(tmp_path):
    """Two rows edited by hand, one 3 bytes shorter and the next 3 longer: size, first and
    last rows still match the offsets, so the edit is found when a search reads those rows;
    the line names chunks.jsonl and says it changed, not that the offsets are damaged."""
    _index(tmp_path, ["first row", *OLD, "last row"])
    path = tmp_path / "ix" / "chunks.jsonl"
    rows = path.read_bytes().split(b"\n")
    rows[1] = rows[1].replace(b"alpha apples", b"alpha app")
    rows[2] = rows[2].replace(b"beta bananas", b"beta bananasxyz")
    size = path.stat().st_size
    path.write_bytes(b"\n".join(rows))
    assert path.stat().st_size == size
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / ".home")}
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "bananas"}\n')
    done = subprocess.run([sys.executable, "-m", "ragkit.cli", "search", "ix", "--queries",
                           "q.jsonl", "--out", "run.trec", "--mode", "bm25", "--k", "1"], cwd=tmp_path,
                          env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ragkit: error: {Path('ix') / 'chunks.jsonl'}: row 3 does not lie where "
        f"chunks.offsets.npy says (bytes 310..474): chunks.jsonl was changed since the index "
        f"was written; rebuild it with `ragkit index`"]


@pytest.mark.parametrize("damage", ["ids", "order"])
def test_a_damaged_term_hash_table_is_one_line_naming_it(tmp_path, damage):
    """terms_hash.npy with a term id past the vocabulary (was an IndexError traceback) or
    its hashes out of order (was a search that silently found no term): one line, exit 2."""
    import numpy as np
    _index(tmp_path, OLD)
    path = tmp_path / "ix" / "bm25" / "terms_hash.npy"
    table = np.load(path)
    if damage == "ids":
        table[1, :] = 10 ** 9
    else:
        table[0, :] = table[0, ::-1].copy()
    np.save(path, table)
    (tmp_path / "q.jsonl").write_text('{"id": "q", "text": "bananas"}\n')
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / ".home")}
    done = subprocess.run([sys.executable, "-m", "ragkit.cli", "search", "ix", "--queries",
                           "q.jsonl", "--out", "run.trec", "--mode", "bm25", "--k", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ragkit: error: {Path('ix') / 'bm25' / 'terms_hash.npy'}: term ids or hash order "
        f"damaged; damaged BM25 index, rebuild it"]
