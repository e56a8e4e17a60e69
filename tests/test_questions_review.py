"""The review sheet: written for a spreadsheet, read back strictly — every bad row one line
naming the file, the row (the header is row 1) and the field, exit 2, nothing written."""
from __future__ import annotations

import csv
import json

import pytest

from ragkit.cli import main
from ragkit.documents import RagkitError
from ragkit.questions import (accept, question_preview, review_sheet, sheet_preview,
                              write_review)

PASSAGE = ("Opened items are refunded at 80 percent of the price when they come back within "
           "14 days together with the original receipt.")
QUESTIONS = [
    {"id": "gen-001", "question": "How much of the price comes back for an opened item?",
     "kind": "paraphrase", "split": "test", "lang": "en", "answer": "80 percent",
     "golden": [{"doc_id": "refunds.md", "span": "80 percent of the price"}],
     "source": {"doc_id": "refunds.md", "chunk_ids": ["refunds.md#1"], "title": "Refunds",
                "section": "Refunds > Opened items", "page": 2, "passages": [PASSAGE]},
     "generator": "offline stand-in rule"},
    {"id": "gen-002", "question": "What is the refund for a parcel lost at sea?",
     "kind": "unanswerable", "split": "test", "lang": "en", "answer": "", "golden": [],
     "source": {"doc_id": "refunds.md", "chunk_ids": ["refunds.md#1"], "title": "Refunds",
                "section": "Refunds", "passages": [PASSAGE]},
     "generator": "offline stand-in rule"},
    {"id": "gen-003", "question": "What does the text state about -5 % and =SUM?",
     "kind": "lexical", "split": "test", "lang": "en", "answer": "",
     "golden": [{"doc_id": "refunds.md", "span": "-5 % =SUM(A1)"}],
     "source": {"doc_id": "refunds.md", "chunk_ids": ["refunds.md#2"], "title": "Refunds",
                "section": "", "passages": ["Fee: -5 % =SUM(A1) applies."]},
     "generator": "offline stand-in rule"},
]


@pytest.fixture
def files(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    sheet = tmp_path / "review.csv"
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0
    return golden, sheet, tmp_path / "accepted.jsonl"


def _rows(sheet) -> list[dict]:
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _save(sheet, rows: list[dict], delimiter: str = ",") -> None:
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)


def test_the_sheet_shows_source_and_guards_formula_cells(files):
    _, sheet, _ = files
    rows = _rows(sheet)
    assert [(r["id"], r["source"], r["kind"], r["keep"]) for r in rows] == [
        ("gen-001", "refunds.md, p. 2, Refunds > Opened items", "paraphrase", "yes"),
        ("gen-002", "refunds.md, Refunds", "unanswerable", "yes"),
        ("gen-003", "refunds.md", "lexical", "yes")]
    assert rows[2]["answer_span"] == "'-5 % =SUM(A1)"  # shown as text, not run as a formula


def test_a_semicolon_sheet_folds_back_with_the_formula_guard_removed(files, tmp_path):
    golden, sheet, _ = files
    rows = _rows(sheet)
    rows[1]["keep"] = "n"
    _save(sheet, rows, delimiter=";")  # as a spreadsheet in a German locale saves it
    kept = accept(sheet, golden)
    assert [k["id"] for k in kept] == ["gen-001", "gen-003"]
    assert kept[1]["golden"] == [{"doc_id": "refunds.md", "span": "-5 % =SUM(A1)"}]
    # the re-saved sheet is still the review's own: a new review may replace it
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0


BAD = [  # (row index, field, new value, the error after the file name)
    (0, "keep", "maybe", "row 2: field 'keep': expected yes or no, got 'maybe'"),
    (0, "id", "gen-999", "row 2: field 'id': unknown id 'gen-999' (not in {golden})"),
    (1, "id", "gen-001", "row 3: field 'id': 'gen-001' has a row already"),
    (0, "answer_span", "80 per cent of the price",
     "row 2: field 'answer_span': edited span is not verbatim in the question's passage: "
     "'80 per cent of the price'"),
    (0, "answer_span", " ", "row 2: field 'answer_span': empty; a kept answerable question needs "
                         "its span (or mark keep no)"),
    (0, "question", "", "row 2: field 'question': empty"),
]


