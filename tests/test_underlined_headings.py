"""Headings written by underlining — Markdown's setext headings, reStructuredText's section
titles — title the document and head its sections, as `#` headings do: through `ragkit index`
of a folder (each chunk's title and section) and `load_folder` (the text they are read as)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ragkit import load_folder

RAGKIT = str(Path(sys.executable).parent / "ragkit")


def _sections(folder: Path, out: Path) -> list[tuple[str, str, list[str]]]:
    """(chunk id, title, section) of each chunk of `ragkit index folder`, in small chunks."""
    done = subprocess.run([RAGKIT, "index", str(folder), "--out", str(out), "--embedder",
                           "none", "--chunk-size", "16", "--overlap", "0"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "chunks.jsonl").open(encoding="utf-8")]
    return [(r["id"], r["metadata"]["title"], r["metadata"]["section"]) for r in rows]


MARKDOWN = """---
product: Kestrel EG-400
---
Kestrel EG-400
guide
==============

The gateway links sensors to the cloud.

Pairing the gateway
-------------------

Hold the button for five seconds.

---

- Reset the unit first
- Then pair it again
---

| Port | Use |
|------|-----|
| 1    | LAN |

```
Not a heading
=============
```
"""


def test_markdown_setext_headings_title_and_section_the_chunks(tmp_path):
    """`Title` over `=====` and `Section` over `-----` were text: the document was titled by
    its file name and no chunk had a section. A `---` after a blank line (a thematic break)
    or after a list item, a table's separator row and a fenced block stay as written."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    (folder / "notes.txt").write_text("Plain notes\n===========\n\nText.\n", encoding="utf-8")
    title, pairing = ["Kestrel EG-400 guide"], ["Kestrel EG-400 guide", "Pairing the gateway"]
    assert _sections(folder, tmp_path / "idx") == [
        ("guide.md#0", "Kestrel EG-400 guide", title),
        *[(f"guide.md#{n}", "Kestrel EG-400 guide", pairing) for n in range(1, 7)],
        ("notes.txt#0", "Plain notes", ["Plain notes"])]
    guide, notes = load_folder(folder, progress=False)
    assert guide.text == MARKDOWN.split("---\n", 2)[2].replace(
        "Kestrel EG-400\nguide\n==============", "# Kestrel EG-400 guide").replace(
        "Pairing the gateway\n-------------------", "## Pairing the gateway")
    assert notes.text == "# Plain notes\n\nText.\n"


def test_a_plain_text_title_underlined_to_its_length_titles_and_sections_the_chunks(tmp_path):
    """In a `.txt` file, "Version 3.2.0 (released 14 March 2025)" over 38 dashes was a line
    of text: the release note under it named no version, and the file was titled by its
    name. A title underlined to its own length (two characters either way) is a heading,
    one level per underline character in the order first seen; a rule of another length, an
    indented line and a line that follows text stay as written."""
    folder = tmp_path / "docs"
    folder.mkdir()
    text = ("T7 RELEASE NOTES\n================\n\nVersion 3.2.0 (released 14 March 2025)\n"
            "--------------------------------------\nNew: geofencing around the home.\n\n"
            "Ends with a rule\n----------------------------------------\n\n"
            "  Indented line\n  -------------\nfollows text\n------------\n")
    (folder / "notes.txt").write_text(text, encoding="utf-8")
    (doc,) = load_folder(folder, progress=False)
    assert doc.title == "T7 RELEASE NOTES"
    assert doc.text == text.replace("T7 RELEASE NOTES\n================", "# T7 RELEASE NOTES"
                                    ).replace("Version 3.2.0 (released 14 March 2025)\n" + "-" * 38,
                                              "## Version 3.2.0 (released 14 March 2025)")


def _load_seconds(folder: Path) -> tuple[float, str]:
    """CPU seconds `load_folder` takes on `folder` (one file), and the text it reads."""
    start = time.process_time()
    (doc,) = load_folder(folder, progress=False)
    return time.process_time() - start, doc.text


def test_setext_headings_cost_no_more_than_reading_the_file(tmp_path):
    """30,000 short sections, each `Part` over `----`, load in about the time the same file
    takes with a blank line under each `Part` (a thematic break, no heading to rewrite):
    rewriting each heading in place moved every line after it, 7 s against 1.5 s here and
    37 s for 5 MB of such sections."""
    headed, plain = tmp_path / "headed", tmp_path / "plain"
    headed.mkdir()
    plain.mkdir()
    (headed / "log.md").write_text(("Part\n----\n" + "\n" * 40) * 30_000, encoding="utf-8")
    (plain / "log.md").write_text(("Part\n\n----" + "\n" * 40) * 30_000, encoding="utf-8")
    plain_seconds, _ = _load_seconds(plain)
    seconds, text = _load_seconds(headed)
    assert text == ("## Part\n" + "\n" * 40) * 30_000
    assert seconds < 2 * plain_seconds, (seconds, plain_seconds)


def test_a_file_with_one_rule_loads_in_about_the_time_of_one_without(tmp_path):
    """A 6 MB log with one `---` line (a thematic break) loads in about the time of the same
    log without it: markdown-it-py read the whole file for that one line, 2.4 s against
    0.08 s; it now reads only the lines around it."""
    body = "".join(f"Reading {n} was taken at the pump.\n\n" for n in range(80_000))
    ruled, plain = tmp_path / "ruled", tmp_path / "plain"
    ruled.mkdir()
    plain.mkdir()
    (ruled / "log.md").write_text(f"{body}Pump B\n------\n\n{body}---\n\n{body}",
                                  encoding="utf-8")
    (plain / "log.md").write_text(f"{body}## Pump B\n\n{body}***\n\n{body}",
                                  encoding="utf-8")  # `***`: a rule, no underline
    plain_seconds, _ = min(_load_seconds(plain) for _ in range(2))
    seconds, text = min(_load_seconds(ruled) for _ in range(2))
    assert text == f"{body}## Pump B\n\n{body}---\n\n{body}"
    assert seconds < 4 * plain_seconds, (seconds, plain_seconds)


