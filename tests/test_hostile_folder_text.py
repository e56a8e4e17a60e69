"""Text files as other editors and other machines save them: a byte order mark (Windows'
Notepad writes one before UTF-8, and saves "Unicode" as UTF-16), UTF-16 without one, Latin-1,
NUL bytes, a file ragkit may not open, and one too large to hold in memory. A readable one
reads as its text; an unreadable one is one line naming the file and what to do."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_errors import one_error_line
from ragkit.document_folder import load_folder
from ragkit.documents import RagkitError

MARKDOWN = "---\ntitle: Kettle care\n---\n# Descaling\n\nDescale the kettle monthly.\n"


def _load_one(tmp_path: Path, name: str, data: bytes):
    (tmp_path / name).write_bytes(data)
    (doc,) = load_folder(tmp_path, progress=False)
    return doc


def _refusal(tmp_path: Path, name: str, data: bytes) -> str:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path, progress=False)
    return str(caught.value)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be",
                                      "utf-32"])
def test_a_byte_order_mark_is_read_and_front_matter_still_found(tmp_path, encoding):
    data = MARKDOWN.replace("\n", "\r\n").encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no mark: add it
        data = "\ufeff".encode(encoding) + data
    doc = _load_one(tmp_path, "kettle.md", data)
    assert doc.title == "Kettle care"
    assert doc.text == "# Descaling\n\nDescale the kettle monthly.\n"


def test_utf16_without_a_byte_order_mark_is_named_as_such(tmp_path):
    message = _refusal(tmp_path, "notes.txt", "Kettles boil water.\n".encode("utf-16-le"))
    assert message == (f"{tmp_path / 'notes.txt'}: not UTF-8 text (UTF-16 without a byte "
                       f"order mark? save it as UTF-8)")


def test_latin1_names_the_line_and_byte(tmp_path):
    message = _refusal(tmp_path, "menu.txt", "Soup\nCaf\u00e9 cr\u00e8me\n".encode("latin-1"))
    assert message == f"{tmp_path / 'menu.txt'}: not UTF-8 text (line 2: byte 0xe9)"


def test_utf8_cut_inside_its_last_character_is_named_as_cut_off(tmp_path):
    """A Korean file copied short ended inside a three-byte syllable: "not UTF-8 text" sent
    its owner looking for an encoding problem in a file that is UTF-8. A Latin-1 file
    ending in "café" (a lone 0xe9 at the end, nothing else but ASCII) stays "not UTF-8"."""
    message = _refusal(tmp_path, "memo.txt", "회의 안건\n예산 배정".encode()[:-1])
    assert message == (f"{tmp_path / 'memo.txt'}: UTF-8 text cut off inside its last "
                       f"character (line 2; a copy or download that did not finish?)")
    (tmp_path / "memo.txt").unlink()
    message = _refusal(tmp_path, "menu.txt", "Soup\nCaf\u00e9".encode("latin-1"))
    assert message == f"{tmp_path / 'menu.txt'}: not UTF-8 text (line 2: byte 0xe9)"


def test_korean_in_cp949_is_refused_with_the_likely_encoding_named(tmp_path):
    """Korean Notepad saved CP949 (EUC-KR) for years; the line said only "byte 0xc0"."""
    message = _refusal(tmp_path, "memo.txt", "회의 안건\n예산은 똠얌꿍 세 그릇이다.\n".encode("cp949"))
    assert message == (f"{tmp_path / 'memo.txt'}: not UTF-8 text (line 1: byte 0xc0; Korean "
                       f"in CP949/EUC-KR? save it as UTF-8)")


def test_nul_bytes_are_binary_without_a_json_field_in_the_line(tmp_path):
    message = _refusal(tmp_path, "dump.txt", b"Some text\x00and a NUL byte about toasters.\n")
    assert message == f"{tmp_path / 'dump.txt'}: looks binary, not text"


def test_a_file_ragkit_may_not_open_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    locked = tmp_path / "locked.md"
    locked.write_text(MARKDOWN)
    # chmod 000 does not stop root (these tests may run as root): deny the open itself
    for module, name in ((io, "open"), (os, "open")):
        real = getattr(module, name)

        def denied(file, *args, _real=real, **kwargs):
            if str(file) == str(locked):
                raise PermissionError(13, "Permission denied", str(file))
            return _real(file, *args, **kwargs)
        monkeypatch.setattr(module, name, denied)
    with pytest.raises(RagkitError) as caught:
        load_folder(tmp_path, progress=False)
    assert str(caught.value) == f"{locked}: cannot read (Permission denied)"


def test_a_text_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import ragkit.loaders.text as text
    monkeypatch.setattr(text, "MAX_TEXT_BYTES", 1000)
    (tmp_path / "small.md").write_text(MARKDOWN)
    message = _refusal(tmp_path, "log.txt", b"line of a log\n" * 100)
    assert message == (f"{tmp_path / 'log.txt'}: 1,400 bytes, over the limit of 1,000 bytes "
                       f"for one text file (split it, or leave it out with --skip-bad)")


def test_windows_1252_quotes_before_letters_are_not_named_korean(tmp_path):
    """'It\x92s' reads in CP949 as a Hangul syllable only CP949 adds (뭩): an English file
    with curly apostrophes was refused as "Korean in CP949/EUC-KR?"."""
    raw = "It\u2019s the user\u2019s guide. Don\u2019t panic.\n".encode("cp1252")
    message = _refusal(tmp_path, "guide.txt", raw)
    assert message == f"{tmp_path / 'guide.txt'}: not UTF-8 text (line 1: byte 0x92)"


@pytest.mark.parametrize("data, kind", [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "a PDF (name it .pdf to have it read)"),
    (b"PK\x03\x04\x14\x00\x06\x00\x08\x00", "a ZIP archive (a Word file? name it .docx to "
                                           "have it read)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00", "a program (ELF)")])
def test_a_binary_file_named_as_text_is_named_for_what_it_is(tmp_path, data, kind):
    """A PDF, a Word file, an image or a program named `notes.md` was refused as "not UTF-8
    text (line 1: byte 0x89)", which sends a user looking for an encoding."""
    assert _refusal(tmp_path, "notes.md", data) == f"{tmp_path / 'notes.md'}: {kind}, not text"