@pytest.mark.parametrize("index, field, value, message", BAD)
def test_a_bad_row_is_one_line_naming_file_row_and_field(files, capsys, index, field, value,
                                                        message):
    golden, sheet, out = files
    rows = _rows(sheet)
    rows[index][field] = value
    _save(sheet, rows)
    capsys.readouterr()
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"ragkit: error: {sheet}: {message.format(golden=golden)}\n"
    assert not out.exists()


def test_a_span_added_to_an_unanswerable_question_and_a_missing_column_are_refused(files,
                                                                                  capsys):
    golden, sheet, out = files
    rows = _rows(sheet)
    rows[1]["answer_span"] = "80 percent"
    _save(sheet, rows)
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {sheet}: row 3: field 'answer_span': 'gen-002' is unanswerable "
        f"(golden []); leave its span empty\n")
    _save(sheet, [{k: v for k, v in r.items() if k != "keep"} for r in rows])
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {sheet}: row 1: missing column 'keep' (the header must name id, "
        f"question, answer_span, keep)\n")
    assert not out.exists()


def test_rows_left_out_are_warned_about_and_outputs_are_never_someone_elses(files, capsys,
                                                                           tmp_path):
    golden, sheet, out = files
    _save(sheet, _rows(sheet)[:1])
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 0
    assert "2 question(s) of" in capsys.readouterr().err
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["gen-001"]
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert main(["questions", "review", str(golden), "--out", str(notes)]) == 2
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(notes)]) == 2
    assert notes.read_text() == "my notes\n"


def test_write_review_then_accept_unchanged_gives_the_questions_back(tmp_path, files):
    golden, _, _ = files
    sheet = write_review(QUESTIONS, tmp_path / "again.csv")
    assert accept(sheet, golden) == QUESTIONS


def test_eval_refuses_questions_whose_span_is_not_in_the_documents(tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text(PASSAGE + "\n", encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps(QUESTIONS[0]) + "\n" + json.dumps(QUESTIONS[2]) + "\n")
    assert main(["eval", str(docs), "--questions", str(golden), "--embedder", "none"]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {golden}:2: query 'gen-003': field 'golden[0].span': not in "
        f"'refunds.md', even with its white space aside: '-5 % =SUM(A1)'\n")


def test_an_edited_sheet_is_kept_when_review_runs_again_and_a_stale_one_is_replaced(
        files, tmp_path, capsys):
    """Re-running `questions review` (or notebook 08's cell) after the expert marked rows no
    must not put every row back to yes; a sheet for other questions is written afresh."""
    golden, sheet, accepted = files
    rows = _rows(sheet)
    rows[0]["keep"] = "no"
    rows[2]["question"] = "What fee and formula does the text state?"
    _save(sheet, list(reversed(rows)))  # the reviewer also sorted the sheet
    edited = sheet.read_bytes()
    capsys.readouterr()
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0
    assert capsys.readouterr().out.startswith(f"kept {sheet}: it already reviews these 3 "
                                              f"questions (delete it to start over)")
    assert sheet.read_bytes() == edited
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(accepted)]) == 0
    kept = [json.loads(line) for line in accepted.read_text(encoding="utf-8").splitlines()]
    assert [(q["id"], q["question"]) for q in kept] == [
        ("gen-003", "What fee and formula does the text state?"),
        ("gen-002", "What is the refund for a parcel lost at sea?")]
    # other questions get a fresh sheet, and the edited one is moved aside, never lost (it
    # was replaced silently); an untouched sheet is simply written again
    golden2 = tmp_path / "g2.jsonl"
    golden2.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS[:2]), encoding="utf-8")
    capsys.readouterr()
    assert main(["questions", "review", str(golden2), "--out", str(sheet)]) == 0
    aside = sheet.with_name(f"{sheet.stem}.edited-1.csv")
    assert capsys.readouterr().out.startswith(
        f"wrote 2 rows to {sheet}; the sheet a reviewer had edited there, for other questions, "
        f"was moved to {aside.name}: mark keep")
    assert aside.read_bytes() == edited
    assert aside.with_name(aside.name + ".sha256").is_file()
    assert review_sheet(QUESTIONS[:2], sheet) == (sheet, "written")
    assert [(r["id"], r["keep"]) for r in _rows(sheet)] == [("gen-001", "yes"), ("gen-002", "yes")]
    assert review_sheet(QUESTIONS[:2], sheet) == (sheet, "written")
    moved = [{**q, "source": {**q["source"], "doc_id": "other.md"}} for q in QUESTIONS[:2]]
    rows = _rows(sheet)
    rows[0]["keep"] = "no"
    _save(sheet, rows)
    assert review_sheet(moved, sheet) == (sheet, "written; the sheet a reviewer had edited "
                                          "there, for other questions, was moved to "
                                          "review.edited-2.csv")  # same ids, other documents
    assert [r["keep"] for r in _rows(sheet)] == ["yes", "yes"]
    # regenerated: same ids and sources, new questions — the old edits must not pass as the
    # reviewer's edits of the new questions
    rows = _rows(sheet)
    rows[0]["keep"] = "no"
    _save(sheet, rows)
    regenerated = [{**q, "question": q["question"] + " (rewritten)"} for q in moved]
    assert review_sheet(regenerated, sheet)[1].endswith("moved to review.edited-3.csv")
    assert [r["question"] for r in _rows(sheet)] == [q["question"] for q in regenerated]
    assert [r["keep"] for r in _rows(tmp_path / "review.edited-3.csv")] == ["no", "yes"]


