"""What `ragkit index` may replace, and which outputs ragkit refuses to write into.

Re-indexing replaces only what an index wrote (index.json lists its files; an index written
before that list is judged by ragkit's own file names): a user's file beside it, the input
itself, or a hand-made index.json never makes a folder deletable. Only regular files are
ever replaced: a device or a FIFO given as an output is refused before anything opens it
(opening a FIFO would block). Each case runs the installed CLI in its own process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.atomic import check_target, write_text
from ragkit.documents import RagkitError
from ragkit.runs import is_trec_run

DOCS = ('{"id": "a", "text": "the kettle boils water in two minutes"}\n'
        '{"id": "b", "text": "a toaster browns bread slices"}\n')
BM25_FILES = ["bm25/bm25.json", "bm25/data.npy", "bm25/doc_len.npy", "bm25/idf.npy",
              "bm25/indices.npy", "bm25/indptr.npy", "bm25/terms.bin", "bm25/terms.npy",
              "bm25/terms_hash.npy"]


def ragkit(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The installed CLI in a new process (what a user runs), with its own RAGKIT_HOME and
    no API key (nothing may call out)."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(cwd / ".home")
    return subprocess.run([sys.executable, "-m", "ragkit.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def refused(result: subprocess.CompletedProcess, *words: str) -> str:
    """The one error line of an exit-2 refusal, checked to hold `words`."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("ragkit: error: ") and all(w in line for w in words), line
    return line


@pytest.fixture
def built(tmp_path) -> Path:
    (tmp_path / "docs.jsonl").write_text(DOCS)
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path


def test_an_index_records_the_files_it_wrote(built):
    manifest = json.loads((built / "ix" / "index.json").read_text())
    assert manifest["files"] == sorted(["chunks.jsonl", "chunks.offsets.npy", "index.json",
                                        *BM25_FILES])
    on_disk = sorted(str(p.relative_to(built / "ix")) for p in (built / "ix").rglob("*")
                     if p.is_file())
    assert on_disk == manifest["files"]


def test_reindexing_an_index_replaces_it(built):
    (built / "docs.jsonl").write_text(DOCS + '{"id": "c", "text": "grinders crush beans"}\n')
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=built)
    assert result.returncode == 0, result.stderr
    assert json.loads((built / "ix" / "index.json").read_text())["chunks"] == 3
    assert not [p for p in built.iterdir() if p.name.startswith(".ix.")]


@pytest.mark.parametrize("stranger, named", [
    ("mynotes.txt", "mynotes.txt"), ("sub/x.txt", "sub"), ("bm25/mine.npy", "bm25/mine.npy"),
    # Milvus Lite's names are the store's in a Milvus index only: a memory index's re-index
    # deleted these, exit 0
    ("milvus.db.bak", "milvus.db.bak"), ("milvus.db/thesis.txt", "milvus.db"),
    ("bm25-old/data.npy", "bm25-old")])
def test_reindexing_refuses_a_folder_holding_a_users_file_and_keeps_it(built, stranger, named):
    path = built / "ix" / stranger
    path.parent.mkdir(exist_ok=True)
    path.write_text("mine")
    before = (built / "ix" / "index.json").read_text()
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=built)
    refused(result, f"ix/{named}: not written by ragkit")
    assert path.read_text() == "mine"
    assert (built / "ix" / "index.json").read_text() == before
    assert not [p for p in built.iterdir() if p.name.startswith(".ix.")]


def test_the_input_inside_the_output_folder_is_refused_and_kept(built):
    os.replace(built / "docs.jsonl", built / "ix" / "mydocs.jsonl")
    result = ragkit("index", "ix/mydocs.jsonl", "--out", "ix", "--embedder", "none",
                    cwd=built)
    refused(result, "ix/mydocs.jsonl", "inside --out ix")
    assert (built / "ix" / "mydocs.jsonl").read_text() == DOCS


