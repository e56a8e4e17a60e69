"""A text file over 1,000,000 bytes is reached by the agent's tools: `read_file` reads a
range of its lines (streamed, memory bounded), and `grep`, which skips it, says it did
instead of "no lines match … in the 0 files". Before, read_file refused it and pointed to
grep, and grep skipped it: no tool reached a 1.5 MB log."""
from __future__ import annotations

import os

import pytest

from ragkit.agent import line_window
from ragkit.agent.gate import run_tool
from ragkit.agent.line_window import read_window
from ragkit.agent.tool import ToolContext, ToolError

LINE = "line {} of the big log with some padding text here\n"


@pytest.fixture
def root(tmp_path):
    with open(tmp_path / "big.log", "w", encoding="utf-8") as handle:
        handle.writelines(LINE.format(n) for n in range(1, 30_001))
    assert (tmp_path / "big.log").stat().st_size == 1_608_894
    return tmp_path


def test_read_file_reads_a_range_of_a_file_over_the_limit(root):
    result = run_tool("read_file", {"path": "big.log", "start_line": 100, "end_line": 102},
                      ToolContext(root=root))
    assert not result.is_error
    assert result.content == (
        "big.log: lines 100–102 of 30000\n"
        " 100 | line 100 of the big log with some padding text here\n"
        " 101 | line 101 of the big log with some padding text here\n"
        " 102 | line 102 of the big log with some padding text here")
    last = run_tool("read_file", {"path": "big.log", "start_line": 30_000},
                    ToolContext(root=root)).content
    assert last == "big.log: lines 30000–30000 of 30000\n30000 | line 30000 of the big log " \
                   "with some padding text here"
    past = run_tool("read_file", {"path": "big.log", "start_line": 30_001}, ToolContext(root=root))
    assert past.is_error and past.content == (
        "read_file: start_line 30001 is past the end of 'big.log', which has 30000 lines; give "
        "a start_line between 1 and 30000")


def test_read_file_without_a_range_says_how_to_read_a_large_file(root):
    whole = run_tool("read_file", {"path": "big.log"}, ToolContext(root=root))
    assert whole.is_error and whole.content == (
        "read_file: 'big.log' is too large to read whole (1,608,894 bytes; the limit is "
        "1,000,000); give start_line and end_line to read it in parts of up to 200 lines "
        "(e.g. start_line=1, end_line=200)")


def test_grep_says_it_skipped_a_large_file_not_that_nothing_matched(root):
    only = run_tool("grep", {"pattern": "y"}, ToolContext(root=root))
    assert only.content == (
        "no file was searched: 1 file of '**/*' could not be searched (named below)\n"
        "[not searched: 1 file over 1,000,000 bytes, which read_file reads in parts with "
        "start_line and end_line: big.log]")
    (root / "notes.md").write_text("nothing here\n", encoding="utf-8")
    beside = run_tool("grep", {"pattern": "zzz"}, ToolContext(root=root))
    assert beside.content == (
        "no lines match 'zzz' in the 1 file searched of '**/*'; 1 other file could not be "
        "searched (named below)\n"
        "[not searched: 1 file over 1,000,000 bytes, which read_file reads in parts with "
        "start_line and end_line: big.log]")


TEXT = ("first\r\nsecond\rthird\nfourth\x85fifth\u2028sixth\n\nNaïve café — 東京 "
        + "long " * 60 + "\r\n\r\nlast without an end")


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 64])
def test_streamed_lines_are_the_lines_str_splitlines_makes(tmp_path, monkeypatch, block):
    """Whatever the read size — a `\\r\\n` or a multi-byte character split between two
    reads — the streamed lines and their count are those of the whole text."""
    (tmp_path / "f.txt").write_bytes(TEXT.encode("utf-8"))
    monkeypatch.setattr(line_window, "BLOCK", block)
    expected = TEXT.splitlines()
    assert len(expected) == 10
    for first, last in [(1, 12), (2, 4), (8, 8), (9, 10), (11, 20)]:
        fd = os.open(tmp_path / "f.txt", os.O_RDONLY)
        try:
            window = read_window(fd, "f.txt", first, last, width=50)
        finally:
            os.close(fd)
        assert (window.total, window.complete) == (10, True)
        assert window.rows == [line[:51] for line in expected[first - 1:last]]


def test_a_long_range_is_bounded_and_counting_stops_at_the_scan_limit(root, monkeypatch):
    monkeypatch.setattr(line_window, "SCAN_BYTES", 200_000)
    fd = os.open(root / "big.log", os.O_RDONLY)
    try:
        window = read_window(fd, "big.log", 5, 6, width=10)
    finally:
        os.close(fd)
    assert window.rows == ["line 5 of t", "line 6 of t"]  # cut at width + 1 characters
    assert (window.total, window.complete) == (4_967, False)  # in the 262,144 bytes read
    shown = run_tool("read_file", {"path": "big.log", "start_line": 5, "end_line": 5},
                     ToolContext(root=root)).content
    assert shown.splitlines()[0] == "big.log: lines 5–5 of more than 4,967"


def test_a_start_line_past_what_is_read_stops_at_the_read_limit(root, monkeypatch):
    """A `start_line` past the end of a 4 GB log read all of it (9 s), and of a log a writer
    grows faster than it is read, without end. Reading now stops at `MAX_SCAN_BYTES`."""
    monkeypatch.setattr(line_window, "MAX_SCAN_BYTES", 1 << 20)
    read = (root / "big.log").read_bytes()[:1 << 20].count(b"\n")
    result = run_tool("read_file", {"path": "big.log", "start_line": 10**12,
                                    "end_line": 10**12}, ToolContext(root=root))
    assert result.is_error and read == 19_623
    assert result.content == ("read_file: start_line 1000000000000 is past the 19,623 lines "
                              "read of 'big.log' (its first 1 MiB, all read_file reads of a "
                              "file); give a start_line between 1 and 19623")
    inside = run_tool("read_file", {"path": "big.log", "start_line": 19_000, "end_line": 19_000},
                      ToolContext(root=root)).content
    assert inside.splitlines()[0] == "big.log: lines 19000–19000 of more than 19,623"


@pytest.mark.parametrize("data, message", [
    (b"ok\n" * 10 + b"\x00", "'f.txt' is a binary file (it contains NUL bytes)"),
    (b"ok\n" * 10 + b"caf\xe9\n", "'f.txt' is not UTF-8 text (undecodable byte at offset 33)"),
])
def test_a_streamed_file_is_refused_as_a_whole_one_is(tmp_path, monkeypatch, data, message):
    (tmp_path / "f.txt").write_bytes(data)
    monkeypatch.setattr(line_window, "BLOCK", 4)
    fd = os.open(tmp_path / "f.txt", os.O_RDONLY)
    try:
        with pytest.raises(ToolError) as refused:
            read_window(fd, "f.txt", 1, 2, width=50)
    finally:
        os.close(fd)
    assert str(refused.value).startswith(message)


def test_a_huge_start_line_is_named_briefly(tmp_path):
    """JSON's 1e308 is a whole number to the schema: the error printed its 309 digits."""
    (tmp_path / "a.txt").write_text("hello\n")
    result = run_tool("read_file", {"path": "a.txt", "start_line": 1e308},
                      ToolContext(root=tmp_path))
    assert result.is_error and result.content == (
        "read_file: start_line 1e+308 is past the end of 'a.txt', which has 1 line; give a "
        "start_line between 1 and 1")