@pytest.mark.parametrize("change, message", [
    ({"golden": ["refund"]}, "line 1: field 'golden[0]': expected an object with 'doc_id'"),
    ({"golden": [None]}, "line 1: field 'golden[0]': expected an object with 'doc_id'"),
    ({"golden": [{"doc_id": "refunds.md", "span": 5}]},
     "line 1: field 'golden[0].span': expected str, got int"),
    ({"source": "notadict"}, "line 1: field 'source': expected dict, got str"),
    ({"source": {"passages": 5}}, "line 1: field 'source.passages': expected a list of texts"),
])
def test_a_bad_golden_line_is_one_error_line_in_review_and_accept(tmp_path, capsys, change,
                                                                  message):
    """Both commands once ended in an AttributeError or TypeError traceback here."""
    golden, sheet = tmp_path / "bad.jsonl", tmp_path / "review.csv"
    golden.write_text(json.dumps({**QUESTIONS[0], **change}) + "\n", encoding="utf-8")
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 2
    assert capsys.readouterr().err == f"ragkit: error: {golden}:{message.split(' ', 1)[1]}\n"
    assert not sheet.exists()


def test_a_long_cell_the_sheet_was_written_with_is_read_back(tmp_path):
    """`review` wrote a 150 KB question and `accept` then failed on csv's 128 KB field limit."""
    long = dict(QUESTIONS[1], question="Why " + "very " * 30_000 + "long?")
    golden, sheet = tmp_path / "long.jsonl", tmp_path / "review.csv"
    golden.write_text(json.dumps(long) + "\n", encoding="utf-8")
    write_review([long], sheet)
    assert [q["question"] for q in accept(sheet, golden)] == [long["question"]]


def test_a_sheet_with_a_column_twice_is_refused_not_read_by_its_last_copy(files, capsys):
    golden, sheet, accepted = files
    rows = sheet.read_text(encoding="utf-8-sig").splitlines()
    sheet.write_text("\n".join([rows[0] + ",keep"] + [r + ",no" for r in rows[1:]]) + "\n",
                     encoding="utf-8-sig")
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(accepted)]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {sheet}: row 1: column 'keep' appears "
                                       f"twice; keep one\n")


def test_a_sheet_without_a_stamp_is_moved_aside_without_being_called_edited(files):
    golden, sheet, _ = files
    sheet.with_name(sheet.name + ".sha256").unlink()
    how = review_sheet(QUESTIONS[:2], sheet)[1]
    assert how == ("written; the sheet there, which no stamp says was written for these "
                   "questions, was moved to review.edited-1.csv")


