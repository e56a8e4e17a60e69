"""A stranger's folder, through the installed CLI: symbolic links leaving the folder (or
leading nowhere), FIFOs and sockets, names a terminal would obey (escape sequences, newlines)
or that are not UTF-8, and an index written inside the folder it indexes. Each is one line
naming the file (exit 2), or, with --skip-bad, listed and left out; nothing outside the
folder is ever read and no FIFO is ever opened."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from ragkit.documents import RagkitWarning

RAGKIT = str(Path(sys.executable).parent / "ragkit")
OK = "# Depot gate\n\nThe north gate of the depot opens at six in the morning.\n"


def _index(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    home = folder.parent / "home"  # beside the folder, never inside it
    return subprocess.run([RAGKIT, "index", str(folder), "--out", str(out), "--embedder", "none",
                           *extra], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "RAGKIT_HOME": str(home)})


def _doc_ids(index: Path) -> list[str]:
    rows = (json.loads(line) for line in (index / "chunks.jsonl").read_text().splitlines())
    return sorted({row["doc_id"] for row in rows})


def _skipped(done: subprocess.CompletedProcess) -> list[str]:
    """The lines `--skip-bad` lists after the summary, each `  path: reason`."""
    lines = done.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("skipped "))
    return [line.strip() for line in lines[start + 1:]]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "depot.md").write_text(OK)
    return docs


def test_a_symlink_to_a_file_outside_the_folder_is_refused_unread(tmp_path, folder):
    secret = tmp_path / "credentials.txt"
    secret.write_text("aws_secret_access_key = hunter2hunter2\n")
    os.symlink(secret, folder / "notes.txt")
    done = _index(folder, tmp_path / "idx")
    assert one_error_line(done) == (
        f"ragkit: error: {folder / 'notes.txt'}: a symbolic link to {secret}, outside the "
        f"folder; ragkit reads only the folder's own files (copy the file in to index it)")
    assert not (tmp_path / "idx").exists()

    done = _index(folder, tmp_path / "idx", "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert _doc_ids(tmp_path / "idx") == ["depot.md"]
    assert "hunter2" not in (tmp_path / "idx" / "chunks.jsonl").read_text()
    assert _skipped(done) == [f"{folder / 'notes.txt'}: a symbolic link to {secret}, outside "
                              f"the folder; ragkit reads only the folder's own files (copy "
                              f"the file in to index it)"]


def test_a_symlink_reaching_out_through_a_linked_parent_is_refused_too(tmp_path, folder):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "diary.md").write_text("# Diary\n\nPrivate words.\n")
    os.symlink(tmp_path / "elsewhere", folder / "shortcut")  # a linked folder is not walked
    os.symlink("shortcut/diary.md", folder / "diary.md")  # but a link through it is a file
    done = _index(folder, tmp_path / "idx", "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert _doc_ids(tmp_path / "idx") == ["depot.md"]
    assert _skipped(done) == [f"{folder / 'diary.md'}: a symbolic link to "
                              f"{tmp_path / 'elsewhere' / 'diary.md'}, outside the folder; "
                              f"ragkit reads only the folder's own files (copy the file in to "
                              f"index it)"]


def test_links_to_nothing_fifos_and_sockets_are_listed_and_nothing_blocks(tmp_path, folder):
    os.symlink("missing.md", folder / "dangling.md")
    os.symlink("loop-b.md", folder / "loop-a.md")
    os.symlink("loop-a.md", folder / "loop-b.md")
    os.mkfifo(folder / "pipe.txt")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock.md"))
        done = _index(folder, tmp_path / "idx", "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert _doc_ids(tmp_path / "idx") == ["depot.md"]
    assert _skipped(done) == [
        f"{folder / 'dangling.md'}: a symbolic link to nothing (missing.md does not exist)",
        f"{folder / 'loop-a.md'}: a symbolic link that loops back on itself",
        f"{folder / 'loop-b.md'}: a symbolic link that loops back on itself",
        f"{folder / 'pipe.txt'}: not a regular file (a FIFO); ragkit reads only regular files",
        f"{folder / 'sock.md'}: not a regular file (a socket); ragkit reads only regular files"]


def test_a_fifo_without_skip_bad_is_one_line_not_a_hang(tmp_path, folder):
    os.mkfifo(folder / "pipe.md")
    done = _index(folder, tmp_path / "idx")
    assert one_error_line(done) == (f"ragkit: error: {folder / 'pipe.md'}: not a regular file "
                                    f"(a FIFO); ragkit reads only regular files")
    assert not (tmp_path / "idx").exists()


def test_names_a_terminal_would_obey_or_that_are_not_utf8_are_listed_escaped(tmp_path, folder):
    raw = os.fsencode(folder)
    for name in (b"red\x1b[31m.md", b"two\nlines.md", b"caf\xe9.md",
                 "invoice\u202efdp.md".encode(), "\u0645\u0644\u0641\u200c\u0645.md".encode()):
        (Path(os.fsdecode(raw + b"/" + name))).write_text("# Named\n\nA file with an odd "
                                                          "name about kettles.\n")
    done = _index(folder, tmp_path / "idx", "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\x1b" not in done.stdout
    # a right-to-left name with its zero-width non-joiner is a name like any other
    assert _doc_ids(tmp_path / "idx") == ["depot.md", "\u0645\u0644\u0641\u200c\u0645.md"]
    assert _skipped(done) == [
        f"{folder}/caf\\xe9.md: its name is not UTF-8 (byte \\xe9); rename the file",
        f"{folder}/invoice\\u202efdp.md: its name holds a bidirectional override (U+202E), "
        f"which shows it as another name; rename the file",
        f"{folder}/red\\x1b[31m.md: its name holds a control character (\\x1b); rename the file",
        f"{folder}/two\\nlines.md: its name holds a control character (\\n); rename the file"]


def test_an_index_written_inside_the_folder_is_not_read_back_as_documents(tmp_path, folder):
    for _ in range(2):  # the second run finds the first run's index inside the folder
        done = _index(folder, folder / "idx")
        assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"indexed 1 document as 1 chunk into {folder / 'idx'}"
    assert _doc_ids(folder / "idx") == ["depot.md"]


def test_escape_sequences_inside_a_file_never_reach_the_terminal_through_ask(tmp_path, folder):
    (folder / "kettle.md").write_text("# Kettle \x1b[2J\x1b]0;owned\x07guide\n\nThe kettle "
                                      "descales monthly with vinegar.\x1b[8m hidden\x1b[0m\n")
    assert _index(folder, tmp_path / "idx").returncode == 0
    rows = (tmp_path / "idx" / "chunks.jsonl").read_text().splitlines()
    assert not any("\x1b" in json.dumps(json.loads(row), ensure_ascii=False) for row in rows)
    done = subprocess.run([RAGKIT, "ask", "--index", str(tmp_path / "idx"),
                           "kettle descales monthly with vinegar"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "ANTHROPIC_API_KEY": "",
                                                      "RAGKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert not set("\x1b\x07") & set(done.stdout + done.stderr)
    assert done.stdout.splitlines()[-1] == "[1] kettle.md#0 — Kettle  [2J ]0;owned guide"


def test_a_folder_nested_past_pythons_recursion_limit_is_walked(tmp_path, folder):
    deep = folder
    for _ in range(1100):  # over sys.getrecursionlimit() levels, under PATH_MAX
        deep = deep / "d"
        deep.mkdir()
    (deep / "bottom.md").write_text("# Bottom\n\nThe bottom note is about spoons.\n")
    try:
        done = _index(folder, tmp_path / "idx")
        assert done.returncode == 0, done.stderr[-500:]
        assert _doc_ids(tmp_path / "idx") == ["d/" * 1100 + "bottom.md", "depot.md"]
    finally:  # bottom up: shutil.rmtree (pytest's clean-up) recurses, and would fail here
        (deep / "bottom.md").unlink()
        while deep != folder:
            deep.rmdir()
            deep = deep.parent


def test_control_characters_from_a_documents_jsonl_are_shown_escaped_by_ask(tmp_path):
    # a documents JSONL file is not cleaned like a folder's files: the id, title and text
    # reach `ask` as written, so its output escapes them (the terminal would obey \x1b)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "gate\x1b]0;owned\x07", "title": "Gate\x1b[2J",
                                "text": OK.replace("six", "six\x1b[8m")}) + "\n")
    home = {**os.environ, "ANTHROPIC_API_KEY": "", "RAGKIT_HOME": str(tmp_path / "home")}
    built = subprocess.run([RAGKIT, "index", str(docs), "--out", str(tmp_path / "idx"),
                            "--embedder", "none"], capture_output=True, text=True, timeout=60,
                           env=home)
    assert built.returncode == 0, built.stderr
    for extra in ([], ["--stream"]):
        done = subprocess.run([RAGKIT, "ask", "--index", str(tmp_path / "idx"), *extra,
                               "When does the north gate of the depot open in the morning?"],
                              capture_output=True, text=True, timeout=60, env=home)
        assert done.returncode == 0, done.stderr
        assert not set("\x1b\x07") & set(done.stdout + done.stderr)
        assert "six\\x1b[8m in the morning" in done.stdout
        assert done.stdout.splitlines()[-1] == "[1] gate\\x1b]0;owned\\x07#0 — Gate\\x1b[2J / Depot gate"


def test_a_macos_file_name_matches_the_label_typed_for_it_and_twins_are_refused(tmp_path):
    """A folder copied from macOS names `환불정책.md` in NFD (decomposed Hangul); the golden
    set a user types names it in NFC. `ragkit eval` said "no document '환불정책.md'" beside
    that very file; the label now names the document whatever the Unicode form. Two files
    whose names differ only in that form would print as one id: the second is refused."""
    import unicodedata
    nfd, nfc = (unicodedata.normalize(form, "환불정책.md") for form in ("NFD", "NFC"))
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / nfd).write_text("# 환불 정책\n\n환불은 30일 이내에 처리됩니다.\n")
    (tmp_path / "corpus" / "ship.md").write_text("# Shipping\n\nWe ship in two days.\n")
    (tmp_path / "golden").mkdir()
    (tmp_path / "golden" / "q.jsonl").write_text(json.dumps(
        {"id": "q1", "question": "환불은 며칠 이내에 처리되나요?", "split": "dev",
         "golden": [{"doc_id": nfc, "span": "환불은 30일 이내에 처리됩니다."}]}) + "\n")
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    done = subprocess.run([RAGKIT, "eval", str(tmp_path), "--split", "dev", "--mode", "bm25",
                           "--embedder", "none", "--rerank", "none"], capture_output=True,
                          text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert "1 judged query of split dev" in done.stdout
    assert done.stdout.splitlines()[-1].split()[:2] == ["bm25", "100.0"]
    (tmp_path / "corpus" / nfc).write_text("# Twin\n\nAnother file.\n")
    done = subprocess.run([RAGKIT, "eval", str(tmp_path), "--split", "dev", "--mode", "bm25",
                           "--embedder", "none"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert one_error_line(done) == (f"ragkit: error: {tmp_path / 'corpus' / nfc}: the same "
                                    f"name as {nfd} in another Unicode form (NFC/NFD); rename "
                                    f"one")


def test_a_run_of_macos_file_names_scores_against_qrels_typed_in_nfc(tmp_path):
    """`ragkit search --level doc` writes the file's NFD id; qrels typed by hand hold the NFC
    one. `ragkit eval --run --qrels` said the run "retrieves none of the ids judged"."""
    import unicodedata
    nfd, nfc = (unicodedata.normalize(form, "환불정책.md") for form in ("NFD", "NFC"))
    (tmp_path / "run.txt").write_text(f"q1 Q0 {nfd} 1 2.0 bm25\nq1 Q0 ship.md 2 1.0 bm25\n")
    (tmp_path / "qrels.txt").write_text(f"q1 0 {nfc} 1\n")
    done = subprocess.run([RAGKIT, "eval", "--run", str(tmp_path / "run.txt"), "--qrels",
                           str(tmp_path / "qrels.txt"), "--k", "5"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].split()[:2] == ["run", "100.0"]


@pytest.mark.parametrize("jobs, name", [(1, "z.txt"), (2, "z.html"), (1, "sub")])
@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_file_swapped_for_a_link_after_the_listing_is_not_read(tmp_path, monkeypatch, jobs,
                                                                 name, skip_bad):
    """The listing refused links out of the folder, but the read followed them: a file swapped
    for a link to a secret while a slow PDF was read went into the index (so did a folder
    above it swapped for a link). Each file is checked again just before it is opened."""
    import ragkit.document_folder as folder_module
    from ragkit.documents import RagkitError
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "z.html").write_text("<p>root:x:0:0:root</p>")
    (secret / "z.txt").write_text("root:x:0:0:root")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text(OK)
    target = docs / "sub" / "z.txt" if name == "sub" else docs / name
    target.write_text(OK if name != "z.html" else "<p>The gate opens at six.</p>")
    listed = folder_module.folder_entries

    def swapped(*args, **kwargs):
        entries = listed(*args, **kwargs)
        if name == "sub":  # the folder above the file becomes a link out
            os.rename(docs / "sub", tmp_path / "old-sub")
            os.symlink(secret, docs / "sub")
        else:
            target.unlink()
            os.symlink(secret / name, target)
        return entries

    monkeypatch.setattr(folder_module, "folder_entries", swapped)
    refused = r"z\.(txt|html): a symbolic link to .*secret/z\.(txt|html), outside the folder"
    if not skip_bad:
        with pytest.raises(RagkitError, match=refused):
            folder_module.load_folder(docs, progress=False, jobs=jobs)
        return
    with pytest.warns(RagkitWarning, match=refused):
        loaded = folder_module.load_folder(docs, skip_bad=True, progress=False, jobs=jobs)
    assert [d.id for d in loaded] == ["a.md"]


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_swap_between_the_recheck_and_the_open_is_caught_too(tmp_path, monkeypatch, swap):
    """A recheck by name only narrowed the window: swapping in a link just after it still
    read /etc/passwd into the index (12 of 400 tries). The file is opened once, without
    following a link at its end, and the opened file is what is checked and read."""
    import ragkit.document_folder as folder_module
    from ragkit.documents import RagkitError
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "z.txt").write_text("root:x:0:0:root")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "z.txt").write_text(OK)
    checked = folder_module.recheck

    def then_swapped(path, real_root):
        why = checked(path, real_root)
        if swap == "file":
            os.unlink(path)
            os.symlink(secret / "z.txt", path)
        else:
            os.rename(docs / "sub", tmp_path / "old-sub")
            os.symlink(secret, docs / "sub")
        return why

    monkeypatch.setattr(folder_module, "recheck", then_swapped)
    with pytest.raises(RagkitError) as caught:
        folder_module.load_folder(docs, progress=False, jobs=1)
    assert str(caught.value).startswith(f"{docs / 'sub' / 'z.txt'}: ")
    assert str(caught.value).endswith(f": changed while the folder was read (it now opens "
                                      f"{secret / 'z.txt'}); run again")
