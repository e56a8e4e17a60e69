"""The sample folder notebook 08 reads (ragkit.sample_collection): rendered on first use, whole
or not at all."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import ragkit.sample_collection as sample
from ragkit.chunking import chunk_documents
from ragkit.document_folder import load_folder
from ragkit.folder_summary import file_summary
from ragkit.documents import RagkitError
from ragkit.stale_temp import owner

pytest.importorskip("reportlab")
ROOT = Path(__file__).resolve().parent.parent


def test_the_absent_sample_is_rendered_once_with_two_files_a_loader_refuses(tmp_path, monkeypatch):
    target = tmp_path / "build" / "mixed"
    monkeypatch.setattr(sample, "SAMPLE", target)
    assert sample.sample_folder(target) == target
    docs = load_folder(target, skip_bad=True, progress=False)
    rows = {row["file"]: row for row in file_summary(docs)}
    assert len(docs) == 12 and sorted(s.path for s in docs.skipped) == [
        "scanned/scan.pdf", "web/site-map.html"]
    assert {row["format"] for row in rows.values()} == {"pdf", "html", "docx"}
    assert rows["manuals/kestrel-eg400-manual.pdf"]["pages"] > 1
    # the reason without the file's path (the row names the file; a notebook shows no paths)
    assert rows["scanned/scan.pdf"]["skipped"] == "no text layer (scanned? ragkit does not OCR)"
    assert rows["web/site-map.html"]["skipped"] == "no body text"
    assert "chunks" not in rows["scanned/scan.pdf"]
    chunks = chunk_documents(docs)
    counted = {row["file"]: row["chunks"] for row in file_summary(docs, chunks=chunks)}
    assert counted == {**{d.id: sum(c.doc_id == d.id for c in chunks) for d in docs},
                       "scanned/scan.pdf": 0, "web/site-map.html": 0}
    assert min(counted[d.id] for d in docs) >= 1
    assert [p.name for p in target.parent.iterdir()] == ["mixed"]  # no staging folder left
    marker = target / "manuals" / "kestrel-eg400-manual.pdf"
    before = marker.stat().st_mtime_ns
    assert sample.sample_folder(target) == target  # present: not rendered again
    assert marker.stat().st_mtime_ns == before


def test_a_failed_render_leaves_no_folder_and_says_why(tmp_path, monkeypatch):
    target = tmp_path / "mixed"
    broken = tmp_path / "broken.py"
    broken.write_text("import sys, pathlib\n"
                      "pathlib.Path(sys.argv[-1], 'half.pdf').write_text('x')\n"
                      "sys.exit('reportlab is not installed')\n")
    monkeypatch.setattr(sample, "SAMPLE", target)
    monkeypatch.setattr(sample, "GENERATOR", broken)
    with pytest.raises(RagkitError, match=r"mixed: the sample collection could not be rendered "
                                          r"\(reportlab is not installed\)"):
        sample.sample_folder(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.py"]


SLOW = ("import sys, time, pathlib\n"
        "time.sleep(1)\n"
        "pathlib.Path(sys.argv[-1], 'doc.html').write_text('<p>rendered</p>')\n")


def test_a_killed_renders_folder_is_removed_and_a_live_ones_kept(tmp_path, monkeypatch):
    """The staging folder was `.mixed-XXXXXXXX`, named by no process: one a render killed
    with -9 left stayed for good. Named by pid and host now, it is removed by the next render
    once its process is gone; a live render's is left to it."""
    target = tmp_path / "mixed"
    generator = tmp_path / "render.py"
    generator.write_text(SLOW)
    monkeypatch.setattr(sample, "SAMPLE", target)
    monkeypatch.setattr(sample, "GENERATOR", generator)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    host = owner().split(".")[1]
    try:
        for pid in (int(gone.stdout), live.pid):
            (tmp_path / f".mixed.render-{pid}.{host}-abcdefgh").mkdir()
            (tmp_path / f".mixed.render-{pid}.{host}-abcdefgh" / "half.pdf").write_text("x")
        assert sample.sample_folder(target) == target
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            f".mixed.render-{live.pid}.{host}-abcdefgh", "mixed", "render.py"]
    finally:
        live.kill()
        live.wait(timeout=30)
    assert [p.name for p in target.iterdir()] == ["doc.html"]


def test_two_renders_at_once_keep_one_folder_and_leave_nothing(tmp_path, monkeypatch):
    target = tmp_path / "mixed"
    generator = tmp_path / "render.py"
    generator.write_text(SLOW)
    monkeypatch.setattr(sample, "SAMPLE", target)
    monkeypatch.setattr(sample, "GENERATOR", generator)
    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(sample.sample_folder, [target, target])) == [target, target]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed", "render.py"]
    assert (target / "doc.html").read_text() == "<p>rendered</p>"

def test_another_missing_folder_is_one_clear_error(tmp_path):
    with pytest.raises(RagkitError, match=r"elsewhere: no such folder"):
        sample.sample_folder(tmp_path / "elsewhere")


def test_a_fenced_code_block_is_rendered_as_code_lines_not_a_paragraph(tmp_path):
    # the API reference's curl samples used to become one paragraph with stray backticks
    # ("``bash curl -X GET … ``"), which the offline question writer then asked about
    sys.path.insert(0, str(ROOT / "data" / "generators"))
    try:
        from _sample_writers import parse, to_html
    finally:
        sys.path.pop(0)
    from ragkit.loaders import load_file
    source = (ROOT / "data" / "corpus" / "manuals" / "fernway-api-reference.md").read_text()
    page = tmp_path / "api.html"
    page.write_text(to_html(*parse(source)))
    text = load_file(page, "api.html").text
    assert ("    curl -X GET https://api.fernway.example/v2/orders \\\n"
            "      -H \"Authorization: Bearer $FERNWAY_KEY\"\n") in text
    assert '      "next_cursor": "c3Vw"\n' in text
    assert "``" not in text