def test_a_notes_file_opening_with_blank_lines_is_never_taken_for_ours(files, capsys, tmp_path):
    """Five blank lines made a user's notes a "golden file" (accept replaced them); one made a
    draft a "review sheet" (review moved it aside)."""
    golden, sheet, _ = files
    notes, draft = tmp_path / "notes.md", tmp_path / "thesis.txt"
    notes.write_text("\n\n\n\n\nMy important notes\n")
    draft.write_text("\nMy thesis draft\n")
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(notes)]) == 2
    assert main(["questions", "review", str(golden), "--out", str(draft)]) == 2
    assert notes.read_text() == "\n\n\n\n\nMy important notes\n"
    assert draft.read_text() == "\nMy thesis draft\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "golden.jsonl", "notes.md", "review.csv", "review.csv.sha256", "thesis.txt"]


@pytest.mark.parametrize("stamp", ["link", "file", "folder", "fifo"])
def test_the_sheets_stamp_is_never_written_through_a_link_or_over_a_users_file(
        files, capsys, tmp_path, stamp):
    """The stamp `<sheet>.sha256` was a plain write: through a symlink it replaced the file
    linked to, over a user's file silently; a folder there was a traceback, a FIFO a hang."""
    import os
    golden = files[0]
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "new.csv.sha256"
    {"link": lambda: target.symlink_to(victim), "file": lambda: target.write_text("mine\n"),
     "folder": target.mkdir, "fifo": lambda: os.mkfifo(target)}[stamp]()
    assert main(["questions", "review", str(golden), "--out", str(tmp_path / "new.csv")]) == 2
    assert "new.csv.sha256" in capsys.readouterr().err
    assert not (tmp_path / "new.csv").exists()  # refused before the sheet is written
    assert victim.read_text() == "precious\n"
    if stamp == "file":
        assert target.read_text() == "mine\n"


def test_a_question_opening_with_a_quote_and_a_sign_comes_back_as_written(tmp_path):
    """`'-5 °C' or colder …` lost its leading quote on an untouched sheet's round trip."""
    question = dict(QUESTIONS[0], question="'-5 °C' or colder: is an opened item refunded?")
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps(question) + "\n", encoding="utf-8")
    write_review([question], tmp_path / "r.csv")
    back = accept(tmp_path / "r.csv", golden)[0]["question"]
    assert back == " ".join(question["question"].split())  # white space as accept reads it


def test_a_spreadsheets_empty_rows_are_skipped(files, tmp_path):
    golden, sheet, _ = files
    with sheet.open("a", encoding="utf-8", newline="") as handle:
        handle.write(",,,,,,,\r\n,,,,,,,\r\n")
    assert [q["id"] for q in accept(sheet, golden)] == ["gen-001", "gen-002", "gen-003"]


