"""JSON nested deeper than Python's stack is one error line wherever ragkit reads JSON.

100,000 `[` made `json.loads` raise RecursionError: a traceback from `ragkit search` over a
hand-edited `index.json`, from `ragkit cookbook run -p k=[[[…`, from a results folder's
marker, a model file, a trace. Each reader now goes through `ragkit.jsonl.parse_json`, which
says it as the JSONL readers did: `FILE: malformed JSON (nested too deeply)`. The command
line is run as a user runs it, the installed `ragkit` in a new process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from cli_errors import one_error_line
from ragkit.agent.trace_file import FORMAT as TRACE, read_trace
from ragkit.datasets import load_cookbook
from ragkit.documents import RagkitError
from ragkit.jsonl import MalformedJSON, parse_json
from ragkit.rerank.offline import LinearModel

RAGKIT = str(Path(sys.executable).with_name("ragkit"))
DEEP = "[" * 100_000
TOO_DEEP = "malformed JSON (nested too deeply)"


def ragkit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The installed command in a new process, with its own RAGKIT_HOME and no API key."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(cwd / ".home")
    return subprocess.run([RAGKIT, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if ".home" not in p.parts)


@pytest.fixture(scope="module")
def deep_index(tmp_path_factory) -> Path:
    """A folder with an index whose index.json is 100,000 `[`, and queries."""
    folder = tmp_path_factory.mktemp("deep")
    (folder / "docs.jsonl").write_text('{"id": "a", "text": "hello world"}\n'
                                       '{"id": "b", "text": "other words"}\n')
    (folder / "q.jsonl").write_text('{"id": "q", "text": "hello"}\n')
    done = ragkit(folder, "index", "docs.jsonl", "--out", "ix", "--embedder", "none")
    assert done.returncode == 0, done.stderr
    (folder / "ix" / "index.json").write_text(DEEP)
    return folder


def test_a_deep_index_json_is_one_line_for_search_and_ask(deep_index):
    before = listing(deep_index)
    done = ragkit(deep_index, "search", "ix", "--queries", "q.jsonl", "--out", "run.trec",
                  "--mode", "bm25")
    assert one_error_line(done) == f"ragkit: error: ix/index.json: {TOO_DEEP}"
    done = ragkit(deep_index, "ask", "--index", "ix", "hello")
    assert one_error_line(done) == f"ragkit: error: ix/index.json: {TOO_DEEP}"
    assert listing(deep_index) == before  # no run, no temporary file


def test_a_deep_index_json_is_no_index_to_replace(deep_index):
    """Not ragkit's index as far as can be read: the folder is left as it is."""
    before = listing(deep_index)
    done = ragkit(deep_index, "index", "docs.jsonl", "--out", "ix", "--embedder", "none")
    assert one_error_line(done) == (
        "ragkit: error: ix: exists and is not a ragkit index; refusing to overwrite it (choose "
        "a new or empty path, or delete it yourself)")
    assert listing(deep_index) == before
    assert (deep_index / "ix" / "index.json").read_text() == DEEP


def test_a_deep_tool_args_is_one_line(tmp_path):
    done = ragkit(tmp_path, "tool", "grep", "--root", ".", "--args", DEEP)
    assert one_error_line(done) == f"ragkit: error: --args: {TOO_DEEP}"


def _notebook(path: Path) -> Path:
    """A notebook with one parameter, `x = 1`, that must not run."""
    nb = new_notebook()
    first = new_code_cell("x = 1")
    first.metadata["tags"] = ["parameters"]
    nb.cells = [first, new_code_cell("raise SystemExit('must not run')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_deep_parameter_value_is_one_line_naming_it(tmp_path, command):
    nb = _notebook(tmp_path / "01_tiny.ipynb")
    done = ragkit(tmp_path, "cookbook", command, "--notebook", str(nb), "-p", f"x={DEEP}",
                  "--out", "out")
    assert one_error_line(done) == f"ragkit: error: {nb}: field 'x': {TOO_DEEP}"
    assert listing(tmp_path) == ["01_tiny.ipynb"]


def test_a_deep_results_marker_is_no_results_folder_to_replace(tmp_path):
    nb = _notebook(tmp_path / "01_tiny.ipynb")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".ragkit-results").write_text(DEEP)
    done = ragkit(tmp_path, "cookbook", "run", "--notebook", str(nb), "--out", "out")
    line = one_error_line(done)
    assert line.startswith("ragkit: error: out: "), line
    assert listing(tmp_path) == ["01_tiny.ipynb", "out", "out/.ragkit-results"]


def test_deep_model_trace_and_cookbook_files_name_the_file(tmp_path):
    model, trace = tmp_path / "model.json", tmp_path / "trace.jsonl"
    model.write_text(DEEP)
    trace.write_text(json.dumps({"format": TRACE}) + "\n" + DEEP + "\n")
    (tmp_path / "codebase_chunks.json").write_text(DEEP)
    with pytest.raises(RagkitError) as raised:
        LinearModel.load(model, None)
    assert str(raised.value) == f"{model}: {TOO_DEEP}"
    with pytest.raises(RagkitError) as raised:
        read_trace(trace)
    assert str(raised.value) == f"{trace}:2: {TOO_DEEP}"
    with pytest.raises(RagkitError) as raised:
        load_cookbook(tmp_path)
    assert str(raised.value) == f"{tmp_path / 'codebase_chunks.json'}: {TOO_DEEP}"


@pytest.mark.parametrize("raw, place, line, said", [
    (b"[1, 2]", "--args", None, None),
    (DEEP, "--args", None, f"--args: {TOO_DEEP}"),
    ("9" * 5_000, "-p x", None, "-p x: a number of over 4,300 digits; write it as a string"),
    ('{\n "a": 1,\n oops}', Path("f.json"), None, "f.json:3: malformed JSON (Expecting "
                                                  "property name enclosed in double quotes)"),
    ("{oops}", Path("f.jsonl"), 7, "f.jsonl:7: malformed JSON (Expecting property name "
                                   "enclosed in double quotes)"),
    (b"\xff", Path("f.json"), None, "f.json: not UTF-8 text (invalid start byte)"),
])
def test_parse_json_reads_or_names_the_place(raw, place, line, said):
    if said is None:
        assert parse_json(raw, place, line) == json.loads(raw)
        return
    with pytest.raises(RagkitError) as raised:
        parse_json(raw, place, line)
    assert str(raised.value) == said
    # Only text that is no JSON is MalformedJSON (`-p x=words` is then a string)
    assert isinstance(raised.value, MalformedJSON) == ("malformed JSON (E" in said
                                                       or "UTF-8" in said)


@pytest.mark.parametrize("raw, message", [
    (b'{"id": "q1", "text": "refund', "Unterminated string starting at column 22"),
    (b'{"id": "q1", "text": "a\tb"}', "Invalid control character at column 24"),
    (b'{"id": "q1" "text": 1}', "Expecting ',' delimiter"),
])
def test_a_json_error_says_where_in_the_line_when_json_puts_it_after_its_message(raw, message):
    """"malformed JSON (Unterminated string starting at)" ended on a dangling "at": Python's
    json puts the place after such a message. The column is said; other messages, which
    read whole, are kept as they are."""
    from ragkit.documents import RagkitError
    from ragkit.jsonl import parse_json
    with pytest.raises(RagkitError) as caught:
        parse_json(raw, Path("questions.jsonl"), 3)
    assert str(caught.value) == f"questions.jsonl:3: malformed JSON ({message})"
