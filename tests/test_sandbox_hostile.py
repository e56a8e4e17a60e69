"""The file tools under hostile trees: FIFOs, devices, hard links, a folder swapped for a link
mid-call, symlink loops, paths beyond PATH_MAX, and globs that would walk without end.

Each tool runs as the model calls it — through the gate (`run_tool`) — and, where a call could
hang or eat memory, in a child process with a deadline and an address-space limit.
"""
import json
import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from ragkit.agent.gate import run_tool
from ragkit.agent.tool import ToolContext

# Runs tool calls in a child with at most 1.5 GB of address space; prints the results as JSON.
CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    from ragkit.agent.gate import run_tool
    from ragkit.agent.tool import ToolContext
    results = [run_tool(name, args, ToolContext(root=sys.argv[1]))
               for name, args in json.loads(sys.argv[2])]
    print(json.dumps([{"is_error": r.is_error, "content": r.content} for r in results]))
""")


def tools_in_child(root, calls, timeout=30):
    """The results of `calls` ([(tool, arguments)]) run in a separate process; fails the test
    if they take over `timeout` seconds (a hang)."""
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(root), json.dumps(calls)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{calls} did not return within {timeout} s")
    assert done.returncode == 0, done.stderr[-500:]
    return json.loads(done.stdout)


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "code.py").write_text("def refund(): pass\n", encoding="utf-8")
    return root


def test_read_file_refuses_a_fifo_at_once(root):
    os.mkfifo(root / "pipe.txt")
    result, grep = tools_in_child(root, [("read_file", {"path": "pipe.txt"}),
                                         ("grep", {"pattern": "refund"})])
    assert result["is_error"]
    assert result["content"].startswith(
        "read_file: 'pipe.txt' is a FIFO (named pipe), not a regular file")
    assert grep["content"].splitlines() == [
        "sub/code.py:1:def refund(): pass",
        "[skipped 1 special file(s) (FIFO, device or socket): pipe.txt]"]


def test_read_file_refuses_a_character_device_without_reading_it(root):
    os.mknod(root / "zero.txt", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    result, grep = tools_in_child(root, [("read_file", {"path": "zero.txt"}),
                                         ("grep", {"pattern": "refund", "path_glob": "**/*"})])
    assert result["is_error"]
    assert result["content"].startswith(
        "read_file: 'zero.txt' is a character device, not a regular file")
    assert grep["content"].splitlines() == [
        "sub/code.py:1:def refund(): pass",
        "[skipped 1 special file(s) (FIFO, device or socket): zero.txt]"]


def test_a_hard_link_to_a_file_outside_the_root_is_not_read(root, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("refund TOPSECRET\n", encoding="utf-8")
    os.link(secret, root / "inside.txt")
    context = ToolContext(root=root)
    result = run_tool("read_file", {"path": "inside.txt"}, context)
    assert result.is_error and "TOPSECRET" not in result.content
    assert result.content.startswith("read_file: 'inside.txt' has 2 names (hard links)")
    grep = run_tool("grep", {"pattern": "refund"}, context).content
    assert "TOPSECRET" not in grep and grep.splitlines()[0] == "sub/code.py:1:def refund(): pass"
    assert "inside.txt" in grep.splitlines()[-1]  # named among the skipped files


SWAPPER = textwrap.dedent("""
    import os, sys
    os.chdir(sys.argv[1])
    while True:  # 'root/d' is a real folder, then a link to the folder holding the secret
        os.rename("root/d", "real")
        os.rename("link", "root/d")
        os.rename("root/d", "link")
        os.rename("real", "root/d")