def test_a_whole_document_label_survives_review_and_accept_and_is_scored(tmp_path, capsys):
    """accept wrote "span": "" for a label without a span, which eval then refused."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The cat sat on the mat. Cats like warm places.\n")
    (docs / "b.txt").write_text("Dogs bark at the mailman every morning.\n")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "q1", "question": "Where did the cat sit?",
                                  "golden": [{"doc_id": "a.txt"}]}) + "\n")
    sheet, out = tmp_path / "review.csv", tmp_path / "accepted.jsonl"
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 0
    assert json.loads(out.read_text())["golden"] == [{"doc_id": "a.txt"}]
    assert main(["eval", str(docs), "--questions", str(out), "--mode", "bm25", "--embedder",
                 "none", "--k", "2"]) == 0


def test_an_empty_stamp_is_no_stamp(files, capsys):
    golden, sheet, _ = files
    (sheet.parent / "review.csv.sha256").write_text("")  # a crash of the old plain write
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0


def test_a_second_span_added_to_a_one_span_question_is_refused_not_dropped(files, capsys):
    """An expert's answer_span_2 on a question with one golden span was dropped without a
    word (exit 0), even a span found nowhere in the passage."""
    golden, sheet, out = files
    rows = _rows(sheet)
    rows[0]["answer_span_2"] = "bogus span added"
    _save(sheet, rows)
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {sheet}: row 2: field 'answer_span_2': 'gen-001' has 1 golden "
        f"span(s); a second span belongs to a question over two chunks — leave it empty, or "
        f"write a new question for it\n")
    assert not out.exists()


def test_the_source_column_shows_an_ids_escape_sequence_escaped(tmp_path):
    """A document id with ESC ] 0 ; … BEL went raw into review.csv's source column: `cat`
    retitled the terminal. The id column, matched on accept, is the generated question id."""
    question = {**QUESTIONS[0], "source": {**QUESTIONS[0]["source"],
                                          "doc_id": "x\x1b]0;pwned\x07y.md"}}
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps(question) + "\n", encoding="utf-8")
    sheet = tmp_path / "review.csv"
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0
    text = sheet.read_text(encoding="utf-8-sig")
    assert "\x1b" not in text and "\x07" not in text
    assert _rows(sheet)[0]["source"].startswith("x\\x1b]0;pwned\\x07y.md, p. 2")


def test_accept_refuses_to_write_over_its_own_golden_file(files, capsys):
    """It replaced the generated set with the kept questions: those marked no were lost, and
    accepting the same sheet again failed on their ids."""
    golden, sheet, _ = files
    before = golden.read_bytes()
    same = golden.parent / "." / golden.name
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(same)]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {same}: is the input --golden; its "
                                       f"questions marked no or without a row would be lost; "
                                       f"choose another --out\n")
    assert golden.read_bytes() == before


@pytest.mark.parametrize("rows", ["header", "all no"])
def test_accept_that_keeps_no_question_is_an_error_and_writes_nothing(files, capsys, rows):
    """A sheet of its header alone (or every row marked no) wrote a 0-byte golden file with
    exit 0, which `eval --questions` then refused."""
    golden, sheet, out = files
    kept = _rows(sheet)
    if rows == "header":
        sheet.write_text(",".join(kept[0]) + "\n", encoding="utf-8")
    else:
        _save(sheet, [dict(row, keep="no") for row in kept])
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ragkit: error: {sheet}: no row is marked keep yes (0 of 3 questions kept); nothing "
        f"was written to {out}")
    assert not out.exists()


@pytest.mark.parametrize("lead", ["\t=HYPERLINK(\"http://x.example\")", "\r=1+1", "\0=1+1"])
def test_a_cell_opening_with_a_tab_return_or_nul_before_a_formula_is_guarded_too(tmp_path,
                                                                                  lead):
    """A spreadsheet that drops a cell's leading white space ran "\\t=HYPERLINK(…)" as a
    formula; the guard's quote comes off again on accept."""
    question = dict(QUESTIONS[0], question=lead + " is it refunded?", kind=lead + "kind")
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps(question) + "\n", encoding="utf-8")
    write_review([question], tmp_path / "r.csv")
    (row,) = _rows(tmp_path / "r.csv")
    assert [row[c] for c in ("question", "kind")] == [
        "'" + lead + " is it refunded?", "'" + lead + "kind"]
    back = accept(tmp_path / "r.csv", golden)[0]["question"]
    assert back == " ".join(question["question"].split())  # white space as accept reads it


def test_the_sheet_preview_shows_each_span_on_one_line(tmp_path):
    """Notebook 08's preview of the review sheet showed "The refractometer in the\\nhoney
    house …": a hard-wrapped span's line break, as pandas prints one. The preview puts every
    cell on one line; the sheet keeps the span exactly as the document has it."""
    wrapped = "The refractometer in the\nhoney house  is checked each spring."
    asked = {**QUESTIONS[0], "question": "Where is the refractometer\nkept?",
             "golden": [{"doc_id": "honey.md", "span": wrapped}]}
    sheet = write_review([asked, QUESTIONS[1]], tmp_path / "review.csv")
    preview = sheet_preview(sheet, 1)
    assert list(preview.columns) == ["id", "question", "answer_span", "answer_span_2", "source",
                                     "kind", "keep", "notes"]
    assert preview.to_dict("records") == [{
        "id": "gen-001", "question": "Where is the refractometer kept?",
        "answer_span": "The refractometer in the honey house is checked each spring.",
        "answer_span_2": "", "source": "refunds.md, p. 2, Refunds > Opened items",
        "kind": "paraphrase", "keep": "yes", "notes": ""}]
    assert _rows(sheet)[0]["answer_span"] == wrapped