def test_an_input_named_like_an_index_file_inside_the_output_is_refused(built):
    result = ragkit("index", "ix/chunks.jsonl", "--out", "ix", "--embedder", "none",
                    cwd=built)
    refused(result, "ix/chunks.jsonl", "inside --out ix")


@pytest.mark.parametrize("manifest", [
    {"format": "ragkit-index"},
    {"format": "ragkit-index", "version": 1, "config": {}, "chunks": 0,
     "files": ["index.json", "notes.txt"]},
])
def test_a_hand_made_index_json_does_not_make_a_folder_deletable(tmp_path, manifest):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    (tmp_path / "ix").mkdir()
    (tmp_path / "ix" / "index.json").write_text(json.dumps(manifest))
    (tmp_path / "ix" / "notes.txt").write_text("mine")
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (tmp_path / "ix" / "notes.txt").read_text() == "mine"


def test_an_index_written_before_the_file_list_is_still_replaced(built):
    index = built / "ix" / "index.json"
    manifest = json.loads(index.read_text())
    del manifest["files"]
    index.write_text(json.dumps(manifest))
    (built / "ix" / "bm25" / "impact.npy").write_bytes(b"old")  # an earlier version's file
    from ragkit.index_folder import owns_index
    assert owns_index(built / "ix")
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=built)
    assert result.returncode == 0, result.stderr
    assert not (built / "ix" / "bm25" / "impact.npy").exists()
    assert "files" in json.loads(index.read_text())


def test_a_listed_file_the_index_no_longer_has_is_no_stranger(built):
    (built / "ix" / "bm25" / "idf.npy").unlink()  # a damaged index may still be rebuilt
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=built)
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------ devices and FIFOs

def test_search_out_onto_a_fifo_is_refused_without_opening_it(built):
    (built / "q.jsonl").write_text('{"id": "q1", "text": "kettle"}\n')
    os.mkfifo(built / "run.trec")
    result = ragkit("search", "ix", "--queries", "q.jsonl", "--mode", "bm25", "--out",
                    "run.trec", cwd=built, timeout=20)
    refused(result, "run.trec", "not a regular file")
    assert (built / "run.trec").is_fifo()


def test_search_out_onto_a_device_is_refused(built):
    # through a link to /dev/null: code that wrongly replaces it replaces the link, never
    # the machine's /dev/null (as root, `--out /dev/null` itself would be)
    (built / "q.jsonl").write_text('{"id": "q1", "text": "kettle"}\n')
    os.symlink("/dev/null", built / "run.trec")
    result = ragkit("search", "ix", "--queries", "q.jsonl", "--mode", "bm25", "--out",
                    "run.trec", cwd=built)
    refused(result, "run.trec", "not a regular file")
    assert os.readlink(built / "run.trec") == "/dev/null"


def test_a_symlink_to_a_device_is_refused(tmp_path):
    os.symlink("/dev/null", tmp_path / "run.trec")
    with pytest.raises(RagkitError, match="not a regular file"):
        write_text(tmp_path / "run.trec", "q Q0 d 1 1.0 t\n", is_ours=is_trec_run)
    assert os.readlink(tmp_path / "run.trec") == "/dev/null"


def test_index_out_onto_a_fifo_is_refused(tmp_path):
    (tmp_path / "docs.jsonl").write_text(DOCS)
    os.mkfifo(tmp_path / "ix")
    result = ragkit("index", "docs.jsonl", "--out", "ix", "--embedder", "none", cwd=tmp_path,
                    timeout=20)
    refused(result, "ix", "not a regular file")
    assert (tmp_path / "ix").is_fifo()


def test_recognizers_never_open_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    code = ("import sys; from ragkit.runs import is_trec_run; "
            "print(is_trec_run(sys.argv[1]), is_trec_run('/dev/null'))")
    try:  # in a process of its own: opening a FIFO blocks until a writer comes
        found = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pipe")],
                               capture_output=True, text=True, timeout=20).stdout
    except subprocess.TimeoutExpired:
        pytest.fail("is_trec_run opened the FIFO and blocked")
    assert found.split() == ["False", "False"]
    with pytest.raises(RagkitError, match="not a regular file"):
        check_target(tmp_path / "pipe", lambda p: True, "a TREC run", folder=False)