def _sqlite(path: Path) -> None:
    import sqlite3
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('Descale the kettle monthly.')")
    db.close()


def _random(path: Path) -> None:
    import random
    path.write_bytes(random.Random(7).randbytes(6000))


def _records(path: Path) -> None:  # a line of text, then records: not UTF-8 on line 2
    path.write_bytes(b"MAGIC v2\n" + b"\xf8\x00\x13\x07\x00\x00\x91" * 50)


@pytest.mark.parametrize("make, why", [(_sqlite, "an SQLite database, not text"),
                                       (_random, "looks binary, not text"),
                                       (_records, "looks binary, not text")])
def test_a_database_or_binary_bytes_named_as_text_are_binary_not_an_encoding(tmp_path, make,
                                                                           why):
    """A NUL byte was looked for only once the file had decoded as UTF-8: an SQLite
    database or random bytes named .txt were "not UTF-8 text (line 2: byte 0xf8)"."""
    make(tmp_path / "notes.txt")
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index",
                           str(tmp_path / "notes.txt"), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert one_error_line(done) == f"ragkit: error: {tmp_path / 'notes.txt'}: {why}"
    assert not (tmp_path / "idx").exists()


def test_text_that_starts_like_a_binary_signature_is_text(tmp_path):
    (tmp_path / "gif.md").write_text("GIF89a is a format.\n")
    assert [d.text for d in load_folder(tmp_path, progress=False)] == ["GIF89a is a format.\n"]


def test_quoted_front_matter_values_are_read_as_yaml_reads_them(tmp_path):
    """Jekyll, Hugo, Obsidian and Quarto put a title holding ': ' in YAML quotes; the quotes
    were part of the title that labels every chunk (its context, `[Source | Section]` tag
    and citation): `Document: "Soil: a primer".`"""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "primer.md").write_text(
        '---\ntitle: "Soil: a primer \\"draft\\""\nauthor: \'Ana\'\'s lab\'\n'
        'date: "2024-05-01"\nproduct: plain value\n---\n# Intro\n\nSoil holds water.\n')
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index", str(folder),
                           "--out", str(tmp_path / "idx"), "--embedder", "none"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]
    assert row["metadata"]["title"] == 'Soil: a primer "draft"'
    assert row["context"] == ('Document: Soil: a primer "draft". Path: primer.md. '
                              'date: 2024-05-01; product: plain value.')
    (doc,) = load_folder(folder, progress=False)
    assert (doc.metadata["author"], doc.metadata["date"]) == ("Ana's lab", "2024-05-01")


def test_a_front_matter_escape_naming_no_character_is_kept_as_written(tmp_path):
    """`title: "Soil \\ud800 primer"` (half a surrogate pair: no character) was read into a
    title no UTF-8 file can hold, and `ragkit index` of the folder stopped at the save,
    naming a chunk's metadata rather than the file. The value keeps its text as written,
    its quotes off, as a value with an escape JSON lacks does."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "primer.md").write_text(
        '---\ntitle: "Soil \\ud800 primer"\n---\n# Intro\n\nSoil holds water.\n')
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "index", str(folder),
                           "--out", str(tmp_path / "idx"), "--embedder", "none"],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, f"indexed 1 document as 1 chunk into "
                                                 f"{tmp_path / 'idx'}\n")
    (row,) = [json.loads(line) for line in (tmp_path / "idx" / "chunks.jsonl").open()]
    assert row["metadata"]["title"] == "Soil \\ud800 primer"
