"""A folder as users keep one: empty files, a web page saved under a .pdf name, a Word file
that is really an old .doc, upper-case suffixes, and a symlink to a file beside it. Each bad
file is one line that says what is wrong with it; nothing is read twice."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from ragkit.document_folder import load_folder
from ragkit.documents import Document, RagkitError
from ragkit.folder_summary import file_format, file_summary

RAGKIT = str(Path(sys.executable).parent / "ragkit")


def _index(folder: Path, out: Path) -> subprocess.CompletedProcess:
    """`ragkit index FOLDER --out OUT --embedder none`, its home beside OUT."""
    return subprocess.run([RAGKIT, "index", str(folder), "--out", str(out), "--embedder",
                           "none"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RAGKIT_HOME": str(out.parent / "home")})
PAGE = "<html><body><h1>Returns</h1><p>Return unused items within 30 days.</p></body></html>"

BAD = {
    "zero.pdf": (b"", "empty file (0 bytes)"),
    "zero.docx": (b"", "empty file (0 bytes)"),
    "zero.html": (b"", "empty file (0 bytes)"),
    "zero.md": (b"", "empty file (0 bytes)"),
    "page.pdf": (b"<!DOCTYPE html>\n" + PAGE.encode(),
                 "not a PDF (it starts with '<!DOCTYPE html>': an HTML page named .pdf?)"),
    "old.docx": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600),
                 "not a valid Word file (an old binary .doc, or a .docx with a password: "
                 "save it as .docx without one)"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_file_that_is_not_what_its_name_says_is_one_line_saying_so(tmp_path, name):
    data, reason = BAD[name]
    (tmp_path / name).write_bytes(data)
    (tmp_path / "ok.md").write_text("# Fine\n\nA good file beside it.\n")
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path, progress=False)
    assert str(caught.value) == f"{tmp_path / name}: {reason}"


def test_upper_case_suffixes_are_read_and_a_symlink_to_a_file_in_the_folder_is_not_twice(
        tmp_path):
    (tmp_path / "RETURNS.HTML").write_text(PAGE)
    (tmp_path / "NOTES.TXT").write_text("Notes kept in capitals.\n")
    (tmp_path / "same-page.html").symlink_to("RETURNS.HTML")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("A file kept elsewhere, linked in.\n")
    (tmp_path / "linked.md").symlink_to(outside)  # out of the folder: refused, unread
    docs = load_folder(tmp_path, progress=False, skip_bad=True)
    assert [d.id for d in docs] == ["NOTES.TXT", "RETURNS.HTML"]
    assert [s.path for s in docs.skipped] == ["linked.md"]


def test_cli_names_an_empty_file_and_writes_nothing(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.md").write_text("# Fine\n\nA good file beside it.\n")
    (folder / "draft.docx").write_bytes(b"")
    done = _index(folder, tmp_path / "idx")
    assert one_error_line(done) == f"ragkit: error: {folder / 'draft.docx'}: empty file (0 bytes)"
    assert not (tmp_path / "idx").exists()


def _depot_folder(tmp_path: Path) -> tuple[Path, Path]:
    """(a folder of two notes and an empty PDF, a golden file with one question on it)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "depot.md").write_text("# Depot gate\n\nThe north gate opens at six in the "
                                     "morning.\n")
    (folder / "hours.md").write_text("# Office hours\n\nThe office closes at five.\n")
    (folder / "draft.pdf").write_bytes(b"")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "question": "When does the north gate open?", '
                      '"golden": [{"doc_id": "depot.md", "span": "The north gate opens at '
                      'six in the morning."}]}\n')
    return folder, golden


