"""The file tools cannot leave their root, refuse what is not text, and stop runaway regexes."""
import os

import pytest

from ragkit.agent import sandbox
from ragkit.agent.gate import run_tool
from ragkit.agent.sandbox import glob_paths, read_text, resolve, search, walk
from ragkit.agent.tool import ToolContext, ToolError


@pytest.fixture
def tree(tmp_path):
    """root/ with a text file, a sub-folder, and links pointing in and out; a secret outside."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (root / ".hidden").write_text("beta\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("beta secret\n", encoding="utf-8")
    (root / "link-out.txt").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside, target_is_directory=True)
    (root / "link-in.txt").symlink_to(root / "sub" / "a.txt")
    return root


@pytest.mark.parametrize("path, message", [
    ("../outside/secret.txt", "leads outside the root"),
    ("sub/../../outside/secret.txt", "leads outside the root"),
    ("/etc/passwd", "is an absolute path"),
    ("C:\\Windows\\win.ini", "is an absolute path"),
    ("link-out.txt", "leads through a symlink outside the root"),
    ("dir-out/secret.txt", "leads through a symlink outside the root"),
    ("", "empty path"),
])
def test_resolve_refuses_paths_that_leave_the_root(tree, path, message):
    with pytest.raises(ToolError, match=message) as caught:
        resolve(tree, path)
    assert "relative to the root" in str(caught.value)  # says what is allowed


def test_resolve_allows_paths_that_stay_inside(tree):
    assert resolve(tree, "sub/a.txt") == (tree / "sub" / "a.txt").resolve()
    assert resolve(tree, "sub/../sub/a.txt") == (tree / "sub" / "a.txt").resolve()
    assert resolve(tree, "link-in.txt") == (tree / "sub" / "a.txt").resolve()


def test_walk_and_glob_never_list_links_out_or_hidden_files(tree):
    assert walk(tree) == ["link-in.txt", "sub/a.txt"]
    assert glob_paths(tree, "**/*.txt") == ["link-in.txt", "sub/a.txt"]
    assert glob_paths(tree, "dir-out/*") == []
    with pytest.raises(ToolError, match="not a pattern relative to the root"):
        glob_paths(tree, "../*")


def test_grep_through_the_gate_finds_only_files_inside(tree):
    result = run_tool("grep", {"pattern": "beta"}, ToolContext(root=tree))
    assert not result.is_error
    assert result.content == "link-in.txt:2:beta\nsub/a.txt:2:beta"


def test_binary_huge_and_non_utf8_files_are_refused_with_guidance(tree, monkeypatch):
    (tree / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tree / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (tree / "big.txt").write_text("x" * 101, encoding="utf-8")
    monkeypatch.setattr(sandbox, "MAX_FILE_BYTES", 100)
    with pytest.raises(ToolError, match="binary file .*text files only"):
        read_text(tree / "img.png", "img.png")
    with pytest.raises(ToolError, match="not UTF-8 text .*offset 3"):
        read_text(tree / "latin1.txt", "latin1.txt")
    with pytest.raises(ToolError, match=r"too large to read \(101 bytes; the limit is 100\).*grep"):
        read_text(tree / "big.txt", "big.txt")
    with pytest.raises(ToolError, match="is a folder.*glob"):
        read_text(tree / "sub", "sub")
    with pytest.raises(ToolError, match="no such file 'nope.md'.*glob"):
        read_text(tree / "nope.md", "nope.md")


def test_grep_skips_unreadable_files_and_says_so(tree):
    (tree / "blob.bin").write_bytes(b"beta\x00\x01")
    result = run_tool("grep", {"pattern": "beta", "path_glob": "*"}, ToolContext(root=tree))
    assert result.content == ("link-in.txt:2:beta\n"
                              "[skipped 1 file(s) that are binary, not UTF-8 or over "
                              "1,000,000 bytes: blob.bin]")


def test_catastrophic_regex_is_stopped_at_the_deadline(tree):
    (tree / "evil.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    context = ToolContext(root=tree, extra={"grep_timeout": 0.5})
    result = run_tool("grep", {"pattern": "(a+)+$"}, context)
    assert result.is_error
    assert "was stopped after 0.5 s" in result.content
    assert "nested repetition" in result.content


def test_invalid_regex_reports_the_regex_error():
    with pytest.raises(ToolError, match=r"invalid regular expression '\(a\+': missing \)"):
        search("(a+", [("f", "aaa")], 10)


def test_search_caps_hits_and_cuts_long_lines():
    hits, more = search("x", [("f.txt", "x\n" * 5), ("g.txt", "x" * 400)], max_hits=5)
    assert hits == [("f.txt", n, "x") for n in range(1, 6)] and more
    hits, more = search("x", [("g.txt", "x" * 400)], max_hits=5)
    assert hits == [("g.txt", 1, "x" * sandbox.MAX_LINE + " …")] and not more


def test_symlink_loop_is_refused(tree):
    os.symlink(tree / "loop", tree / "loop")
    with pytest.raises(ToolError):
        resolve(tree, "loop")