def test_ask_trace_onto_a_fifo_is_refused(tmp_path):
    (tmp_path / "root").mkdir()
    os.mkfifo(tmp_path / "trace.jsonl")
    result = ragkit("ask", "--agent", "--root", "root", "--trace", "trace.jsonl", "refunds?",
                    cwd=tmp_path, timeout=30)
    refused(result, "trace.jsonl", "not a regular file")
    assert (tmp_path / "trace.jsonl").is_fifo()


@pytest.mark.parametrize("command", [["cookbook", "run", "--out", "out"],
                                     ["eval", "data", "--per-query", "out"]])
def test_other_outputs_onto_a_fifo_are_refused(tmp_path, command):
    os.mkfifo(tmp_path / "out")
    result = ragkit(*command, cwd=tmp_path, timeout=30)
    refused(result, "out", "not a regular file")
    assert (tmp_path / "out").is_fifo()


# Saves at least 60 times and until the reader has loaded 60 times (it then makes the file
# argv[4]): counts, not seconds. A fixed 6 s gave 33 saves under another test's fsyncs, not
# the 50 asserted; the time limit only ends a reader that never loads.
WRITER = """
import os, sys, time
from ragkit.pipeline import Pipeline
versions = [Pipeline.load(sys.argv[1]), Pipeline.load(sys.argv[2])]
limit = time.monotonic() + 300
n = 0
while (n < 60 or not os.path.exists(sys.argv[4])) and time.monotonic() < limit:
    versions[n % 2].save(sys.argv[3], progress=False)
    n += 1
    time.sleep(0.01)
print(n)
"""


def test_a_search_opening_an_index_while_a_build_replaces_it_reads_one_version(tmp_path):
    """One process re-saves an index over and over, alternating two versions (their chunk
    texts say alpha or bravo); this one loads and searches it meanwhile. Every load must be
    one version: the files were opened path by path, and a swap between two opens paired one
    version's BM25 with the other's text (silently), or read "damaged ... rebuild it"."""
    from ragkit.config import IndexConfig, SearchConfig
    from ragkit.documents import Document
    from ragkit.pipeline import Pipeline
    config = IndexConfig(contextualizer="none", embedder=None)
    for word in ("alpha", "bravo"):
        docs = [Document(f"d{i}.md", f"{word} text number {i} with shared words here")
                for i in range(60)]
        Pipeline.build(docs, config, progress=False).save(tmp_path / word, progress=False)
    Pipeline.load(tmp_path / "alpha").save(tmp_path / "live", progress=False)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "alpha"),
                               str(tmp_path / "bravo"), str(tmp_path / "live"),
                               str(tmp_path / "loaded")], stdout=subprocess.PIPE, text=True)
    loads, mixed, errors = 0, [], []
    try:
        while writer.poll() is None:
            try:
                index = Pipeline.load(tmp_path / "live")
            except RagkitError as exc:
                errors.append(str(exc))
                continue
            loads += 1
            if loads == 60:
                (tmp_path / "loaded").touch()
            for word in ("alpha", "bravo"):
                top = index.search([word], 1, SearchConfig(mode="bm25"))[0]
                text = next(c.text for c in index.chunks if c.id == top[0][0]) if top else None
                if top and top[0][1] > 0 and word not in text:
                    mixed.append((word, text))
    finally:
        swaps = int(writer.communicate()[0])
    assert swaps >= 60 and loads >= 60
    assert mixed == []
    assert all("while being opened" in e for e in errors), errors[:3]