def test_accept_from_python_names_the_sheet_or_golden_set_it_expects(files):
    """From Python, a folder given for the sheet or the golden set said only "review: a
    folder, not a file"; the line now says what was expected and where it is, as the
    command line's did for the sheet."""
    golden, sheet, _ = files
    folder = sheet.parent
    with pytest.raises(RagkitError) as raised:
        accept(folder, golden)
    assert str(raised.value) == f"{folder}: a folder, not a file; its review sheet: {sheet}"
    with pytest.raises(RagkitError) as raised:
        accept(folder / "gone.csv", golden)
    assert str(raised.value) == (f"{folder / 'gone.csv'}: no such file; the review sheet "
                                 f"beside it: {sheet} (renamed?)")
    with pytest.raises(RagkitError) as raised:
        accept(sheet, folder)
    assert str(raised.value) == (f"{folder}: a folder, not a file; expected the golden "
                                 f"questions JSONL file (golden.jsonl in it), the one the "
                                 f"review sheet was written from")


def test_accept_on_the_command_line_names_a_golden_folder_too(files, capsys):
    golden, sheet, out = files
    assert main(["questions", "accept", str(sheet), "--golden", str(golden.parent),
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"ragkit: error: {golden.parent}: a folder, not a file; expected the golden questions "
        f"JSONL file (golden.jsonl in it), the one the review sheet was written from\n")
    assert not out.exists()


def test_the_generated_questions_table_shows_each_span_on_one_line():
    """Notebook 08's table of generated questions showed a span of the API reference's JSON
    example as `"id": "whk_51Ba",\\n          "url": …`: pandas prints a line break in a cell
    as a literal `\\n`. Each cell is one line there; the records keep the span exact."""
    span = ('"id": "whk_51Ba",\n      "url": "https://hooks.shop.example/fernway",\n'
            '      "failures_24h": 0')
    webhook = {**QUESTIONS[0], "kind": "contextual", "question": "In Fernway Commerce API,\n"
               "what is stated about whk_51Ba?",
               "golden": [{"doc_id": "manuals/fernway-api-reference.md", "span": span}],
               "source": {"doc_id": "manuals/fernway-api-reference.md",
                          "section": "Webhooks > List subscriptions"}}
    table = question_preview([webhook, QUESTIONS[1]])
    assert table.index.name == "kind" and list(table.columns) == [
        "question", "answer span", "source"]
    assert table.reset_index().to_dict("records") == [
        {"kind": "contextual", "question": "In Fernway Commerce API, what is stated about "
         "whk_51Ba?", "answer span": '"id": "whk_51Ba", "url": '
         '"https://hooks.shop.example/fernway", "failures_24h": 0',
         "source": "manuals/fernway-api-reference.md, Webhooks > List subscriptions"},
        {"kind": "unanswerable", "question": "What is the refund for a parcel lost at sea?",
         "answer span": "(none: unanswerable)", "source": "refunds.md, Refunds"}]
    assert webhook["golden"][0]["span"] == span  # a view: the record is not touched
    assert list(question_preview([]).columns) == ["question", "answer span", "source"]


@pytest.mark.parametrize("delimiter", [",", ";"])
def test_a_sheet_saved_as_latin_1_names_the_row_and_column_of_its_first_bad_byte(
        files, capsys, delimiter):
    """A spreadsheet saved as Latin-1 was refused as "not UTF-8 text", no row or column."""
    golden, sheet, accepted = files
    rows = _rows(sheet)
    rows[1]["notes"] = "a note\non two lines"  # a cell over two lines: rows are records
    rows[2]["question"] = "What does the text state about -5 % in the café?"
    _save(sheet, rows, delimiter)
    sheet.write_bytes(sheet.read_text(encoding="utf-8-sig").encode("latin-1"))
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(accepted)]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {sheet}: row 4, field 'question': not "
                                       f"UTF-8 text (invalid continuation byte); save the "
                                       f"sheet as CSV UTF-8\n")
    assert not accepted.exists()