""")


def test_swapping_a_folder_for_a_link_mid_call_never_leaks(tmp_path):
    (tmp_path / "root" / "d").mkdir(parents=True)
    (tmp_path / "root" / "d" / "f.txt").write_text("public\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text("TOPSECRET\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    context = ToolContext(root=tmp_path / "root")
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(tmp_path)])
    calls, leaks, public = 0, 0, 0
    try:
        deadline = time.monotonic() + 4
        while calls < 20_000 and time.monotonic() < deadline:
            content = run_tool("read_file", {"path": "d/f.txt"}, context).content
            calls += 1
            leaks += "TOPSECRET" in content
            public += "public" in content
    finally:
        swapper.kill()
        swapper.wait()
    assert public > 0  # the race ran: some calls saw the real folder
    assert leaks == 0, f"{leaks} of {calls} calls read the file outside the root"


def test_a_symlink_loop_is_skipped_and_named_by_grep_and_glob(root):
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    context = ToolContext(root=root)
    grep = run_tool("grep", {"pattern": "refund"}, context)
    assert not grep.is_error
    assert grep.content.splitlines()[0] == "sub/code.py:1:def refund(): pass"
    assert "loop1, loop2" in grep.content.splitlines()[-1]
    glob = run_tool("glob", {"pattern": "**/*"}, context)
    assert glob.content.splitlines()[0] == "sub/code.py"
    assert glob.content.splitlines()[1].startswith("[not followed: 2 symbolic link(s)")
    read = run_tool("read_file", {"path": "loop1"}, context)
    assert read.is_error and read.content.startswith("read_file: 'loop1' is a symbolic link")


def test_a_name_with_a_line_break_cannot_forge_a_grep_hit_or_a_glob_line(root):
    """A file named "x\\nsub/b.py:1:FAKE HIT … refund.md" printed as a hit of its own."""
    (root / "x\nsub").mkdir()
    (root / "x\nsub" / "b.py:1:FAKE HIT refund.md").write_text("refund ok\n", encoding="utf-8")
    (root / "y\rz.md").write_text("refund too\n", encoding="utf-8")
    context = ToolContext(root=root)
    grep = run_tool("grep", {"pattern": "refund"}, context)
    assert grep.content.splitlines() == [
        "sub/code.py:1:def refund(): pass",
        "[skipped 2 name(s) holding a line break or another control or invisible character "
        "(shown escaped): x\\nsub, y\\rz.md]"]
    glob = run_tool("glob", {"pattern": "**/*"}, context)
    assert glob.content.splitlines()[0] == "sub/code.py" and "FAKE" not in glob.content.split(
        "\n[skipped")[0]


def test_a_name_with_a_right_to_left_override_is_named_escaped_not_listed(root):
    """"report\u202egpj.exe" showed as "reportexe.jpg" in a trace; a zero-width space hides
    a second name that reads the same. A joiner (Persian, emoji) stays a plain name."""
    (root / "report\u202egpj.exe").write_text("refund\n", encoding="utf-8")
    (root / "co\u200bde.py").write_text("refund\n", encoding="utf-8")
    (root / "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md").write_text("refund\n", encoding="utf-8")
    glob = run_tool("glob", {"pattern": "*"}, ToolContext(root=root)).content.splitlines()
    assert glob == ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",
                    "[skipped 2 name(s) holding a line break or another control or invisible "
                    "character (shown escaped): co\\u200bde.py, report\\u202egpj.exe]"]


@pytest.mark.parametrize("path, message", [
    ("x" * 5000, "the path is 5,000 characters long (limit 4,096)"),
    ("/".join(["y" * 300] * 3), "a part of the path is 300 characters long (limit 255)"),
])
def test_an_overlong_path_is_an_instructive_error_without_the_root(root, path, message):
    result = run_tool("read_file", {"path": path}, ToolContext(root=root))
    assert result.is_error and message in result.content
    assert str(root) not in result.content and "internal error" not in result.content


def test_folders_nested_beyond_path_max_do_not_break_glob_or_grep(root):
    fd = os.open(root, os.O_RDONLY)
    for _ in range(20):  # 20 × 251 characters: past PATH_MAX (4,096)
        os.mkdir("d" * 250, dir_fd=fd)
        deeper = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(os.open("deep.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)
    context = ToolContext(root=root)
    for name, args in (("glob", {"pattern": "**/*.py"}), ("grep", {"pattern": "refund"})):
        result = run_tool(name, args, context)
        assert not result.is_error, result.content
        assert str(root) not in result.content
        lines = result.content.splitlines()
        assert lines[0].startswith("sub/code.py")
        assert lines[-1].startswith("[not searched: 1 folder(s) nested too deep")


def _many_folders(root, n=5000):
    """n folders f0/g0 … f49/g99; the first ten of each hundred hold an x.txt."""
    for i in range(n):
        folder = os.path.join(root, f"f{i // 100}", f"g{i % 100}")
        os.makedirs(folder)
        if i % 100 < 10:
            with open(os.path.join(folder, "x.txt"), "w", encoding="utf-8") as handle:
                handle.write("refund\n")


def test_glob_over_thousands_of_folders_is_bounded_in_time_and_entries(root):
    _many_folders(root)
    start = time.monotonic()
    full = run_tool("glob", {"pattern": "**/**/**/**"}, ToolContext(root=root))
    assert time.monotonic() - start < 5
    assert full.content.splitlines()[:2] == ["f0/g0/x.txt", "f0/g1/x.txt"]
    small = ToolContext(root=root, extra={"walk_max_entries": 1000})
    cut = run_tool("glob", {"pattern": "**/**/**/**"}, small).content.splitlines()
    assert cut[-1].startswith("[stopped after 1,000 entries: the listing is incomplete; "
                              "narrow the pattern")
    hurried = run_tool("glob", {"pattern": "**/*.txt"}, ToolContext(root=root, extra={
        "walk_timeout": 0})).content.splitlines()
    assert hurried[-1].startswith("[stopped after 0 s: the listing is incomplete; narrow")
    grep = run_tool("grep", {"pattern": "nothing-like-this", "path_glob": "**/**/**/*.txt"},
                    small).content.splitlines()
    assert grep[-1].startswith("[stopped after 1,000 entries")


def test_a_walk_reads_at_most_its_entry_budget_from_all_folders_together(tmp_path, monkeypatch):
    """Each folder was read up to the budget but counted as one entry: 64 nested folders of
    50,000 names each held 3.2 million entries (0.5 GB) and took 12 s against the 2 s limit.
    Here: 6 nested folders of 90 files each, a budget of 100 entries."""
    folder = tmp_path
    for _ in range(6):
        for number in range(90):
            (folder / f"f{number:02d}.txt").write_text("x\n", encoding="utf-8")
        folder = folder / "0"
        folder.mkdir()
    read, scandir = [], os.scandir

    def counted(fd):
        listing = scandir(fd)
        class Counting:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                listing.close()
            def __iter__(self):
                for entry in listing:
                    read.append(entry.name)
                    yield entry
        return Counting()
    monkeypatch.setattr(os, "scandir", counted)
    small = ToolContext(root=tmp_path, extra={"walk_max_entries": 100})
    glob = run_tool("glob", {"pattern": "**/*.txt"}, small).content.splitlines()
    assert len(read) == 101  # 91 of the root, 10 of 0/, none of 0/0/
    assert glob[-1].startswith("[stopped after 100 entries: the listing is incomplete")


def test_a_long_glob_listing_keeps_its_notes_and_cuts_no_path(tmp_path):
    """300 files under a long folder name, a link and a FIFO: glob showed 129 paths, cut the
    130th mid-name and ended with the output cap's own line; "200 of 300 files shown" and
    the notes on the link and the FIFO were lost."""
    folder = tmp_path / ("a-very-very-long-folder-name-" * 2)
    folder.mkdir()
    for number in range(300):
        (folder / f"file{number:03d}.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(folder / "file000.txt")
    os.mkfifo(tmp_path / "pipe.txt")
    context = ToolContext(root=tmp_path)
    result = run_tool("glob", {"pattern": "**/*"}, context).content
    lines = result.splitlines()
    assert len(result) <= context.max_output and "[truncated at" not in result
    paths = [line for line in lines if not line.startswith("[")]
    assert paths == [f"{folder.name}/file{n:03d}.txt" for n in range(len(paths))]
    assert 40 < len(paths) < 60  # 71 characters a line, the notes kept
    assert lines[len(paths)].startswith(f"[truncated: {len(paths)} of 300 files shown; ")
    assert any("link.txt" in line for line in lines[len(paths) + 1:])
    assert any("pipe.txt" in line for line in lines[len(paths) + 1:])


def test_a_50_mb_line_does_not_blow_grep(root):
    with open(root / "huge.txt", "w", encoding="utf-8") as handle:
        handle.write("refund " * 7_500_000)
    start = time.monotonic()
    result = run_tool("grep", {"pattern": "refund"}, ToolContext(root=root))
    assert time.monotonic() - start < 5 and len(result.content) <= 4000
    assert result.content.splitlines()[0] == "sub/code.py:1:def refund(): pass"
    assert "huge.txt" in result.content.splitlines()[-1]
    read = run_tool("read_file", {"path": "huge.txt"}, ToolContext(root=root))
    assert read.is_error and "too large to read" in read.content


def test_a_name_that_is_not_utf8_is_skipped_and_named_so_the_agent_and_its_trace_go_on(
        root, tmp_path):
    """A file named b"bad\\xff refund.md" reached the model's request as a lone surrogate:
    `ragkit ask --agent` stopped with a UnicodeEncodeError in the cache key or the trace."""
    from ragkit.agent.loop import run_agent
    from ragkit.agent.tools import TOOLS
    from ragkit.agent.trace_file import read_trace
    from ragkit.llm import LLM

    with open(os.path.join(os.fsencode(root), b"bad\xff refund.md"), "w") as handle:
        handle.write("refund here\n")
    context = ToolContext(root=root)
    note = "[skipped 1 name(s) that are not UTF-8 (shown with \\x escapes): bad\\xff refund.md]"
    for name, args in (("glob", {"pattern": "**/*"}), ("grep", {"pattern": "refund"}),
                       ("glob", {"pattern": "nothing*"})):
        result = run_tool(name, args, context)
        assert result.content.splitlines()[-1] == note
        result.content.encode("utf-8")  # no lone surrogate left in the result
    for name, args in (("read_file", {"path": "bad\udcff refund.md"}),
                       ("glob", {"pattern": "bad\udcff*"})):
        result = run_tool(name, args, context)
        assert result.is_error and "not UTF-8" in result.content and "bad\\xff" in result.content
        result.content.encode("utf-8")
    trace = tmp_path / "trace.jsonl"
    done = run_agent("Where is refund defined?", [TOOLS[n] for n in ("grep", "glob")], context,
                     llm=LLM(cache=False), trace=trace)
    results = [c["content"] for r in read_trace(trace) for c in r["tool_calls"]]
    assert done.turns >= 1 and any("bad\\xff refund.md" in r for r in results)


def test_the_advice_to_narrow_a_flat_folder_names_no_file_as_a_folder(tmp_path):
    """Over files at the top of the root, glob advised "a folder such as './*'" (the same
    listing) and "e.g. 'f0004.txt/**/*'", a file taken for a folder."""
    for number in range(300):
        (tmp_path / f"f{number:04d}.txt").write_text("match\n", encoding="utf-8")
    small = ToolContext(root=tmp_path, extra={"walk_max_entries": 250})
    glob = run_tool("glob", {"pattern": "**/*"}, small).content.splitlines()
    assert glob[-2:] == [
        "[truncated: 200 of 250 files shown; use a narrower pattern, e.g. a part of a name "
        "such as 'f0*.txt']",
        "[stopped after 250 entries: the listing is incomplete; narrow the pattern to a folder "
        "or a part of a name, e.g. 'f0*.txt' instead of '**/*']"]
    grep = run_tool("grep", {"pattern": "match", "max_hits": 2}, ToolContext(root=tmp_path))
    assert grep.content.splitlines()[-1] == (
        "[truncated: 2 matching lines shown, and more match; narrow the search with a more "
        "specific pattern or a path_glob such as 'f0*.txt']")


def test_a_folder_the_tools_cannot_open_is_named_not_an_empty_match(tmp_path, monkeypatch):
    """`glob "locked/*"` on a folder that may not be read said "no files match", as if it
    were empty (`**/*` named it as not readable). Root is not refused a mode-000 folder, so
    the refusal is made here."""
    import errno
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.txt").write_text("x\n", encoding="utf-8")
    opened = os.open

    def refusing(path, *args, **kwargs):
        if path == "locked":
            raise PermissionError(errno.EACCES, "Permission denied")
        return opened(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", refusing)
    glob = run_tool("glob", {"pattern": "locked/*"}, ToolContext(root=tmp_path)).content
    assert "[not searched: 1 folder(s) nested too deep" in glob and "locked" in glob


def test_an_unopenable_root_names_docs_search_only_when_the_run_has_it(tmp_path):
    gone = tmp_path / "gone"
    alone = run_tool("glob", {"pattern": "*"}, ToolContext(root=gone))
    assert alone.is_error and alone.content.endswith("the file tools are unavailable")
    indexed = run_tool("glob", {"pattern": "*"}, ToolContext(root=gone, pipeline=object()))
    assert indexed.content.endswith("the file tools are unavailable — use docs_search instead")