def test_cli_eval_skip_bad_scores_a_folder_that_index_skip_bad_reads(tmp_path):
    folder, golden = _depot_folder(tmp_path)
    done = subprocess.run([RAGKIT, "eval", str(folder), "--questions", str(golden),
                           "--embedder", "none", "--mode", "bm25", "--skip-bad"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RAGKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert f"skipped {folder / 'draft.pdf'}: empty file (0 bytes)" in done.stderr
    assert "Pass@5" in done.stdout and "bm25" in done.stdout


def test_cli_tune_takes_the_questions_and_skip_bad_that_eval_takes(tmp_path, capsys,
                                                                   monkeypatch):
    """The golden set `ragkit questions accept` writes, on a folder with a bad file, can be
    tuned as it can be scored (tune once had neither option)."""
    from ragkit import embed, models
    from ragkit.cli import main
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    folder, golden = _depot_folder(tmp_path)
    assert main(["tune", str(folder), "--questions", str(golden), "--skip-bad",
                 "--embedder", "minilm", "--alphas", "0:1:0.5", "--rrf-ks", "60"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "docs: 1 judged query of all splits, 2 chunks"
    assert out[-2].startswith("RRF k: best 60 (Pass@5 100.0)")
    # `--split all` as `ragkit eval` takes it (it was "no queries in split 'all'")
    assert main(["tune", str(folder), "--questions", str(golden), "--skip-bad", "--split",
                 "all", "--embedder", "minilm", "--alphas", "0:1:0.5", "--rrf-ks", "60"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "docs: 1 judged query of all splits, 2 chunks"
    assert main(["tune", str(folder), "--skip-bad", "--embedder", "minilm"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ragkit: error: {folder}: no query with golden items to tune on (give labelled "
        f"questions with --questions FILE, e.g. made by `ragkit questions generate`)")


def test_a_symlink_to_a_hidden_file_or_into_an_index_is_not_read(tmp_path):
    """`cfg.md -> .env` put the folder's secret into chunks.jsonl: hidden files are skipped
    when the folder is walked, and a link must not read one for it."""
    from ragkit.document_folder import folder_entries
    from ragkit.pipeline import IndexConfig, Pipeline
    (tmp_path / ".env").write_text("API_KEY=sk-supersecret\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "notes.md").write_text("# Notes\n\nA visible note.\n")
    (tmp_path / "cfg.md").symlink_to(".env")
    (tmp_path / "git.md").symlink_to(".git/config")
    Pipeline.build([Document("a", "alpha text")], IndexConfig(embedder=None),
                   progress=False).save(tmp_path / "idx")
    (tmp_path / "chunks.md").symlink_to("idx/chunks.jsonl")
    docs = load_folder(tmp_path, progress=False, skip_bad=True)
    assert [d.id for d in docs] == ["notes.md"]
    assert {s.path: s.reason.split(": ", 1)[1] for s in docs.skipped} == {
        "cfg.md": "a symbolic link to .env, a hidden file of the folder; ragkit does not read "
                  "hidden files",
        "chunks.md": "a symbolic link into a ragkit index folder, whose files are not read",
        "git.md": "a symbolic link to .git/config, a hidden file of the folder; ragkit does "
                  "not read hidden files"}
    assert [p.name for p, why in folder_entries(tmp_path) if why is None] == ["notes.md"]


def test_an_index_folder_given_as_the_documents_is_refused(tmp_path):
    """Its chunks.jsonl and index.json were indexed as documents."""
    from ragkit.pipeline import IndexConfig, Pipeline
    Pipeline.build([Document("a", "alpha text")], IndexConfig(embedder=None),
                   progress=False).save(tmp_path / "idx")
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path / "idx", progress=False)
    assert str(caught.value) == (f"{tmp_path / 'idx'}: a ragkit index folder, not documents; "
                                 f"give the folder (or file) of documents it was built from")


def test_eval_on_only_unanswerable_questions_says_so_in_one_line(tmp_path, capsys):
    """It printed pandas' "Empty DataFrame" and exited 0."""
    from ragkit.cli import main
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "depot.md").write_text("# Depot gate\n\nThe north gate opens at six.\n")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "question": "Who painted the gate?", "golden": []}\n'
                      '{"id": "q2", "question": "Where is the pier?", "golden": []}\n')
    assert main(["eval", str(folder), "--questions", str(golden), "--embedder", "none"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ragkit: error: {folder}: no question with golden items to score (all 2 are "
        f"unanswerable)")


def test_symbolic_links_to_folders_are_named_as_such_not_counted_as_files(tmp_path):
    """A folder of papers linked in (`papers -> /data/papers`) is not followed, as before, but
    was reported as "left out 1 file of a type ragkit does not read: (no suffix) 1" — and a
    folder holding only such a link said "no documents" in the same words."""
    shared = tmp_path / "shared" / "papers"
    shared.mkdir(parents=True)
    (shared / "drip.md").write_text("# Drip irrigation\n\nDrippers save water.\n")
    folder = tmp_path / "docs"
    (folder / "inner").mkdir(parents=True)
    (folder / "note.md").write_text("# Note\n\nA note kept here.\n")
    (folder / "inner" / "more.md").write_text("# More\n\nMore notes.\n")
    (folder / "README").write_text("no suffix\n")
    (folder / "papers").symlink_to(shared)
    (folder / "inner-link").symlink_to("inner")
    done = _index(folder, tmp_path / "idx")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"indexed 2 documents as 2 chunks into {tmp_path / 'idx'}\n"
    assert done.stderr.splitlines() == [
        "left out 1 file of a type ragkit does not read: (no suffix) 1 (README) (it reads .c "
        ".cpp "
        ".docm .docx .dotm .dotx .go .h .hpp .htm .html .java .js .json .markdown .md .pdf "
        ".py .rs .rst .sh .sql .text .toml .ts .txt .xhtml .yaml .yml)",
        "left out 1 symbolic link to a folder, which ragkit does not follow: papers (give "
        "the folder itself, or copy it in)"]  # inner-link: its folder is read as `inner`
    only = tmp_path / "only-links"
    only.mkdir()
    (only / "papers").symlink_to(shared)
    done = _index(only, tmp_path / "idx2")
    assert one_error_line(done) == (
        f"ragkit: error: {only}: no documents; left out 1 symbolic link to a folder, which "
        f"ragkit does not follow: papers (give the folder itself, or copy it in)")


def test_a_link_to_a_folder_the_index_reads_anyway_is_not_named(tmp_path):
    """A link to a folder inside the indexed one (`latest -> v2`, `here -> .`) was listed
    among the links not followed, with advice to copy the folder in, though its files were
    indexed under their own path. It is not named; a link to a hidden folder inside, or to
    one outside, still is (their files are not read)."""
    folder = tmp_path / "docs"
    (folder / "v2").mkdir(parents=True)
    (folder / ".drafts").mkdir()
    (folder / "note.md").write_text("# Note\n\nA note kept here.\n")
    (folder / "v2" / "guide.md").write_text("# Guide\n\nThe second guide.\n")
    (folder / ".drafts" / "draft.md").write_text("# Draft\n\nNot yet.\n")
    for name, target in (("latest", "v2"), ("here", "."), ("again", "v2/../v2"),
                         ("drafts", ".drafts"), ("up", "..")):
        (folder / name).symlink_to(target)
    done = _index(folder, tmp_path / "idx")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"indexed 2 documents as 2 chunks into {tmp_path / 'idx'}\n",
        "left out 2 symbolic links to folders, which ragkit does not follow: drafts, up (give "
        "the folder itself, or copy it in)\n")
    ids = sorted(json.loads(line)["doc_id"]
                 for line in (tmp_path / "idx" / "chunks.jsonl").read_text().splitlines())
    assert ids == ["note.md", "v2/guide.md"]


def test_links_to_nothing_or_in_a_loop_are_named_as_broken_links(tmp_path):
    """A link to nothing or in a loop of a name ragkit does not read was counted among the
    files of types it does not read ("(no suffix) 2, .csv 2"); it is named as a broken link,
    after the summary line, in the "no documents" line and in the file table."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\nA note kept here.\n")
    (folder / "data.csv").write_text("a,b\n")
    (folder / "old-notes").symlink_to("gone")
    (folder / "loop").symlink_to("loop")
    (folder / "table.csv").symlink_to("nothing.csv")
    done = _index(folder, tmp_path / "idx")
    assert (done.returncode, done.stdout) == (
        0, f"indexed 1 document as 1 chunk into {tmp_path / 'idx'}\n"), done.stderr
    assert done.stderr.splitlines() == [
        "left out 1 file of a type ragkit does not read: .csv 1 (it reads .c .cpp .docm .docx "
        ".dotm .dotx .go .h .hpp .htm .html .java .js .json .markdown .md .pdf .py .rs .rst .sh "
        ".sql .text .toml .ts .txt .xhtml .yaml .yml)",
        "left out 3 broken symbolic links (to nothing, or in a loop): loop, old-notes, "
        "table.csv"]
    rows = file_summary(load_folder(folder, progress=False))
    assert [(row["file"], row["skipped"]) for row in rows] == [
        ("data.csv", "not a type of file ragkit reads"),
        ("loop", "a broken symbolic link (to nothing, or in a loop)"),
        ("note.md", ""),
        ("old-notes", "a broken symbolic link (to nothing, or in a loop)"),
        ("table.csv", "a broken symbolic link (to nothing, or in a loop)")]
    (folder / "note.md").unlink()
    (folder / "data.csv").unlink()
    done = _index(folder, tmp_path / "idx2")
    assert one_error_line(done) == (
        f"ragkit: error: {folder}: no documents; left out 3 broken symbolic links (to nothing, "
        f"or in a loop): loop, old-notes, table.csv")


def test_a_link_to_a_folder_named_like_a_document_is_named_as_a_link(tmp_path):
    """A link to a folder whose name has a suffix ragkit reads (`papers.md -> shared/papers`)
    was taken for a file and refused, stopping the index: "a symbolic link to …, outside the
    folder; … (copy the file in to index it)". It is left out and named as the other links to
    folders are."""
    shared = tmp_path / "shared" / "papers"
    shared.mkdir(parents=True)
    (shared / "drip.md").write_text("# Drip irrigation\n\nDrippers save water.\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\nA note kept here.\n")
    (folder / "papers.md").symlink_to(shared)
    done = _index(folder, tmp_path / "idx")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"indexed 1 document as 1 chunk into {tmp_path / 'idx'}\n",
        "left out 1 symbolic link to a folder, which ragkit does not follow: papers.md (give "
        "the folder itself, or copy it in)\n")


def _indexed_files(tmp_path: Path, files: dict[str, str]
                   ) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """`ragkit index` of a folder holding `files` (name: text) into `tmp_path/idx`: the
    finished command and its chunk rows."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    done = _index(folder, tmp_path / "idx")
    assert done.returncode == 0, done.stderr
    return done, [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").read_text(
        ).splitlines()]


def test_a_dockerfile_and_a_makefile_are_read_as_code_and_unread_files_without_suffix_named(
        tmp_path):
    """A Dockerfile and a Makefile were left out as "(no suffix) 2", unnamed, and a question
    about the port the image exposes was declined. They are read as source files (each line
    a unit, a "#" line a comment, never a heading); a file without a suffix ragkit does not
    read is named."""
    done, rows = _indexed_files(tmp_path, {
        "Dockerfile": "# Build stage\nFROM python:3.12-slim\nEXPOSE 8080\n",
        "Makefile": "# Targets\ntest:\n\tpytest -q\n", "LICENSE": "Permission is granted.\n"})
    assert done.stdout == f"indexed 2 documents as 2 chunks into {tmp_path / 'idx'}\n"
    assert done.stderr.startswith(
        "left out 1 file of a type ragkit does not read: (no suffix) 1 (LICENSE) (it reads ")
    assert sorted((r["doc_id"], r["metadata"]["chunker"], r["metadata"]["section"])
                  for r in rows) == [("Dockerfile", "code", []), ("Makefile", "code", [])]
    assert file_format("build/Dockerfile") == "dockerfile"
    assert file_format("LICENSE") == file_format("docs/gzip-news") == "(no suffix)"  # its name


def test_a_recipes_variant_is_read_as_the_recipe_and_notes_about_one_as_prose(tmp_path):
    """`Dockerfile.dev` and `Makefile.linux` were left out as files of the types ".dev" and
    ".linux"; `Dockerfile.md` (notes about the image) stays a Markdown file."""
    done, rows = _indexed_files(tmp_path, {
        "Dockerfile.dev": "# Dev image\nFROM python:3.12\nEXPOSE 5678\n",
        "Makefile.linux": "# Linux targets\nbuild:\n\tcc -O2 main.c\n",
        "Dockerfile.md": "# Images\n\nThe dev image exposes the debugger.\n"})
    assert done.stdout == f"indexed 3 documents as 3 chunks into {tmp_path / 'idx'}\n"
    assert "left out" not in done.stderr
    assert sorted((r["doc_id"], r["metadata"]["chunker"]) for r in rows) == [
        ("Dockerfile.dev", "code"), ("Dockerfile.md", "prose"), ("Makefile.linux", "code")]
    assert [file_format(name) for name in ("Dockerfile.dev", "x/Makefile.linux",
                                           "Dockerfile.md", "Makefile.py")] == [
        "dockerfile", "makefile", "md", "py"]
