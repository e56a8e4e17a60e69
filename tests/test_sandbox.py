"""The file tools cannot leave their root, refuse what is not text, and stop runaway regexes."""
import os

import pytest

from ragkit.agent import safe_open, sandbox
from ragkit.agent.gate import run_tool
from ragkit.agent.safe_open import Root, parts, read_text
from ragkit.agent.sandbox import glob_paths, matches, pattern_parts, search
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


def read(root, path):
    with Root(root) as opened:
        return read_text(opened, parts(path), path)


def listed(root, pattern):
    with Root(root) as opened:
        return glob_paths(opened, pattern)


@pytest.mark.parametrize("path, message", [
    ("../outside/secret.txt", "leads outside the root"),
    ("sub/../../outside/secret.txt", "leads outside the root"),
    ("/etc/passwd", "is an absolute path"),
    ("C:\\Windows\\win.ini", "is an absolute path"),
    ("~/.ssh/id_rsa", "is an absolute path"),
    ("~", "is an absolute path"),
    ("", "empty path"),
])
def test_paths_that_leave_the_root_are_refused_before_any_open(tree, path, message):
    with pytest.raises(ToolError, match=message) as caught:
        parts(path)
    assert "relative to the root" in str(caught.value)  # says what is allowed


def test_a_name_starting_with_a_tilde_is_read_as_glob_lists_it(tmp_path):
    """glob and grep listed `~backup.txt` (and Word's lock files, `~$x.docx`), and read_file
    refused it as "an absolute path"."""
    (tmp_path / "~backup.txt").write_text("kept\n", encoding="utf-8")
    context = ToolContext(root=tmp_path)
    assert run_tool("glob", {"pattern": "*"}, context).content == "~backup.txt"
    assert run_tool("read_file", {"path": "~backup.txt"}, context).content == (
        "~backup.txt: lines 1–1 of 1\n   1 | kept")
    assert parts("~root/.ssh/id_rsa") == ["~root", ".ssh", "id_rsa"]  # under the root


@pytest.mark.parametrize("path, message", [
    ("link-out.txt", "'link-out.txt' is a symbolic link, and these tools never follow links, "
                     "not even inside the root; it points outside the root, which these tools "
                     "do not read"),
    ("dir-out/secret.txt", "'dir-out' is a symbolic link, and these tools never follow links"),
    ("link-in.txt", "'link-in.txt' is a symbolic link, and these tools never follow links, not "
                    "even inside the root; it points to 'sub/a.txt' — read that path instead"),
])
def test_no_symlink_is_followed_and_a_link_inside_names_its_target(tree, path, message):
    with pytest.raises(ToolError) as caught:
        read(tree, path)
    assert str(caught.value).startswith(message)
    assert str(tree) not in str(caught.value)


def test_a_link_in_a_subfolder_to_an_outside_path_is_not_named_as_an_inside_one(tree):
    """`sub/dirlink` -> /tmp/x was named "it points to 'sub/tmp/x' — read that path instead"."""
    (tree / "sub" / "dirlink").symlink_to(tree.parent / "outside", target_is_directory=True)
    with pytest.raises(ToolError) as caught:
        read(tree, "sub/dirlink/secret.txt")
    assert str(caught.value) == ("'sub/dirlink' is a symbolic link, and these tools never "
                                 "follow links, not even inside the root; it points outside "
                                 "the root, which these tools do not read")


def test_links_named_through_an_alias_root_or_climbing_out_are_named_right(tree, tmp_path):
    """A link naming the root as the user gave it (a symlinked path) was said to point
    outside; a relative link climbing out got the vague "if that is inside the root"."""
    (tmp_path / "alias").symlink_to(tree, target_is_directory=True)
    (tree / "sub" / "via-alias").symlink_to(tmp_path / "alias" / "sub" / "a.txt")
    (tree / "sub" / "climbs").symlink_to("../../outside/secret.txt")
    link = "is a symbolic link, and these tools never follow links, not even inside the root"
    for name, said in (("via-alias", "it points to 'sub/a.txt' — read that path instead"),
                       ("climbs", "it points outside the root, which these tools do not read")):
        with pytest.raises(ToolError) as caught:
            read(tmp_path / "alias", f"sub/{name}")
        assert str(caught.value) == f"'sub/{name}' {link}; {said}"


