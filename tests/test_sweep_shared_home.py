"""Sweeps sharing one RAGKIT_HOME: a class on one machine running the same sweep at once.

Each test executes a tiny notebook in a real kernel (a few seconds), in this process and in a
`ragkit cookbook sweep` subprocess.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ragkit.cookbook import sweep
from tiny_notebooks import tiny_notebook

RAGKIT = str(Path(sys.executable).parent / "ragkit")
TABLE = ("import pandas as pd\nfrom ragkit.cookbook import record, record_metrics\n"
         "record_metrics('table', pd.DataFrame({'Pass@5': [x * 10.0]}, index=['bm25']),"
         " ('Pass@5',))\nrecord('double', x * 2)")
CSV = ["x,bm25 Pass@5,double,error", "2,20.0,4,"]


def _notebook(path: Path) -> Path:
    return tiny_notebook(path, TABLE)


def test_two_sweeps_finishing_one_point_at_once_both_succeed_and_agree(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("RAGKIT_HOME", str(home))
    nb = _notebook(tmp_path / "01_tiny.ipynb")
    copy, other = shutil.copyfile, []

    def the_other_sweep_finishes_meanwhile(src, dst, *args, **kwargs):
        """While this sweep keeps its point, another sweep of the same point keeps its own."""
        if Path(dst).parent.parent == home / "cache" / "sweeps" and not other:
            other.append(subprocess.run(
                [RAGKIT, "cookbook", "sweep", "--notebook", str(nb), "-p", "x=2",
                 "--out", str(tmp_path / "other")],
                capture_output=True, text=True, env=dict(os.environ), timeout=300))
        return copy(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", the_other_sweep_finishes_meanwhile)
    sweep(str(nb), tmp_path / "mine", {"x": ["2"]})  # raised "cannot write … (No such file"
    monkeypatch.setattr(shutil, "copyfile", copy)
    assert len(other) == 1 and other[0].returncode == 0, other[0].stderr
    for out in ("mine", "other"):
        assert (tmp_path / out / "sweep.csv").read_text().splitlines() == CSV
    assert "1 point, 0 reused from earlier runs, 1 executed." in (
        tmp_path / "mine" / "sweep.md").read_text()
    # one whole point is kept, no staging folder beside it, and the next sweep reuses it
    kept = sorted(p.name for p in (home / "cache" / "sweeps").iterdir())
    assert len(kept) == 1 and not kept[0].startswith(".")
    assert sorted(p.name for p in (home / "cache" / "sweeps" / kept[0]).iterdir()) == [
        "notebook.ipynb", "point.json", "records.json"]
    sweep(str(nb), tmp_path / "again", {"x": ["2"]})
    assert (tmp_path / "again" / "sweep.csv").read_text().splitlines() == CSV
    assert "1 point, 1 reused from earlier runs, 0 executed." in (
        tmp_path / "again" / "sweep.md").read_text()
