"""A manual page saved as text (`man ln > ln.txt`) reads with its title and sections."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from ragkit.document_folder import load_folder
from ragkit.loaders.man_pages import man_headings

# `man -P cat ln` as man-db writes it (header, justified body, a word hyphenated by groff
# with U+2010, a `.SS` subsection, the footer), one option shortened
LN = """\
LN(1)                            User Commands                           LN(1)

NAME
       ln - make links between files

SYNOPSIS
       ln [OPTION]... [-T] TARGET LINK_NAME

DESCRIPTION
       In  the  1st form, create a link to TARGET with the name LINK_NAME.  In
       the 2nd form, create a link to TARGET in the current directory.

       -d, -F, --directory
              allow the superuser to attempt to hard link directories (note:
              will probably fail due to system restrictions, even for the su\u2010
              peruser; see INVOCA\u2010
              TION and Non\u2010
              Unix)

   Special Parameters
       #      Expands to the number of positional parameters.

GNU coreutils 9.1               September 2022                           LN(1)
"""


def test_a_man_page_gets_its_name_as_title_and_its_sections_as_headings():
    assert man_headings(LN) == """\
# ln - make links between files

## NAME

ln - make links between files

## SYNOPSIS

ln [OPTION]... [-T] TARGET LINK_NAME

## DESCRIPTION

In the 1st form, create a link to TARGET with the name LINK_NAME. In
the 2nd form, create a link to TARGET in the current directory.

-d, -F, --directory
allow the superuser to attempt to hard link directories (note:
will probably fail due to system restrictions, even for the superuser; see INVOCATION and Non\u2010Unix)

### Special Parameters

\\# Expands to the number of positional parameters.
"""


def test_overstruck_bold_is_read_as_its_letters():
    bold = "".join(f"{c}\b{c}" for c in "NAME")
    assert man_headings(LN.replace("NAME\n", bold + "\n", 1)) == man_headings(LN)


@pytest.mark.parametrize("text", [
    "LN(1) is the page to read.\n\nNAME\n       ln\n",  # the name at one end only
    "Release notes\n=============\n\nLN(1)    User Commands    LN(1)\n",  # not the first line
    "",
])
def test_other_text_is_no_man_page(text):
    assert man_headings(text) is None


def test_a_folder_reads_a_saved_man_page_as_a_titled_document(tmp_path):
    (tmp_path / "ln.txt").write_text(LN)
    (tmp_path / "notes.txt").write_text("LN(1) is the page to read.\n")
    ln, notes = load_folder(tmp_path)
    assert (ln.id, ln.title) == ("ln.txt", "ln - make links between files")
    assert "superuser" in ln.text and "su\u2010" not in ln.text and "LN(1)" not in ln.text
    assert (notes.title, notes.text) == ("notes.txt", "LN(1) is the page to read.\n")


@pytest.mark.skipif(shutil.which("man") is None, reason="no man on this machine")
def test_a_page_man_renders_here_has_no_hyphen_left_at_a_line_end(tmp_path):
    page = subprocess.run(["man", "-P", "cat", "man"], capture_output=True, text=True,
                          env={"MANWIDTH": "60", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    if page.returncode != 0 or not page.stdout.strip():
        pytest.skip("man has no page for man here")
    assert "\u2010\n" in page.stdout  # groff hyphenates lines 60 wide
    (tmp_path / "man.txt").write_text(page.stdout)
    (doc,) = load_folder(tmp_path)
    assert doc.title.startswith("man - ")
    assert "## DESCRIPTION" in doc.text and "\u2010\n" not in doc.text


@pytest.mark.parametrize("text", [
    "f(x) grows no faster than g(x), and g(x) no faster than f(x)\nSo both bounds are tight.\n",
    "f(x)  bounds  f(x)\nSo both bounds are tight.\n",  # no section name under it
])
def test_text_that_only_opens_like_a_header_is_no_man_page(text):
    """A first line with the same `name(x)` at both ends was taken for man's header: the
    line was dropped and the text titled "f(x)"."""
    assert man_headings(text) is None


def test_a_bsd_footer_and_a_name_with_spaces_are_read():
    page = ("REASSIGN OWNED(7)      PostgreSQL 16.4 Documentation     REASSIGN OWNED(7)\n\n"
            "NAME\n       REASSIGN OWNED - change the ownership of database objects\n\n"
            "BSD                          November 28, 2022                          BSD\n")
    assert man_headings(page) == (
        "# REASSIGN OWNED - change the ownership of database objects\n\n## NAME\n\n"
        "REASSIGN OWNED - change the ownership of database objects\n")


def test_a_subsection_right_under_its_section_name_is_a_heading():
    """grep(1) opens OPTIONS with "   Generic Program Information" on the next line, no blank
    between: it was read as a body line, so `--help` and `--version` were cited under
    OPTIONS alone while every later subsection had its heading."""
    page = ("GREP(1)                   User Commands                   GREP(1)\n\nNAME\n"
            "       grep - print lines that match patterns\n\nOPTIONS\n"
            "   Generic Program Information\n       --help Output a usage message and exit.\n"
            "\n   Pattern Syntax\n       -E, --extended-regexp\n"
            "   not a subsection: no blank line or section name before it\n")
    assert man_headings(page) == (
        "# grep - print lines that match patterns\n\n## NAME\n\n"
        "grep - print lines that match patterns\n\n## OPTIONS\n\n"
        "### Generic Program Information\n\n--help Output a usage message and exit.\n\n"
        "### Pattern Syntax\n\n-E, --extended-regexp\n"
        "not a subsection: no blank line or section name before it\n")


# `zcat /usr/share/man/ko/man8/mandb.8.gz | groff -man -Tutf8`, shortened: the section names
# have no case, and the first is not "NAME"
MANDB_KO = """\
MANDB(8)                    설명서 페이저 유틸리티                    MANDB(8)

