"""A file whose name says one format and whose bytes another — a PDF saved as .docx, a Word
file renamed .pdf — and Word XML that declares entities (a billion-laughs file): each is one
line that says what the file really is or what is wrong, not a parser's internals."""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from loader_files import docx, pdf
from ragkit.document_folder import load_folder
from ragkit.documents import RagkitError


def _refusal(folder: Path) -> str:
    with pytest.raises(RagkitError) as caught:
        load_folder(folder, progress=False)
    return str(caught.value)


def test_a_pdf_named_docx_says_it_is_a_pdf(tmp_path):
    pdf(tmp_path / "made.pdf", [["Spoons go in the left drawer."]])
    shutil.move(tmp_path / "made.pdf", tmp_path / "report.docx")
    assert _refusal(tmp_path) == (f"{tmp_path / 'report.docx'}: not a Word file (it is a PDF: "
                                  f"rename it .pdf)")


def test_a_word_file_named_pdf_says_it_is_a_zip_archive(tmp_path):
    docx(tmp_path / "made.docx", [("", "Forks go in the right drawer.")])
    shutil.move(tmp_path / "made.docx", tmp_path / "report.pdf")
    assert _refusal(tmp_path) == (f"{tmp_path / 'report.pdf'}: not a PDF (it is a zip archive: "
                                  f"a Word file named .pdf?)")


@pytest.mark.parametrize("hide", ["", "comment", "utf-16", "utf-32"])
def test_word_xml_declaring_entities_is_refused_in_one_plain_line(tmp_path, hide):
    """Also behind a 100 KB comment or in a UTF-16 part, which once got past a check that read
    64 KB of UTF-8 (the text around the entities then vanished without a word)."""
    source = docx(tmp_path / "source.docx", [("", "PLACEHOLDER")])
    declared = f' encoding="{hide.upper()}"' if hide.startswith("utf") else ""
    laughs = (f'<?xml version="1.0"{declared}?>\n'
              + ("<!--" + "x" * 100_000 + "-->" if hide == "comment" else "")
              + '<!DOCTYPE lolz [<!ENTITY lol "lol">'
              + "".join(f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">'
                        for i in range(1, 10)).replace("&lol0;", "&lol;") + "]>\n")
    with zipfile.ZipFile(source) as original, \
            zipfile.ZipFile(tmp_path / "laughs.docx", "w", zipfile.ZIP_DEFLATED) as out:
        for name in original.namelist():
            data = original.read(name)
            if name == "word/document.xml":
                body = data.decode().split("?>", 1)[1].replace("PLACEHOLDER", "&lol9;")
                data = (laughs + body).encode(hide if hide.startswith("utf") else "utf-8")
            out.writestr(name, data)
    source.unlink()
    assert _refusal(tmp_path) == (f"{tmp_path / 'laughs.docx'}: not a valid Word file (its XML "
                                  f"declares entities, which Word never writes: a "
                                  f"billion-laughs file?)")