@pytest.mark.parametrize("field, value, message", [
    ("embedder", 7, "field 'config.embedder': expected str or null, got 7"),
    ("contextualizer", {}, "field 'config.contextualizer': expected str, got {}"),
    ("chunk_size", "x", "field 'config.chunk_size': expected a whole number, got 'x'"),
    ("window", -5, "field 'config.window': expected a number of tokens, got -5"),
    ("parent_child", 1, "field 'config.parent_child': expected bool, got 1"),
    ("colour", "red", "field 'config.colour': not an index option"),
    ("contextualizer", "nope", "field 'config.contextualizer': unknown contextualizer 'nope' "
                                "(known: none, structural, claude)"),
    ("overlap", 300, "field 'config.chunk_size': overlap must be between 0 and half the chunk "
                     "size (256), got 300")])
def test_a_hand_edited_index_config_is_one_line_in_search_and_update(built, field, value,
                                                                     message):
    """`"embedder": 7` made `search` raise AttributeError; `"contextualizer": {}` and
    `"chunk_size": "x"` made `--update` raise TypeError — tracebacks."""
    manifest = json.loads((built / "ix" / "index.json").read_text())
    manifest["config"][field] = value
    (built / "ix" / "index.json").write_text(json.dumps(manifest))
    (built / "q.jsonl").write_text('{"id": "q", "text": "kettle"}\n')
    for args in (["search", "ix", "--queries", "q.jsonl", "--out", "run.trec"],
                 ["index", "docs.jsonl", "--out", "ix", "--update"]):
        assert refused(ragkit(*args, cwd=built)) == f"ragkit: error: ix/index.json: {message}"


@pytest.mark.parametrize("value, message", [
    (-1.5, "BM25 k1 must be >= 0, got -1.5"),  # it named no file
    ("x", "field 'k1': expected a number, got 'x'"),  # "damaged BM25 index (TypeError…)"
    (10 ** 400, "field 'k1': expected a number, got " + "1" + "0" * 39)])  # OverflowError
def test_a_hand_edited_bm25_parameter_names_its_file(built, value, message):
    path = built / "ix" / "bm25" / "bm25.json"
    text = path.read_text()
    head, sep, tail = text.partition('"k1":')
    path.write_text(head + sep + json.dumps(value) + tail[tail.index(","):])
    (built / "q.jsonl").write_text('{"id": "q", "text": "kettle"}\n')
    line = refused(ragkit("search", "ix", "--queries", "q.jsonl", "--out", "run.trec",
                          cwd=built))
    assert line == f"ragkit: error: ix/bm25/bm25.json: {message}"


def test_out_given_as_a_link_to_an_index_is_refused_not_replaced_by_a_new_folder(tmp_path,
                                                                                  capsys):
    """`--out linkidx` (a link to an index) turned the link into a new folder and left the
    index it named as it was: the user searched the old one."""
    from ragkit.cli import main
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "Refunds within seven days."}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "real"), "--embedder", "none"]) == 0
    os.symlink("real", tmp_path / "link")
    capsys.readouterr()
    assert main(["index", str(docs), "--out", str(tmp_path / "link"), "--embedder", "none"]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {tmp_path / 'link'}: is a symbolic link (to real); writing a ragkit "
        f"index replaces the link, not the folder it names: give that folder itself\n")
    assert (tmp_path / "link").is_symlink()


def test_an_out_folder_that_is_a_mount_point_is_refused_before_any_work(tmp_path, monkeypatch,
                                                                       capsys):
    """A volume mounted as --out (Docker's `-v host:/idx`) passed the check, the whole build
    ran, and the swap failed at the end: "Device or resource busy"."""
    from ragkit import atomic
    from ragkit.cli import main
    out = tmp_path / "idx"
    out.mkdir()
    real = atomic.os.path.ismount
    monkeypatch.setattr(atomic.os.path, "ismount", lambda p: Path(p) == out or real(p))
    docs = tmp_path / "nothere.jsonl"  # never read: the refusal comes first
    assert main(["index", str(docs), "--out", str(out), "--embedder", "none"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ragkit: error: {out}: is a mount point, and a ragkit index is written beside its "
        f"folder and swapped in: give a folder inside it ({out}/index)")
