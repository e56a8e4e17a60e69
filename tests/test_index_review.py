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
