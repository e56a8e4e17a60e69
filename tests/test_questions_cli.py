"""`ragkit questions generate → review → (an expert edits the sheet) → accept →
ragkit eval`, offline, each step its own process, as a user runs them."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from questions_corpus import BOILER_KO, GATEWAY, REFUNDS, write_corpus

RAGKIT = Path(sys.executable).parent / "ragkit"
MODELS = Path.home() / ".cache" / "ragkit" / "models"
KINDS = "lexical=2,paraphrase=1,contextual=2,multi-chunk=1,unanswerable=1"
CHUNKING = ["--chunk-size", "48", "--overlap", "8"]


@pytest.fixture
def env(tmp_path):
    if not any(MODELS.glob("*e5-small*")):
        pytest.skip("the e5-small model is not installed (ragkit models install)")
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(MODELS)
    out = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return {**out, "RAGKIT_HOME": str(home)}


def run(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RAGKIT), *args], env=env, capture_output=True, text=True,
                          timeout=300)


def test_generate_writes_korean_questions_for_a_korean_folder(tmp_path, env):
    """A Korean document got English templates around Korean words ("Which statement
    concerns 압력, 허용 and 최대?"). Offline, each kind is asked in Korean now, its list
    joined by 와/과 as the word before asks, and every one passes its filters."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "boiler.md").write_text(BOILER_KO, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(golden), "--n", "6",
               "--kinds", "lexical=1,paraphrase=1,contextual=1,multi-chunk=1,unanswerable=1",
               *CHUNKING)
    assert done.returncode == 0, done.stderr
    kept = next(line for line in done.stdout.splitlines() if line.startswith("kept"))
    assert kept.split()[1:] == ["1", "1", "1", "1", "1", "5"]
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    assert [(r["kind"], r["lang"], r["question"]) for r in rows] == [
        ("lexical", "ko", "본문에는 최대, 허용과 압력에 관해 무엇이 적혀 있나요?"),
        ("paraphrase", "ko", "주변, 배기와 입주민에 관한 내용은 무엇인가요?"),
        ("contextual", "ko", "한빛아파트 보일러 관리 안내에는 설치, 10과 지나에 관해 무엇이 "
                             "적혀 있나요?"),
        ("multi-chunk", "ko", "보일러와 전문, 그리고 신고와 호수에 관해 각각 무엇이 적혀 "
                              "있나요?"),
        ("unanswerable", "ko", "한빛아파트 보일러 관리 안내에는 ZX-9686에 관해 무엇이 적혀 "
                               "있나요?")]
    assert rows[0]["golden"] == [{"doc_id": "boiler.md", "span": "최대 허용 압력은 3바이며 이를 "
                                  "넘으면 안전 밸브가 자동으로 열리고 경고등이 켜집니다."}]


