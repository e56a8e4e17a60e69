"""A golden set generated offline from a real folder's text: a PDF's rotated or vertical
text comes out of its text layer as letters one space apart ("w r i t t e n v e r t i c a l
l y"), which has no content term to ask about; such a passage is skipped, not a crash."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RAGKIT = Path(sys.executable).parent / "ragkit"
MODELS = Path.home() / ".cache" / "ragkit" / "models"
SPACED = ("w r i t t e n v e r t i c a l l y a l o n g t h e m a r g i n o f t h e "
          "p a g e b y a w o r d p r o c e s s o r a n d r e a d b a c k o n e "
          "l e t t e r a t a t i m e .")
PROSE = ("The north gate of the depot opens at six in the morning and closes at ten at "
         "night. Drivers collecting pallets after hours call the yard supervisor, who "
         "issues a one-time gate code valid for thirty minutes.")


def generate(tmp_path: Path, docs: Path, golden: Path, *options: str
             ) -> subprocess.CompletedProcess:
    """`ragkit questions generate DOCS --out GOLDEN --kinds lexical OPTIONS`, offline, in a
    fresh RAGKIT_HOME that sees the installed models."""
    if not any(MODELS.glob("*e5-small*")):
        pytest.skip("the e5-small model is not installed (ragkit models install)")
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(MODELS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run([str(RAGKIT), "questions", "generate", str(docs), "--out",
                           str(golden), "--kinds", "lexical", *options],
                          env={**env, "RAGKIT_HOME": str(home)}, capture_output=True,
                          text=True, timeout=300)


def test_generate_skips_a_letter_spaced_passage_and_writes_the_rest(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "margin.md").write_text(f"# Margin note\n\n{SPACED}\n")
    (docs / "depot.md").write_text(f"# Depot gate\n\n{PROSE}\n")
    golden = tmp_path / "golden.jsonl"
    done = generate(tmp_path, docs, golden, "--n", "2")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    assert [(r["golden"][0]["doc_id"], r["answer"]) for r in rows] == [("depot.md",
        "Drivers collecting pallets after hours call the yard supervisor, who issues a "
        "one-time gate code valid for thirty minutes.")]


def test_generate_skip_bad_leaves_out_the_files_index_skip_bad_leaves_out(tmp_path):
    """`ragkit index FOLDER --skip-bad` builds on a folder with a scanned PDF in it; the golden
    set for that folder must be writable from the same folder, with the same option."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "depot.md").write_text(f"# Depot gate\n\n{PROSE}\n")
    (docs / "draft.pdf").write_bytes(b"")
    golden = tmp_path / "golden.jsonl"
    done = generate(tmp_path, docs, golden, "--n", "1", "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert f"skipped 1 bad file:\n  {docs / 'draft.pdf'}: empty file (0 bytes)" in done.stderr
    assert [json.loads(line)["golden"][0]["doc_id"] for line in
            golden.read_text().splitlines()] == ["depot.md"]


HANDBOOK = ["The cooperative collects membership fees every March, and late payers lose their "
            "voting rights for that season's general assembly meeting.",
            "Seed orders must be placed through the shared spreadsheet before the fifteenth of "
            "January so the bulk discount from the supplier applies.",
            "Tractors are booked through the equipment calendar; each member may reserve at most "
            "three days in a row during the harvest period.",
            "Honey extraction happens in the communal kitchen, which must be cleaned with "
            "unscented soap afterwards to protect the next batch."]


def test_no_question_is_labelled_with_one_copy_of_a_duplicated_document(tmp_path):
    """Three copies of one handbook (`handbook (1).md`, an archive copy): a contextual
    question, naming "Member handbook", was kept with one copy as its only golden document,
    so `eval` scored which identical twin ranked first (MRR 0.833 for bm25 and dense, 1.0
    for hybrid: tie-break noise). The other document's questions are kept."""
    docs = tmp_path / "docs"
    (docs / "archive").mkdir(parents=True)
    for name in ("handbook.md", "handbook (1).md", "archive/handbook.md"):
        (docs / name).write_text("# Member handbook\n\n" + "\n\n".join(HANDBOOK) + "\n")
    (docs / "orchard.md").write_text(f"# Orchard notes\n\n{PROSE}\n")
    golden = tmp_path / "golden.jsonl"
    done = generate(tmp_path, docs, golden, "--n", "20", "--kinds", "contextual,lexical",
                    "--chunk-size", "48", "--overlap", "0", "--embedder", "none")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    assert rows and {g["doc_id"] for r in rows for g in r["golden"]} == {"orchard.md"}
    assert "span in another document" in done.stdout
