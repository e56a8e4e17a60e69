"""Characters that show nothing inside a word — a soft hyphen (HTML's `&shy;`), a zero-width
space, a word joiner, a byte order mark pasted mid-text — are removed as every file is read,
whatever its format: BM25 split the word at them, so "waterproofing" did not find
"water\u00adproofing". A PDF's page map moves with its text."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from loader_files import docx
from ragkit.document_folder import load_folder

RAGKIT = str(Path(sys.executable).parent / "ragkit")
WORDS = {"md": "waterproofing", "txt": "lockwasher", "html": "antislip", "docx": "backflow",
         "pdf": "firewall", "rst": "bellows"}


def _dejavu_pdf(path: Path, pages: list[str], title: str) -> Path:
    """A PDF of one line a page in DejaVu Sans, which maps U+00AD and U+200B to text (a
    standard font's encoding has no zero-width space), and its Title field."""
    import matplotlib
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas
    font = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    pdfmetrics.registerFont(TTFont("DejaVu", str(font)))
    pdf = canvas.Canvas(str(path), invariant=1)
    pdf.setTitle(title)
    for line in pages:
        pdf.setFont("DejaVu", 11)
        pdf.drawString(72, 700, line)
        pdf.showPage()
    pdf.save()
    return path


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "roof.md").write_text("# Roof\n\nApply water\u00adproofing to the flat roof.\n")
    (root / "parts.txt").write_text("Fit the lock\u200bwasher under the nut.\n")
    (root / "deck.html").write_text("<html><head><title>Deck</title></head><body><p>Use "
                                    "anti&shy;slip paint on the deck.</p></body></html>")
    docx(root / "pipes.docx", [("", "Fit a back\u2060flow valve to the tap.")])
    _dejavu_pdf(root / "server.pdf", ["Open the fire\u00adwall for the zero\u200bwidth port.",
                                      "Then restart the server."], "Fire\u200bwall guide")
    (root / "forge.rst").write_text("Pump the bel\ufefflows twice.\n")
    return root


def test_a_word_with_an_invisible_character_is_found_by_bm25_in_every_format(tmp_path):
    folder = _folder(tmp_path / "docs")
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home")}
    built = subprocess.run([RAGKIT, "index", str(folder), "--out", str(tmp_path / "idx"),
                            "--embedder", "none"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert built.returncode == 0, built.stderr
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(f'{{"id": "{kind}", "text": "{word}"}}\n'
                               for kind, word in WORDS.items()))
    done = subprocess.run([RAGKIT, "search", str(tmp_path / "idx"), "--queries", str(queries),
                           "--out", str(tmp_path / "run.trec"), "--mode", "bm25"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    hits = {line.split()[0]: line.split()[2]
            for line in (tmp_path / "run.trec").read_text().splitlines()}
    assert hits == {"md": "roof.md#0", "txt": "parts.txt#0", "html": "deck.html#0",
                    "docx": "pipes.docx#0", "pdf": "server.pdf#0", "rst": "forge.rst#0"}


def test_invisible_characters_leave_the_text_title_and_page_map(tmp_path):
    docs = {doc.id: doc for doc in load_folder(_folder(tmp_path / "docs"), progress=False)}
    pdf = docs["server.pdf"]
    assert pdf.text == "Open the firewall for the zerowidth port.\n\nThen restart the server."
    assert pdf.title == pdf.metadata["title"] == "Firewall guide"
    assert pdf.metadata["pages"] == [[1, 0], [2, 43]]
    assert pdf.text[43:] == "Then restart the server."
    assert docs["roof.md"].text == "# Roof\n\nApply waterproofing to the flat roof.\n"
    assert docs["forge.rst"].text == "Pump the bellows twice.\n"