def test_paths_that_stay_inside_are_read(tree):
    assert parts("sub/../sub/./a.txt") == ["sub", "a.txt"]
    assert read(tree, "sub/../sub/a.txt") == "alpha\nbeta\n"


def test_glob_never_lists_links_or_hidden_files_and_names_the_links(tree):
    found = listed(tree, "**/*.txt")
    assert found.files == ["sub/a.txt"]
    assert found.links == ["dir-out", "link-in.txt", "link-out.txt"]  # dir-out could hold some
    assert listed(tree, "**/*").links == ["dir-out", "link-in.txt", "link-out.txt"]
    out = listed(tree, "dir-out/*")
    assert out.files == [] and out.links == ["dir-out"]
    with pytest.raises(ToolError, match="not a pattern relative to the root"):
        listed(tree, "../*")


@pytest.mark.parametrize("pattern, path, expected", [
    ("**/*.py", "a.py", True), ("**/*.py", "x/y/a.py", True), ("*.py", "x/a.py", False),
    ("x/**/a.py", "x/a.py", True), ("x/**/a.py", "x/y/z/a.py", True), ("x/*/a.py", "x/a.py", False),
    ("**/**/**/**", "f/g/x.txt", True), ("p/[ab]?.md", "p/b1.md", True),
    ("p/[ab]?.md", "p/c1.md", False),
    ("**/refund*.py", "code/shopcore/payments/refund.py", True), ("**/*.PY", "a.py", False),
])
def test_glob_matching_follows_pathlib_rules(pattern, path, expected):
    assert matches(pattern_parts(pattern), tuple(path.split("/"))) is expected


def test_glob_matching_is_linear_where_a_regex_would_backtrack():
    deep = tuple(["d"] * 60 + ["x.txt"])
    assert matches(pattern_parts("/".join(["**", "*"] * 40) + "/y.py"), deep) is False
    with pytest.raises(ToolError, match="'\\*\\*' must be a whole path part"):
        pattern_parts("**.py")


def test_grep_through_the_gate_finds_only_regular_files_inside(tree):
    result = run_tool("grep", {"pattern": "beta"}, ToolContext(root=tree))
    assert not result.is_error
    assert result.content == (
        "sub/a.txt:2:beta\n"
        "[not followed: 3 symbolic link(s) — these tools never follow links, even inside the "
        "root: dir-out, link-in.txt, link-out.txt]")