이름
       mandb - 설명서 페이지 색인 캐시를 만들거나 업데이트합니다

개요
       mandb [-dqsucpt?V] [-C 파일]

설명
       mandb는  설명서  페이지  색인 캐시를 초기화하거나 직접 업데이트할 때
       활용합니다.

2.11.2                            2023-01-08                          MANDB(8)
"""


def test_a_page_in_a_script_without_capitals_is_a_man_page_titled_by_its_first_section():
    """A Korean page was read as plain text: titled by its path, its header and footer
    kept, man's padding quoted ("다시  만드는"). A German one's BEZEICHNUNG gave no title."""
    text = man_headings(MANDB_KO)
    assert text == ("# mandb - 설명서 페이지 색인 캐시를 만들거나 업데이트합니다\n\n## 이름\n\n"
                    "mandb - 설명서 페이지 색인 캐시를 만들거나 업데이트합니다\n\n## 개요\n\n"
                    "mandb [-dqsucpt?V] [-C 파일]\n\n## 설명\n\n"
                    "mandb는 설명서 페이지 색인 캐시를 초기화하거나 직접 업데이트할 때\n"
                    "활용합니다.\n")
    german = LN.replace("NAME\n", "BEZEICHNUNG\n").replace("ln - make links", "ln - Links")
    assert man_headings(german).startswith("# ln - Links between files\n")
    # a caseless line after an X(n) header that reads as a sentence is no section name, nor
    # a short one over prose at the margin (man indents its body)
    assert man_headings("F(X)  bounds  F(X)\n" + "설명 " * 30 + "\n") is None
    assert man_headings("定价(2024)   说明   定价(2024)\n本文说明价格的计算方法\n"
                        "价格由基础价和附加费组成，附加费按月计算。\n") is None
    # a page without NAME is titled by its first section; one with NAME by NAME
    assert man_headings(LN.replace("SYNOPSIS\n", "ÜBERSICHT\n")).startswith(
        "# ln - make links between files\n")