def test_a_sheet_with_a_reviewers_own_column_is_kept_and_read(files, capsys):
    """An added `reviewer` column made the sheet "not a review sheet": `questions review`
    (and notebook 08's cell) refused it and advised deleting it — the expert's review."""
    golden, sheet, accepted = files
    rows = _rows(sheet)
    rows[0]["keep"] = "no"
    _save(sheet, [{**row, "reviewer": "ana"} for row in rows])
    edited = sheet.read_bytes()
    assert review_sheet(QUESTIONS, sheet) == (sheet, "kept")
    assert sheet.read_bytes() == edited
    assert [q["id"] for q in accept(sheet, golden)] == ["gen-002", "gen-003"]


@pytest.mark.parametrize("typo, column", [("answer_span 2", "answer_span_2"), ("note", "notes"),
                                          ("answer span", "answer_span")])
def test_a_misspelt_column_is_named_not_its_edits_dropped(files, capsys, typo, column):
    """`answer_span 2` and `note` were read as strangers: their edits were lost, exit 0."""
    golden, sheet, accepted = files
    rows = [{(typo if k == column else k): v for k, v in row.items()} for row in _rows(sheet)]
    _save(sheet, rows)
    assert main(["questions", "accept", str(sheet), "--golden", str(golden), "--out",
                 str(accepted)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ragkit: error: {sheet}: row 1: column '{typo}' is not one the sheet reads: is it a "
        f"misspelling of '{column}'? (its edits would be lost)")
    assert not accepted.exists()


def test_a_relabelled_kind_and_an_edited_span_reach_the_accepted_record(tmp_path):
    """The `kind` column's edits were silently ignored, and after a span edit the record's
    `answer` — the stand-in's is its span — still held the old span."""
    first = {**QUESTIONS[0], "answer": "80 percent of the price"}
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in [first, *QUESTIONS[1:]]))
    sheet = tmp_path / "review.csv"
    assert main(["questions", "review", str(golden), "--out", str(sheet)]) == 0
    rows = _rows(sheet)
    rows[0].update(kind="lexical", answer_span="80 percent")
    _save(sheet, rows)
    kept = accept(sheet, golden)
    assert (kept[0]["kind"], kept[0]["answer"], kept[0]["golden"][0]["span"]) == (
        "lexical", "80 percent", "80 percent")
    assert kept[1]["kind"] == "unanswerable"


@pytest.mark.parametrize("index, kind", [(0, "unanswerable"), (0, "tabel"), (1, "lexical")])
def test_a_kind_that_does_not_fit_the_questions_spans_is_refused(files, capsys, index, kind):
    golden, sheet, accepted = files
    rows = _rows(sheet)
    was = rows[index]["kind"]
    rows[index]["kind"] = kind
    _save(sheet, rows)
    with pytest.raises(RagkitError) as caught:
        accept(sheet, golden)
    assert str(caught.value) == (
        f"{sheet}: row {index + 2}: field 'kind': {kind!r} cannot replace {was!r} (one of "
        f"lexical, paraphrase, contextual; unanswerable and multi-chunk follow the question's "
        f"spans)")


@pytest.mark.parametrize("golden", [[], [{"doc_id": "refunds.md", "span": "80 percent"},
                                        {"doc_id": "refunds.md", "span": "the price"}]])
def test_an_unlabelled_question_of_no_span_or_two_keeps_what_its_spans_make_it(tmp_path,
                                                                               golden):
    """A question without a `kind` (a hand-written one) took any kind from the sheet: its
    spans, not a label, make it unanswerable or multi-chunk."""
    question = {key: value for key, value in QUESTIONS[0].items() if key != "kind"}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({**question, "golden": golden}) + "\n")
    sheet = tmp_path / "review.csv"
    assert main(["questions", "review", str(path), "--out", str(sheet)]) == 0
    rows = _rows(sheet)
    rows[0]["kind"] = "lexical"
    _save(sheet, rows)
    with pytest.raises(RagkitError, match=r"row 2: field 'kind': 'lexical' cannot replace ''"):
        accept(sheet, path)
