"""Which part of an HTML page is its content: an `<article>` that holds little of the page
(a comment thread, an embedded post) and an empty `<main>` (an app shell) are not it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.loaders import load_file

INSTALL = "Download the installer from the intranet, run it as administrator, and reboot."
KEYS = "Licence keys are issued by the service desk within one working day of the request."
COMMENTS = f"""<html><head><title>Install guide</title></head><body>
<div id="doc"><h1>Install guide</h1><p>{INSTALL}</p><p>{KEYS}</p></div>
<section class="comments"><article class="comment"><p>Thanks, worked for me.</p></article>
<article class="comment"><p>Does this work on macOS too?</p></article></section></body></html>"""
FIRST_DAY = ("On the first day the new hire collects a laptop from the service desk, signs the "
             "equipment form and sets up two-factor authentication.")
EMBEDDED = f"""<html><head><title>Onboarding checklist</title></head><body><div class="wrapper">
<h1>Onboarding checklist</h1><p>{FIRST_DAY}</p>
<blockquote class="twitter-tweet"><article><p>Welcome to the team!</p></article></blockquote>
</div></body></html>"""
SHELL = """<html><head><title>App</title></head><body><main id="root"></main>
<div class="ssr"><h1>Pricing</h1><p>The basic plan costs nine euros a month.</p></div>
</body></html>"""
# mdBook's shape: a one-line page in <main>, a keyboard-help box outside it longer than that
STUB = """<html><head><title>reentrant_lock</title></head><body>
<div id="help"><h2>Keyboard shortcuts</h2><p>Press left or right to navigate between chapters.
Press S or / to search in the book. Press ? to show this help. Press Esc to hide it.</p></div>
<main><h1>reentrant_lock</h1><p>The tracking issue for this feature is: #121440</p></main>
</body></html>"""


def _load(tmp_path: Path, name: str, page: str):
    (tmp_path / name).write_text(page, encoding="utf-8")
    return load_file(tmp_path / name, name)


@pytest.mark.parametrize("name, page, text", [
    ("comments.html", COMMENTS, f"# Install guide\n\n{INSTALL}\n\n{KEYS}\n\n"
                                f"Thanks, worked for me.\n\nDoes this work on macOS too?"),
    ("embed.html", EMBEDDED, f"# Onboarding checklist\n\n{FIRST_DAY}\n\nWelcome to the team!"),
    ("shell.html", SHELL, "# Pricing\n\nThe basic plan costs nine euros a month."),
    ("stub.html", STUB, "# reentrant_lock\n\nThe tracking issue for this feature is: #121440")])
def test_the_content_root_holds_the_page_text(tmp_path, name, page, text):
    """The comments and the tweet had been the whole document (exit 0, `ask` declined every
    question about the page); the app shell was refused as "no body text". A `<main>` the
    page marks stays its content however short."""
    assert _load(tmp_path, name, page).text == text


def test_a_page_with_commented_articles_is_searchable_across_processes(tmp_path):
    """The user's path: `ragkit index` on the folder, `ragkit search` in another process."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "comments.html").write_text(COMMENTS, encoding="utf-8")
    (docs / "embed.html").write_text(EMBEDDED, encoding="utf-8")
    ragkit = [sys.executable, "-m", "ragkit.cli"]
    done = subprocess.run([*ragkit, "index", str(docs), "--out", str(tmp_path / "idx"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q", "text": "who issues licence keys"}) + "\n")
    done = subprocess.run([*ragkit, "search", str(tmp_path / "idx"), "--queries", str(queries),
                           "--level", "doc", "--k", "1", "--out", "-"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["q", "Q0", "comments.html"]


def test_a_deep_page_of_many_dropped_elements_is_weighed_in_one_walk(tmp_path):
    """Weighing an `<article>` against the page walked up from each dropped element: 400,000
    `<svg>`s 990 elements deep took 25 s (a 50 MB page such, over a minute); one walk that
    steps over them takes about 1.5 s. A loose bound, well apart from both."""
    import time
    page = ("<html><body>" + "<div>" * 990 + "<article><p>A short teaser.</p></article>"
            + "<p>" + "body text " * 50 + "</p>" + "<svg></svg>" * 400_000 + "</body></html>")
    started = time.monotonic()
    doc = _load(tmp_path, "deep.html", page)
    assert time.monotonic() - started < 15
    assert doc.text == "A short teaser.\n\n" + " ".join(["body text"] * 50)