def test_generate_review_edit_accept_and_eval_across_processes(tmp_path, env):
    docs = write_corpus(tmp_path / "docs")
    golden, sheet, accepted = tmp_path / "golden.jsonl", tmp_path / "review.csv", \
        tmp_path / "accepted.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(golden), "--n", "7",
               "--kinds", KINDS, *CHUNKING)
    assert done.returncode == 0, done.stderr
    assert "the offline stand-in writes them by its documented rule" in done.stderr
    counts = {line[:29].strip(): line[29:].split() for line in done.stdout.splitlines()[1:12]}
    assert counts == {"asked": ["2", "1", "2", "1", "1", "7"],
                      "no usable chunk": ["0"] * 6,
                      "generated": ["2", "1", "2", "1", "1", "7"],
                      **{stage: ["0"] * 6 for stage in (
                          "no question written", "malformed reply", "span not verbatim",
                          "span in another document", "round-trip failed",
                          "answerable from the question", "near-duplicate")},
                      "kept": ["2", "1", "2", "1", "1", "7"]}
    assert "measured: offline stand-in, no cost" in done.stdout
    # 7 written, 7 answered back, 6 asked without a document (not the unanswerable one)
    assert ("claude-haiku-4-5 (answered by the offline stand-in): 20 requests, 0 from the call "
            "cache; estimated tokens in ") in done.stdout
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    assert [(r["id"], r["kind"], r["question"]) for r in rows] == [
        ("gen-001", "lexical", "What does the text state about opened, items and refunded?"),
        ("gen-002", "lexical", "What does the text state about first, ethernet and port?"),
        ("gen-003", "paraphrase", "Which statement concerns original, paid and refunds?"),
        ("gen-004", "contextual", "In Kestrel gateway manual, what is stated about holding, "
                                  "recessed and reset?"),
        ("gen-005", "contextual", "In Larkspur refund policy, what is stated about "
                                  "customers, may and return?"),
        ("gen-006", "multi-chunk", "What is stated about second and ethernet, and about short "
                                   "and press?"),
        ("gen-007", "unanswerable", rows[6]["question"])]
    assert rows[6]["golden"] == [] and rows[6]["question"].startswith(
        "In Larkspur refund policy, what is stated about ZX-")
    assert {r["generator"] for r in rows} == {"offline stand-in rule"}
    texts = {"refunds.md": REFUNDS, "gateway.md": GATEWAY}
    for r in rows:
        for item in r["golden"]:  # verbatim in the document, and inside its source chunk
            assert item["span"] in texts[item["doc_id"]]
        for span, passage in zip([g["span"] for g in r["golden"]], r["source"]["passages"]):
            assert span in passage
    assert rows[0]["source"]["section"] == "Refunds"
    # the two documents take turns: the first lexical question is on one, the second on the
    # other (one shuffled list gave both to whichever came up first)
    assert [r["golden"][0]["doc_id"] for r in rows[:2]] == ["refunds.md", "gateway.md"]
    assert rows[5]["source"]["chunk_ids"] == ["gateway.md#0", "gateway.md#3"]

    # the same run again: every call answered by the paid-call cache
    again = run(env, "questions", "generate", str(docs), "--out", str(golden), "--n", "7",
                "--kinds", KINDS, *CHUNKING)
    assert again.returncode == 0, again.stderr
    assert ("claude-haiku-4-5 (answered by the offline stand-in): 0 requests, 20 from the call "
            "cache") in again.stdout
    assert [json.loads(line) for line in golden.read_text().splitlines()] == rows

    done = run(env, "questions", "review", str(golden), "--out", str(sheet))
    assert done.returncode == 0, done.stderr
    assert sheet.read_bytes().startswith(b"\xef\xbb\xbfid,question,answer_span,answer_span_2,"
                                         b"source,kind,keep,notes\r\n")
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [t["keep"] for t in table] == ["yes"] * 7
    assert table[0]["source"] == "refunds.md, Refunds"
    # the expert: drops gen-001, rewords gen-002, shortens gen-003's span (re-wrapped)
    table[0]["keep"] = "No"
    table[1]["question"] = "How does the first Ethernet port get its address?"
    table[2]["answer_span"] = "Refunds are paid to the original\npayment card"
    table[2]["notes"] = "span cut to the answer"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)

    done = run(env, "questions", "accept", str(sheet), "--golden", str(golden), "--out",
               str(accepted))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"kept 6 of 7 questions into {accepted}")
    kept = [json.loads(line) for line in accepted.read_text().splitlines()]
    assert [k["id"] for k in kept] == [f"gen-00{i}" for i in range(2, 8)]
    assert kept[0]["question"] == "How does the first Ethernet port get its address?"
    assert kept[1]["golden"] == [{"doc_id": "refunds.md",
                                  "span": "Refunds are paid to the original payment card"}]
    assert kept[1]["review_notes"] == "span cut to the answer"

    assert run(env, "index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none",
               *CHUNKING).returncode == 0
    done = run(env, "eval", str(docs), "--index", str(tmp_path / "idx"), "--questions",
               str(accepted), "--by-kind")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == ("docs: 5 judged queries of split test, 8 chunks; 1 "
                                           "unanswerable question (no golden items) not scored")
    assert "multi-chunk" in done.stdout and "contextual" in done.stdout


def test_a_bad_kinds_option_and_an_unknown_model_are_one_line_before_any_work(tmp_path, env):
    from cli_errors import one_error_line
    docs = write_corpus(tmp_path / "docs")
    out = tmp_path / "golden.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(out), "--kinds",
               "lexical,trivia")
    assert one_error_line(done) == ("ragkit: error: --kinds: unknown kind 'trivia' (known: "
                                    "lexical, paraphrase, contextual, multi-chunk, "
                                    "unanswerable)")
    done = run(env, "questions", "generate", str(docs), "--out", str(out), "--model",
               "claude-nonesuch")
    assert one_error_line(done).startswith("ragkit: error: unknown model 'claude-nonesuch'")
    assert not out.exists() and not (tmp_path / "home" / "cache" / "calls.sqlite").exists()


