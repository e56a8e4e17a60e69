"""A file deleted after the folder was listed and before it was read is said to have been
removed while the folder was read — not "cannot read (No such file or directory)", which
reads as a fault of the file. The deletion is made to fall between the two: right after
the folder's listing."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import ragkit.document_folder
from ragkit.cli import main
from ragkit.document_folder import Skipped, load_folder
from ragkit.documents import RagkitError


@pytest.fixture
def docs(tmp_path: Path, monkeypatch) -> Path:
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(f"# {name}\n\nThe note {name} is about pumps.\n")
    listed = ragkit.document_folder.scan

    def listed_then_removed(*args, **kwargs):
        found = listed(*args, **kwargs)
        (tmp_path / "b.md").unlink()
        return found
    monkeypatch.setattr(ragkit.document_folder, "scan", listed_then_removed)
    return tmp_path


def test_a_file_removed_after_the_listing_stops_the_load_saying_so(docs):
    with pytest.raises(RagkitError) as caught:
        load_folder(docs, progress=False)
    assert str(caught.value) == f"{docs / 'b.md'}: removed while the folder was read"


def test_with_skip_bad_it_is_left_out_saying_so(docs):
    with pytest.warns(UserWarning):
        loaded = load_folder(docs, skip_bad=True, progress=False)
    assert [doc.id for doc in loaded] == ["a.md", "c.md"]
    assert loaded.skipped == [Skipped("b.md", f"{docs / 'b.md'}: removed while the folder "
                                              f"was read")]


DEPTH = 1400  # nested `dd/` folders: about 4,200 bytes of path, past Linux's 4,096
TOO_LONG = (r"docs(/dd)+: path too long \([\d,]+ bytes, more than the system opens\); "
            r"shorten its folders' names or move it nearer the top")


@pytest.fixture
def deep(tmp_path: Path, monkeypatch) -> Path:
    """docs/ with top.md and a file under DEPTH nested folders (made and removed through
    folder descriptors: their paths are too long to name, and `shutil.rmtree` recurses
    deeper than Python may)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "top.md").write_text("# Top\n\nRefunds take seven days.\n")
    fds = [os.open(tmp_path / "docs", os.O_RDONLY)]
    for _ in range(DEPTH):
        os.mkdir("dd", dir_fd=fds[-1])
        fds.append(os.open("dd", os.O_RDONLY, dir_fd=fds[-1]))
    with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1]), "w") as out:
        out.write("# Deep\n\nDeep text.\n")
    yield tmp_path
    os.unlink("deep.md", dir_fd=fds[-1])
    while len(fds) > 1:
        os.close(fds.pop())
        os.rmdir("dd", dir_fd=fds[-1])
    os.close(fds.pop())


def test_a_path_too_long_to_open_is_said_so_not_removed(deep, capsys):
    """ENAMETOOLONG was read as absent: "removed while the folder was read"."""
    assert main(["index", "docs", "--out", "ix", "--embedder", "none"]) == 2
    assert re.fullmatch("ragkit: error: " + TOO_LONG, capsys.readouterr().err.strip())
    assert not (deep / "ix").exists()
    assert main(["index", "docs", "--out", "ix", "--embedder", "none", "--skip-bad"]) == 0
    out, err = capsys.readouterr()
    assert out == "indexed 1 document as 1 chunk into ix\n"
    warned, listed = err.split("skipped 1 bad file:\n")
    assert re.fullmatch("ragkit: warning: skipped " + TOO_LONG, warned.strip("\n"))
    assert re.fullmatch("  " + TOO_LONG, listed.strip("\n"))