def test_a_file_of_short_sections_loads_in_little_memory(tmp_path):
    """4 MB of short sections (`Part n` over `----`, one sentence) load within a 320 MB
    address space: markdown-it-py held the blocks of the whole file at once, 530 MB, and
    the load died or hung there; read in parts, it peaks at about 170 MB."""
    folder = tmp_path / "log"
    folder.mkdir()
    (folder / "log.md").write_text("".join(f"Part {n}\n----\nShort text.\n\n"
                                           for n in range(140_000)), encoding="utf-8")
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_AS, (320 << 20, 320 << 20))\n"
            "from ragkit import load_folder\n"
            "(doc,) = load_folder(sys.argv[1], progress=False, jobs=1)\n"
            "print(doc.text == ''.join(f'## Part {n}\\nShort text.\\n\\n'"
            " for n in range(140_000)))\n")
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr[-300:]) == (0, "True\n", "")


RST = """=====================
Kestrel EG-400 manual
=====================

The gateway links sensors to the cloud.

Pairing
=======

Hold the button for five seconds.

Reset
-----

Unplug it for ten seconds.

----

- a bullet item
  -------------

=====  ======
Port   Use
=====  ======
1      LAN
=====  ======

제목이 긴 절
=========

Too short an underline, in columns: each Hangul syllable takes two.
"""


def test_rst_section_titles_title_and_section_the_chunks(tmp_path):
    """reStructuredText's titles (underlined, or over- and underlined) were text: the
    document was titled by its file name and no chunk had a section. Levels follow the
    order the styles first appear; a transition, a bullet item, a simple table's borders
    and an underline shorter than its title (in columns) stay as written."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "manual.rst").write_text(RST, encoding="utf-8")
    top, pairing = ["Kestrel EG-400 manual"], ["Kestrel EG-400 manual", "Pairing"]
    reset = [*pairing, "Reset"]
    assert _sections(folder, tmp_path / "idx") == [
        ("manual.rst#0", "Kestrel EG-400 manual", top),
        ("manual.rst#1", "Kestrel EG-400 manual", pairing),
        *[(f"manual.rst#{n}", "Kestrel EG-400 manual", reset) for n in range(2, 9)]]
    (doc,) = load_folder(folder, progress=False)
    assert doc.text == RST.replace(
        "=====================\nKestrel EG-400 manual\n=====================",
        "# Kestrel EG-400 manual").replace("Pairing\n=======", "## Pairing").replace(
        "Reset\n-----", "### Reset")


def test_sentences_over_a_rule_written_without_a_blank_line_stay_text(tmp_path):
    """A paragraph of two lines, or one ending in a full stop, directly over `---` (a rule
    written without the blank line before it: CommonMark reads an underlined heading) was
    made a `##` heading: a label no offline answer quotes, so `ragkit ask` declined what it
    had answered. It stays text; a short line over `-----` is still a heading, and any
    paragraph over `=====` too."""
    folder = tmp_path / "docs"
    folder.mkdir()
    text = ("Boiler notes\n============\n\nThe boiler is checked every spring.\nIts pressure "
            "limit is 3 bar.\n---\n\nPumps\n-----\n\nThe pump flow rate is 12 litres a "
            "minute.\n---\n")
    (folder / "notes.md").write_text(text, encoding="utf-8")
    (doc,) = load_folder(folder, progress=False)
    assert doc.text == text.replace("Boiler notes\n============", "# Boiler notes").replace(
        "Pumps\n-----", "## Pumps")
    index = tmp_path / "idx"
    _sections(folder, index)
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    for question, quote in (("What is the boiler pressure limit?",
                             "Its pressure limit is 3 bar. [1]"),
                            ("What is the pump flow rate?",
                             "The pump flow rate is 12 litres a minute. [1]")):
        done = subprocess.run([RAGKIT, "ask", "--index", str(index), question], env=env,
                              capture_output=True, text=True)
        assert (done.returncode, done.stdout.splitlines()[0]) == (0, quote), done.stderr


def test_a_hash_comment_in_a_text_file_is_no_title(tmp_path):
    """The last line of a Debian changelog, "# Older entries have been removed from this
    changelog.", titled the whole file, and every chunk's context named it so: a `#` line of
    a plain-text file that ends as a sentence does, or has no text after it, is no title."""
    (tmp_path / "changelog.txt").write_text(
        "bash (5.2.15-2) unstable; urgency=medium\n\n  * Fix the build.\n\n"
        "# Older entries have been removed from this changelog.\n")
    (tmp_path / "todo.txt").write_text("Buy oil.\n\n# Later\n")
    (tmp_path / "readme.txt").write_text("[![build](badge.svg)](ci)\n\n# Pump notes\n\n"
                                         "The pump needs oil.\n")
    (tmp_path / "notes.md").write_text("Intro line.\n\n# Pump notes.\n")
    (tmp_path / "release.txt").write_text("Intro line.\n\nVersion 3.2.0\n-------------\n\nFixed.\n")
    titles = {d.id: d.title for d in load_folder(tmp_path)}
    assert titles == {"changelog.txt": "changelog.txt", "todo.txt": "todo.txt",
                      "readme.txt": "Pump notes", "notes.md": "Pump notes.",
                      "release.txt": "Version 3.2.0"}
