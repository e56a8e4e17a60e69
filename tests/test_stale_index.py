"""`ragkit eval --index` and `tune --index` on an index older than the documents: a document
edited since the build was scored by its old chunks against spans placed in its new text —
Pass@5 100 → 0, exit 0, no word. It is refused, naming the document and the command that
brings the index up to date; that command, once run, makes the same call score again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RAGKIT = str(Path(sys.executable).parent / "ragkit")
REFUND = ("# Refunds\n\nA cooling-off period of 21 days applies to every order.\n\n"
          "# Exchanges\n\nExchanges are free within 60 days.\n")
SHIPPING = "# Shipping\n\nParcels leave the depot within 2 working days.\n"
QUESTION = {"id": "g1", "question": "How long is the cooling-off period?", "split": "dev",
            "golden": [{"doc_id": "refund.md", "span": "cooling-off period of 21 days"}]}


def _ragkit(home: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([RAGKIT, *argv], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAGKIT_HOME": str(home)})


@pytest.fixture
def built(tmp_path):
    """A folder, its index (built in a process of its own) and a question about it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refund.md").write_text(REFUND)
    (docs / "shipping.md").write_text(SHIPPING)
    (tmp_path / "g.jsonl").write_text(json.dumps(QUESTION) + "\n")
    done = _ragkit(tmp_path / "home", "index", str(docs), "--out", str(tmp_path / "idx"),
                   "--embedder", "none")
    assert done.returncode == 0, done.stderr
    return docs, tmp_path / "idx", tmp_path / "g.jsonl"


def _pass5(out: str) -> str:
    return out.splitlines()[-1].split()[1]


def test_an_index_older_than_an_edited_document_is_refused_until_updated(built, tmp_path):
    docs, index, golden = built
    evaluate = ["eval", str(docs), "--index", str(index), "--questions", str(golden),
                "--mode", "bm25"]
    done = _ragkit(tmp_path / "home", *evaluate)
    assert (done.returncode, _pass5(done.stdout)) == (0, "100.0")
    (docs / "refund.md").write_text("# Intro\n\n" + "Padding sentence here. " * 300 + "\n\n"
                                    + REFUND)  # the span moves to a later chunk
    done = _ragkit(tmp_path / "home", *evaluate)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"ragkit: error: {index}: 1 of the 2 documents of {docs} changed "
                           f"since the index was built (refund.md); rebuild it with `ragkit "
                           f"index {docs} --out {index}` (`--update` re-embeds only the "
                           f"changed ones)\n")
    done = _ragkit(tmp_path / "home", "index", str(docs), "--out", str(index), "--update",
                   "--embedder", "none")
    assert done.returncode == 0, done.stderr
    done = _ragkit(tmp_path / "home", *evaluate)
    assert (done.returncode, _pass5(done.stdout)) == (0, "100.0")


def test_tune_refuses_it_too(built, tmp_path, capsys, monkeypatch):
    from ragkit import embed, models
    from ragkit.cli import main
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    docs, _, golden = built
    index = tmp_path / "dense"
    assert main(["index", str(docs), "--out", str(index), "--embedder", "minilm"]) == 0
    (docs / "shipping.md").write_text(SHIPPING.replace("2 working", "3 working"))
    capsys.readouterr()
    assert main(["tune", str(docs), "--index", str(index), "--questions", str(golden),
                 "--embedder", "minilm", "--alphas", "0:1:0.5", "--rrf-ks", "60"]) == 2
    assert capsys.readouterr().err.startswith(f"ragkit: error: {index}: 1 of the 2 documents "
                                              f"of {docs} changed since the index was built "
                                              f"(shipping.md); ")
