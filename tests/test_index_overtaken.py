"""Two `ragkit index` runs to one --out: the one that finishes second does not swap its index
over the other's; it says so and writes nothing (`ragkit.folder_watch`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ragkit.cli import main
from ragkit.pipeline import Pipeline

RAGKIT = [sys.executable, "-m", "ragkit.cli"]


def _docs(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n"
                            for i, t in enumerate(texts)))
    return path


def _overtaken(monkeypatch, build_then):
    """Run Pipeline.build as usual, then `build_then()` (another process's whole run)."""
    real = Pipeline.build.__func__

    def build(cls, *args, **kwargs):
        pipeline = real(cls, *args, **kwargs)
        build_then()
        return pipeline
    monkeypatch.setattr(Pipeline, "build", classmethod(build))


def test_a_build_overtaken_by_another_run_is_refused_and_keeps_the_others(tmp_path,
                                                                           monkeypatch, capsys):
    """A slow build started first and a fast one started after it: both said "indexed", and
    the slow one, finishing last, left its index — the fast one's line was untrue."""
    slow = tmp_path / "slow"  # a folder: built in this process (a JSONL file is built in
    slow.mkdir()  # blocks on worker processes, `ragkit.bulk_index`)
    (slow / "kettle.md").write_text("The kettle boils water.\n")
    fast = _docs(tmp_path / "fast.jsonl", ["The fridge keeps milk cold."])
    out = tmp_path / "idx"

    def other_run():
        done = subprocess.run([*RAGKIT, "index", str(fast), "--out", str(out), "--embedder",
                               "none"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    _overtaken(monkeypatch, other_run)
    assert main(["index", str(slow), "--out", str(out), "--embedder", "none"]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {out}: another run wrote a ragkit index there while this one ran (it "
        f"was absent when this one started); nothing was replaced — run this again to write "
        f"its own\n")
    assert [c.text for c in Pipeline.load(out).chunks] == ["The fridge keeps milk cold."]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fast.jsonl", "idx", "slow"]


def test_an_update_overtaken_by_a_rebuild_is_refused(tmp_path, monkeypatch, capsys):
    """`--update` from one index while another run rebuilt it: the update's base was stale."""
    docs = _docs(tmp_path / "docs.jsonl", ["The kettle boils water.", "Toast browns."])
    out = tmp_path / "idx"
    assert main(["index", str(docs), "--out", str(out), "--embedder", "none"]) == 0
    _docs(docs, ["The kettle boils water.", "Toast browns.", "Tea steeps."])
    rebuilt = _docs(tmp_path / "other.jsonl", ["The oven bakes bread."])

    def other_run():
        done = subprocess.run([*RAGKIT, "index", str(rebuilt), "--out", str(out),
                               "--embedder", "none"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    _overtaken(monkeypatch, other_run)
    capsys.readouterr()
    assert main(["index", str(docs), "--out", str(out), "--update"]) == 2
    assert "(it held another index when this one started)" in capsys.readouterr().err
    assert [c.text for c in Pipeline.load(out).chunks] == ["The oven bakes bread."]


def test_runs_one_after_the_other_replace_as_before(tmp_path, capsys):
    first = _docs(tmp_path / "a.jsonl", ["The kettle boils water."])
    second = _docs(tmp_path / "b.jsonl", ["The fridge keeps milk cold."])
    out = tmp_path / "idx"
    for docs in (first, second):
        assert main(["index", str(docs), "--out", str(out), "--embedder", "none"]) == 0
    assert [c.text for c in Pipeline.load(out).chunks] == ["The fridge keeps milk cold."]
