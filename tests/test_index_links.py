"""Every command that reads an index refuses a path that is no index folder the same way:
one line naming the path and, for a symbolic link, where it points (to nothing, to a file,
or back to itself); exit status 2; nothing made where the link points.

The installed CLI runs in a new process, as a user runs it, with its own RAGKIT_HOME.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from tiny_dataset import write_tiny_dataset

# each command that reads an index, given the index path as INDEX
READERS = {
    "ask": ["ask", "--index", "INDEX", "how often does sync run?"],
    "ask --agent": ["ask", "--agent", "--root", "root", "--index", "INDEX", "sync?"],
    "search": ["search", "INDEX", "--queries", "queries.jsonl", "--out", "run.trec"],
    "eval": ["eval", "tiny", "--index", "INDEX", "--mode", "bm25", "--split", "dev"],
    "tune": ["tune", "tiny", "--index", "INDEX"],
    "tool": ["tool", "docs_search", "--root", "root", "--index", "INDEX",
             "--args", '{"query": "sync"}'],
}


def ragkit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY")}
    env["RAGKIT_HOME"] = str(cwd / ".home")
    return subprocess.run([sys.executable, "-m", "ragkit.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    """A folder with a data set, queries, an agent root and the paths an index is asked at."""
    folder = tmp_path_factory.mktemp("links")
    write_tiny_dataset(folder / "tiny")
    (folder / "root").mkdir()
    (folder / "queries.jsonl").write_text(json.dumps({"id": "q1", "text": "sync"}) + "\n")
    (folder / "notes.txt").write_text("not an index\n")
    os.symlink("gone/index", folder / "to-nothing")
    os.symlink("notes.txt", folder / "to-a-file")
    os.symlink("loop", folder / "loop")
    return folder


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if ".home" not in p.parts)


def _refused(place: Path, command: str, path: str) -> str:
    """The one error line of `command` reading the index at `path`; it made nothing."""
    before = _listing(place)
    done = ragkit(place, *[path if a == "INDEX" else a for a in READERS[command]])
    assert _listing(place) == before  # no folder where a link points, no run written
    return one_error_line(done)


@pytest.mark.parametrize("path, line", [
    ("to-nothing", "to-nothing: no such index folder (a symbolic link to gone/index, which "
                   "names nothing)"),
    ("to-a-file", "to-a-file: a symbolic link to notes.txt, a file, not an index folder"),
    ("loop", "loop: no such index folder (a symbolic link that leads back to itself)"),
    ("notes.txt", "notes.txt: a file, not an index folder"),
    ("absent", "absent: no such index folder"),
])
def test_ask_names_where_a_link_in_place_of_the_index_points(place, path, line):
    assert _refused(place, "ask", path) == f"ragkit: error: {line}"


@pytest.mark.parametrize("command", [c for c in READERS if c != "ask"])
def test_every_command_reading_an_index_refuses_a_link_to_nothing_alike(place, command):
    assert _refused(place, command, "to-nothing") == (
        "ragkit: error: to-nothing: no such index folder (a symbolic link to gone/index, which "
        "names nothing)")