def test_generate_keeping_no_question_writes_nothing_and_says_so(tmp_path, env):
    """Documents too short for any question: the filter table is printed, then one error line
    and exit 2 — no empty golden file for `review` (it was written, exit 0, "review them")."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("Short note.\n")
    out = tmp_path / "golden.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(out), "--embedder", "none")
    assert done.returncode == 2
    assert "kept  " in done.stdout and "review them" not in done.stdout
    assert done.stderr.rstrip().splitlines()[-1].endswith(
        f"ragkit: error: no question was kept (see the table and any warning above); nothing "
        f"was written to {out}")
    assert not out.exists()


def test_a_huge_n_is_capped_at_the_usable_chunks_not_stepped_down_one_at_a_time(tmp_path, env):
    """`--n 100000000` on a folder with a handful of usable chunks ran for 45 minutes: the
    quotas were scaled down one question at a time from the number asked."""
    docs = write_corpus(tmp_path / "docs")
    small, huge = tmp_path / "small.jsonl", tmp_path / "huge.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(small), "--n", "7",
               "--embedder", "none", *CHUNKING)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([str(RAGKIT), "questions", "generate", str(docs), "--out", str(huge),
                           "--n", "100000000", "--embedder", "none", *CHUNKING], env=env,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert ("ragkit: warning: the documents have usable chunks for 7 of the 100000000 "
            "questions asked" in done.stderr)
    kept = next(line for line in done.stdout.splitlines() if line.startswith("kept"))
    assert kept.split()[1:] == ["2", "2", "2", "1", "0", "7"]
    assert huge.read_text() == small.read_text()  # the 7 that fit, as `--n 7` writes them


def table_of(stdout: str) -> dict[str, list[int]]:
    """The filter table `generate` prints: its label → the numbers (kinds, then all)."""
    lines = stdout.splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("kept"))
    return {line[:29].strip(): [int(v) for v in line[29:].split()] for line in lines[1:end + 1]}


def test_the_table_accounts_for_every_question_asked_and_a_kind_without_chunks(tmp_path, env):
    """A folder with fewer usable chunks than asked: the table said 20 asked and 2 generated,
    and multi-chunk (no two separate chunks of one document: each file is one chunk) a
    column of 0s, with no row saying where the rest went. Each column adds up now."""
    docs = write_corpus(tmp_path / "docs")
    done = run(env, "questions", "generate", str(docs), "--out", str(tmp_path / "g.jsonl"),
               "--n", "20", "--embedder", "none", "--chunk-size", "512", "--overlap", "8")
    assert done.returncode == 0, done.stderr
    table = table_of(done.stdout)
    assert table["asked"] == [5, 5, 5, 3, 2, 20]
    assert table["no usable chunk"] == [4, 4, 5, 3, 2, 18]
    assert table["generated"] == [1, 1, 0, 0, 0, 2] and table["kept"] == [1, 1, 0, 0, 0, 2]
    drops = [v for label, v in table.items() if label not in ("asked", "generated")]
    assert [sum(column) for column in zip(*drops)] == table["asked"]
    assert "multi-chunk question needs two separate chunks of one document" in done.stdout


def test_a_kind_written_in_place_of_a_contextual_one_is_counted_below_zero(tmp_path, env):
    """Every chunk names its document, so the contextual question was written as a lexical
    one: the table showed lexical 1 asked and 2 generated, contextual 1 asked and 0."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kestrel.md").write_text(KESTREL)
    done = run(env, "questions", "generate", str(docs), "--out", str(tmp_path / "g.jsonl"),
               "--n", "2", "--kinds", "lexical=1,contextual=1", "--embedder", "none",
               *CHUNKING)
    assert done.returncode == 0, done.stderr
    table = table_of(done.stdout)
    assert (table["asked"], table["no usable chunk"], table["generated"], table["kept"]) == (
        [1, 1, 2], [-1, 1, 0], [2, 0, 2], [2, 0, 2])
    assert ("no usable chunk below 0: written in place of the contextual or multi-chunk "
            "questions that had no chunk") in done.stdout


KESTREL = """---
title: Kestrel
---
# Setup

The Kestrel gateway keeps the fixed service address 192.168.50.1 so that a laptop can always
reach the configuration pages during commissioning.

# Reset

Holding the Kestrel reset button for ten seconds restores every factory setting, clears the
stored certificates and reboots the device into commissioning mode.
"""

SOIL = """---
title: "Soil: a primer"
---

pH and liming
-------------

Most crops grow best at a soil pH between 6.0 and 7.0. Agricultural lime raises the pH of an
acidic field; apply about 2 tonnes per hectare to raise the pH by one unit in a sandy loam.
"""


def test_a_hard_wrapped_sentence_is_asked_about_and_spanned_whole(tmp_path, env):
    """The offline writer cut at the line break, so the span began mid-sentence ("acidic
    field; apply …"), where the offline answerer quotes the sentence across the wrapped
    line (`ragkit.extractive_units`); the span is now that whole sentence. The question's
    words came from the fragment still ("… about acidic, field and apply?"): the writer
    cuts sentences as the answerer does now, so they come from the sentence's start."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "soil.md").write_text(SOIL)
    golden = tmp_path / "golden.jsonl"
    done = run(env, "questions", "generate", str(docs), "--out", str(golden), "--n", "1",
               "--kinds", "lexical", "--embedder", "none")
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in golden.read_text().splitlines()]
    assert row["question"] == "What does the text state about agricultural, lime and raises?"
    assert row["golden"] == [{"doc_id": "soil.md", "span": (
        "Agricultural lime raises the pH of an\nacidic field; apply about 2 tonnes per hectare "
        "to raise the pH by one unit in a sandy loam.")}]