def test_binary_huge_and_non_utf8_files_are_refused_with_guidance(tree, monkeypatch):
    (tree / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tree / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (tree / "big.txt").write_text("x" * 101, encoding="utf-8")
    monkeypatch.setattr(safe_open, "MAX_FILE_BYTES", 100)
    with pytest.raises(ToolError, match="binary file .*text files only"):
        read(tree, "img.png")
    with pytest.raises(ToolError, match="not UTF-8 text .*offset 3"):
        read(tree, "latin1.txt")
    with pytest.raises(ToolError, match=r"too large to read whole \(101 bytes; the limit is "
                                        r"100\); give start_line and end_line"):
        read(tree, "big.txt")
    with pytest.raises(ToolError, match="is a folder.*glob"):
        read(tree, "sub")
    with pytest.raises(ToolError, match="no such file 'nope.md'.*glob"):
        read(tree, "nope.md")
    with pytest.raises(ToolError, match="'sub/a.txt' is a file, not a folder"):
        read(tree, "sub/a.txt/more.md")


def test_grep_skips_unreadable_files_and_says_so(tree):
    (tree / "blob.bin").write_bytes(b"beta\x00\x01")
    result = run_tool("grep", {"pattern": "beta", "path_glob": "*.bin"}, ToolContext(root=tree))
    assert result.content == ("no file was searched: 1 file of '*.bin' could not be searched "
                              "(named below)\n"
                              "[skipped 1 file(s) that are binary, not UTF-8, hard-linked or "
                              "unreadable: blob.bin]")


def test_catastrophic_regex_is_stopped_at_the_deadline(tree):
    (tree / "evil.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    context = ToolContext(root=tree, extra={"grep_timeout": 0.5})
    result = run_tool("grep", {"pattern": "(a+)+$"}, context)
    assert result.is_error
    assert "was stopped after 0.5 s" in result.content
    assert "nested repetition" in result.content
    # a pattern that is only slow over a huge line is not told it backtracks without end
    assert "a repeated group such as (ab)*c is slow over a very long line" in result.content


def test_invalid_regex_reports_the_regex_error():
    with pytest.raises(ToolError, match=r"invalid regular expression '\(a\+': missing \)"):
        search("(a+", [("f", "aaa")], 10)
    # a repetition count past what `re` can hold was "internal error in tool grep"
    with pytest.raises(ToolError, match=r"invalid regular expression 'x\{4294967295\}': "
                                        r"the repetition number is too large"):
        search("x{4294967295}", [("f", "xxx")], 10)


def test_search_caps_hits_and_cuts_long_lines():
    hits, more = search("x", [("f.txt", "x\n" * 5), ("g.txt", "x" * 400)], max_hits=5)
    assert hits == [("f.txt", n, "x") for n in range(1, 6)] and more
    hits, more = search("x", [("g.txt", "x" * 400)], max_hits=5)
    assert hits == [("g.txt", 1, "x" * sandbox.MAX_LINE + " …")] and not more


def test_symlink_loop_is_refused(tree):
    os.symlink(tree / "loop", tree / "loop")
    with pytest.raises(ToolError, match="'loop' is a symbolic link"):
        read(tree, "loop")


def test_reads_stop_one_byte_past_the_cap_whatever_is_left():
    readable, writable = os.pipe()  # a source with no size to trust, like a device
    os.write(writable, b"x" * 10_000)
    try:
        assert safe_open.read_capped(readable, 100) == b"x" * 101
    finally:
        os.close(readable)
        os.close(writable)


def test_a_search_that_runs_out_of_time_reading_does_not_blame_the_pattern(monkeypatch):
    """On a busy machine the 2 s once ran out while the child was still reading 19 MB, and
    the model was told its plain pattern 'refund' backtracked without end."""
    from ragkit.agent import regex_search
    monkeypatch.setattr(regex_search, "_CHILD", "import time; time.sleep(5)")
    with pytest.raises(ToolError) as caught:
        search("refund", [("a.md", "x" * 2_000_000), ("b.md", "y")], 10, timeout=0.5)
    assert str(caught.value) == ("the search for 'refund' ran out of its 0.5 s before matching "
                                 "began (reading 2 files, 2.0 M characters, on a busy machine); "
                                 "narrow path_glob to fewer files")


def test_a_missing_path_holding_wildcards_suggests_a_glob_without_them(tree):
    """The example glob was built from the missing name as written: a path like
    "**/*load*')" gave "glob(pattern='**/**load*')*')", a pattern of the name's own wildcards
    and quotes that no model could use. The example keeps the name's letters only."""
    with pytest.raises(ToolError) as raised:
        read(tree, "*load*")
    assert str(raised.value) == ("no such file '*load*'; list files with glob, e.g. "
                                 "glob(pattern='**/*load*')")
    with pytest.raises(ToolError) as raised:
        read(tree, "**/*load*')")
    assert str(raised.value).endswith("glob(pattern='**/*load*')")
    with pytest.raises(ToolError) as raised:
        read(tree, "*")
    assert str(raised.value) == "no such file '*'; list files with glob, e.g. glob(pattern='**/*')"
