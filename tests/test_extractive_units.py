"""What the offline extractive answerer quotes: a whole sentence across wrapped lines and
abbreviations, a heading with the sentence it introduces, a code comment, each sentence once;
and the citation of exactly the quoted blocks."""
from __future__ import annotations

import pytest

from ragkit.answer import answer
from ragkit.assemble import assemble, blocks
from ragkit.documents import Chunk
from ragkit.extractive import Params, extract
from ragkit.extractive_units import readings, shown, units
from ragkit.llm import LLM
from tests.word_embedder import WordEmbedder

DBSCAN = Chunk("dbscan#0", "cluster/DBSCAN.md",
               "# DBSCAN\n\n### eps : float, default=0.5\n\n"
               "The maximum distance between two samples for one to be considered\n"
               "as in the neighborhood of the other. This is not a maximum bound\n"
               "on the distances of points within a cluster.\n\n"
               "### min_samples : int, default=5\n\n"
               "The number of samples in a neighborhood for a point to be considered\n"
               "as a core point.\n", metadata={"title": "DBSCAN", "section": []})
WORDS = WordEmbedder(["maximum", "distance", "samples", "neighborhood", "default", "min_samples",
                      "eps", "point", "core", "bulky", "collected", "items", "shipping",
                      "paid", "parcel", "refunds", "accepted", "days", "delivery"])


@pytest.fixture
def offline(monkeypatch) -> LLM:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    import ragkit  # noqa: F401  (registers the offline backend)
    return LLM(cache=False)


def test_units_are_sentences_across_wrapped_lines_and_headings_come_with_their_sentence():
    assert [(u.start, u.end, shown(u.text), u.heading) for u in units(DBSCAN.text)] == [
        (0, 1, "DBSCAN", True),
        (1, 2, "eps : float, default=0.5", True),
        (2, 4, "The maximum distance between two samples for one to be considered as in the "
               "neighborhood of the other.", False),
        (4, 6, "This is not a maximum bound on the distances of points within a cluster.",
         False),
        (6, 7, "min_samples : int, default=5", True),
        (7, 9, "The number of samples in a neighborhood for a point to be considered as a "
               "core point.", False),
        (1, 4, "eps : float, default=0.5 The maximum distance between two samples for one "
               "to be considered as in the neighborhood of the other.", False),
        (6, 9, "min_samples : int, default=5 The number of samples in a neighborhood for a "
               "point to be considered as a core point.", False)]


def test_a_capitalised_line_a_list_item_and_a_blank_line_end_a_unit():
    text = "Refunds go to the card\nYou paid with.\n- first item\n- second item\n\nlater text"
    assert [shown(u.text) for u in units(text)] == [
        "Refunds go to the card", "You paid with.", "- first item", "- second item",
        "later text"]


def test_a_sentence_wrapped_after_a_colon_is_one_unit_and_a_list_under_it_is_not():
    """"… hold the button for:\nfive seconds, then release it." was quoted as its first line
    alone, a sentence cut before the answer; a list or a capitalised line after a colon
    starts a unit of its own."""
    text = ("To reset the unit, hold the button for:\nfive seconds, then release it.\n"
            "Supported modes:\n- eco\n- fast\nNote:\nThe fan keeps running.\n")
    assert [shown(u.text) for u in units(text)] == [
        "To reset the unit, hold the button for: five seconds, then release it.",
        "Supported modes:", "- eco", "- fast", "Note:", "The fan keeps running."]


def test_full_width_stops_end_korean_sentences():
    """A Korean file typed with full-width punctuation (IME full-width mode): "．", "！" and
    "？" ended no sentence, so two sentences were one quote."""
    text = "올해 총 예산은 １２３，０００，０００원이다． 장비 구입비는 ４５％를 차지한다．"
    assert [shown(u.text) for u in units(text)] == [
        "올해 총 예산은 １２３，０００，０００원이다．", "장비 구입비는 ４５％를 차지한다．"]
    assert [shown(u.text) for u in units("정말인가요？ 네！ 그렇다．")] == [
        "정말인가요？", "네！", "그렇다．"]

@pytest.mark.parametrize("first, second", [
    ("주문한 상품은 결제 완료 후 영업일 기준 2일 이내에", "출고되며, 제주는 하루가 더 걸립니다."),
    ("주문하신 상품이", "품절된 경우 3일 이내에 환불됩니다."),
    ("반품 신청은 고객센터나", "앱에서 할 수 있습니다."),
    ("초기화 버튼을 누르면", "모든 설정이 삭제됩니다."),
    ("주말과 공휴일에도", "고객센터 상담이 가능합니다."),
    ("수집된 정보는 회사의", "개인정보 처리방침에 따라 보관됩니다."),
    ("세척 후에는 직사광선을 피해 서늘하게", "보관하세요."),
    ("포트 번호는 docker-compose.yaml 파일에서 변경할 수", "있습니다."),
    ("백업 보관 개수는", "HARBOR_BACKUP_KEEP 환경 변수로 바꿀 수 있습니다."),
])
def test_a_wrapped_korean_line_joins_after_a_particle_or_connective_ending(first, second):
    """Korean has no lower case, so a hard-wrapped Korean sentence was never joined: the
    answer quoted "… 영업일 기준 2일 이내에", half a sentence."""
    assert [shown(u.text) for u in units(f"{first}\n{second}\n")] == [f"{first} {second}"]


def test_a_korean_line_ending_in_a_full_stop_a_tab_row_or_before_a_list_item_ends_its_unit():
    text = ("모두 정상입니다.\n다음 문단입니다.\n서울\t김민서\n부산\t이지도\n"
            "다음 항목에\n- 해당하면 안 됩니다.\n")
    assert [shown(u.text) for u in units(text)] == [
        "모두 정상입니다.", "다음 문단입니다.", "서울\t김민서", "부산\t이지도", "다음 항목에",
        "- 해당하면 안 됩니다."]


def test_a_one_word_answer_is_not_taken_for_an_abbreviation():
    text = "**Can I install software myself?** No. Standard accounts have no administrator rights."
    assert [shown(u.text) for u in units(text)] == [
        "**Can I install software myself?** No.",
        "Standard accounts have no administrator rights."]


def test_the_wrapped_sentence_is_quoted_whole_and_cited_as_its_two_blocks(offline):
    prose = Chunk("dbscan#1", "cluster/dbscan.md",
                  "Each cluster needs a core point.\n"
                  "The maximum distance between two samples for one to be considered\n"
                  "as in the neighborhood of the other. This is not a maximum bound\n"
                  "on the distances of points within a cluster.\n",
                  metadata={"title": "DBSCAN", "section": []})
    question = "What is the maximum distance between two samples in a neighborhood?"
    result = answer(question, [(prose.id, 1.0)], [prose], llm=offline, embedder=WORDS)
    assert result.text.startswith("The maximum distance between two samples for one to be "
                                  "considered as in the neighborhood of the other. [1]")
    first = result.citations[0]
    assert (first.start_block_index, first.end_block_index) == (1, 3)
    assert first.cited_text == ("The maximum distance between two samples for one to be "
                                "considered\nas in the neighborhood of the other. ")
    assert first.cited_text in prose.text


def test_a_heading_that_holds_the_answer_is_quoted_with_its_sentence():
    found = extract("What is the default min_samples?",
                    list(assemble([(DBSCAN.id, 1.0)], [DBSCAN])), WORDS, Params(threshold=0.0))
    first = found.quotes[0]
    assert first.titled and shown(first.text, first.clause, first.titled) == (
        "min_samples : int, default=5 — The number of samples in a neighborhood for a point "
        "to be considered as a core point.")  # run together, the heading read as its start
    assert (first.block, first.stop) == (6, 9)
    assert first.text.startswith("### min_samples : int, default=5\n\n")


def test_a_sentence_two_overlapping_chunks_share_is_quoted_once():
    one = Chunk("refund#0", "refund", "Refunds are accepted within 21 days of delivery. "
                "Keep the receipt.", metadata={"title": "Refunds", "section": []})
    two = Chunk("refund#1", "refund", "Refunds are accepted within 21 days of delivery. "
                "Refunds go to the card you paid with. Parcels travel by road.",
                metadata={"title": "Refunds", "section": []})
    found = extract("Within how many days are refunds accepted?",
                    list(assemble([(one.id, 2.0), (two.id, 1.0)], [one, two])), WORDS)
    texts = [shown(q.text) for q in found.quotes]
    assert texts[0] == "Refunds are accepted within 21 days of delivery."
    assert len(texts) == len(set(texts)) == 3


def test_a_code_comment_is_quotable_and_a_lone_bracket_is_not():
    code = Chunk("returns#0", "shopcore/returns.py",
                 "def refund_shipping(order):\n"
                 "    # Shipping is paid back only if the parcel never left the warehouse.\n"
                 "    return (\n        order.status == 'paid'\n    )\n",
                 metadata={"title": "shopcore/returns.py", "section": []})
    found = extract("Is shipping paid back for a returned parcel?",
                    list(assemble([(code.id, 1.0)], [code])), WORDS)
    assert found.quotes[0].text.strip() == (
        "# Shipping is paid back only if the parcel never left the warehouse.")
    assert all(q.text.strip() not in (")", "return (") for q in found.quotes)


def test_a_quoted_code_comment_keeps_its_hash_in_the_answer_and_a_heading_loses_its_own(
        offline):
    """In a source file "#" opens a comment: the answer showed the comment's words alone, read
    as code; a Markdown heading's "#" marks still go."""
    code = Chunk("returns#0", "shopcore/returns.py",
                 "def refund_shipping(order):\n"
                 "    # Shipping is paid back only if the parcel never left the warehouse.\n"
                 "    return order.status == 'paid'\n",
                 metadata={"title": "shopcore/returns.py", "section": []})
    notes = Chunk("returns#1", "returns.md", "# Shipping is paid back\n\nOnly for parcels "
                  "that never left the warehouse.\n", metadata={"title": "Returns", "section": []})
    said = answer("Is shipping paid back for a returned parcel?", [(code.id, 1.0)], [code],
                  llm=offline, embedder=WORDS)
    assert said.text.startswith("# Shipping is paid back only if the parcel never left the "
                                "warehouse. [1]")
    assert shown(notes.text, titled=True) == ("Shipping is paid back — Only for parcels that "
                                              "never left the warehouse.")


LEDS = Chunk("eg400#14", "manuals/eg400.md",
             "## Appendix A. Status LED codes\n\n| LED | State | Meaning |\n| --- | --- | --- |\n"
             "| PWR | green | Power is present on at least one input |\n"
             "| STATUS | blinking amber | A destination cannot be reached; data is being buffered |\n"
             "| STATUS | red | Hardware fault; contact support |\n",
             metadata={"title": "EG-400 manual", "section": []})


def test_a_tables_header_row_is_never_quoted_nor_offered_under_the_heading_above_it():
    """The shipped manual's LED question was answered with its row and "Appendix A. Status LED
    codes — | LED | State | Meaning |": the header row under the heading, read as a sentence."""
    found = units(LEDS.text)
    assert [(u.text.strip(), u.heading) for u in found if not u.titled] == [
        ("## Appendix A. Status LED codes", True), ("| LED | State | Meaning |", True),
        ("| --- | --- | --- |", True),
        ("| PWR | green | Power is present on at least one input |", False),
        ("| STATUS | blinking amber | A destination cannot be reached; data is being buffered |",
         False), ("| STATUS | red | Hardware fault; contact support |", False)]
    assert not [u for u in found if u.titled]  # no heading over a prose sentence here
    words = WordEmbedder(["status", "led", "blinking", "amber", "mean", "destination", "state"])
    quotes = [shown(q.text) for q in extract("What does a blinking amber STATUS LED mean?",
                                             list(assemble([(LEDS.id, 1.0)], [LEDS])), words,
                                             Params(threshold=0.0)).quotes]
    assert quotes[0] == ("| STATUS | blinking amber | A destination cannot be reached; data is "
                         "being buffered |")
    assert not [q for q in quotes if "Meaning" in q or "---" in q], quotes
    # a bare "---" (a rule, a setext underline) is no table: the line above stays a sentence
    assert not any(u.heading for u in units("Text | with a pipe.\n---\nMore text.\n"))


RENTAL = ("Every tool needs a deposit.\n\n| **Tool** | Deposit \\| cash | Loan period |\n"
          "|:---|---:|---|\n| Chainsaw | 50 euros | 2 days |\n| Ladder | 10 euros | |\n")


def _shown_units(text: str, name: str = "rental.md") -> list[str]:
    """Each quotable unit of the passage `text` of the file `name` as it is read and shown."""
    found = [u for u in units(text) if not u.heading and not u.titled]
    return readings(name, "", blocks(text), found)


def test_a_table_row_is_shown_under_its_columns_names():
    """"| Chainsaw | 50 euros | 2 days |" did not say which number is the deposit. A header
    cell's emphasis is no part of its name; an empty cell is left out."""
    assert _shown_units(RENTAL) == [
        "Every tool needs a deposit.\n\n",
        "Tool: Chainsaw | Deposit | cash: 50 euros | Loan period: 2 days",
        "Tool: Ladder | Deposit | cash: 10 euros"]


def test_a_row_without_its_header_in_the_passage_or_with_other_cells_stays_as_written():
    rows = "| Chainsaw | 50 euros |\n| Ladder | 10 euros |\n"  # header in another chunk
    assert _shown_units(rows) == ["| Chainsaw | 50 euros |\n", "| Ladder | 10 euros |\n"]
    odd = "| Tool | Deposit |\n|---|---|\n| Chainsaw | 50 euros | extra |\n"
    assert _shown_units(odd) == ["| Chainsaw | 50 euros | extra |\n"]
    blank = "| | |\n|---|---|\n| Chainsaw | 50 euros |\n"  # a header of no names
    assert _shown_units(blank) == ["| Chainsaw | 50 euros |\n"]
    assert _shown_units(RENTAL, "rental.py") == [  # a source file's lines are its own
        u.text for u in units(RENTAL, True) if not u.heading and not u.titled]


def test_a_row_of_dashes_inside_a_table_is_no_rule_and_the_row_above_it_no_header():
    """A group separator, `| --- | --- |` under a body row, made that row the "header":
    "Hedge trimmer: Wheelbarrow | 20 euros: 5 euros", and the row under it lost its label."""
    text = ("| Tool | Deposit |\n|---|---|\n| Hedge trimmer | 20 euros |\n| --- | --- |\n"
            "| Wheelbarrow | 5 euros |\n| - | - |\n| Ladder | 10 euros |\n")
    assert _shown_units(text) == ["Tool: Hedge trimmer | Deposit: 20 euros",
                                  "Tool: Wheelbarrow | Deposit: 5 euros",
                                  "Tool: Ladder | Deposit: 10 euros"]  # a dash row: no quote


def test_a_row_with_a_sentence_end_in_a_cell_is_one_unit_and_the_rows_below_keep_labels():
    """"| Hedge trimmer | 20 euros. Cash only | 1 week |" was cut at the sentence end: neither
    half was labelled, nor any row below it."""
    text = ("| Tool | Deposit | Loan period |\n|---|---|---|\n"
            "| Hedge trimmer | 20 euros. Cash only | 1 week |\n"
            "| Chainsaw | 50 euros incl. VAT | 2 days |\n| Ladder | 10 euros | 1 week |\n")
    assert _shown_units(text) == [
        "Tool: Hedge trimmer | Deposit: 20 euros. Cash only | Loan period: 1 week",
        "Tool: Chainsaw | Deposit: 50 euros incl. VAT | Loan period: 2 days",
        "Tool: Ladder | Deposit: 10 euros | Loan period: 1 week"]


def test_a_table_in_a_code_block_is_quoted_as_written():
    """A Markdown syntax example in a fence, or indented four spaces, was shown rewritten
    ("Tool: Chainsaw | …") and answered the deposit question from the example."""
    fenced = "```markdown\n| Tool | Deposit |\n|---|---|\n| Chainsaw | 50 euros |\n```\n"
    indented = "    | Tool | Deposit |\n    |---|---|\n    | Chainsaw | 50 euros |\n"
    for text in (fenced, indented):
        assert not [u for u in _shown_units(text) if "Tool:" in u], text


def test_the_answer_shows_a_row_under_its_columns_and_cites_the_row_as_written(offline):
    """The quote reads "LED: STATUS | State: blinking amber | Meaning: …"; its citation is the
    row's exact text, so the source still shows the table as the document has it."""
    words = WordEmbedder(["status", "blinking", "amber"])
    result = answer("What does a blinking amber STATUS LED mean?", [(LEDS.id, 1.0)], [LEDS],
                    llm=offline, embedder=words)
    assert result.text.startswith("LED: STATUS | State: blinking amber | Meaning: A destination "
                                  "cannot be reached; data is being buffered [1]")
    assert result.citations[0].cited_text == (
        "| STATUS | blinking amber | A destination cannot be reached; data is being buffered |\n")
    # declined under the threshold, the quote it names is shown as the answer would show it
    declined = extract("What does a blinking amber STATUS LED mean?",
                       list(assemble([(LEDS.id, 1.0)], [LEDS])), words, Params(threshold=1.01))
    assert declined.declined and declined.why.endswith(
        "it would have quoted first: 'LED: STATUS | State: blinking amber | Meaning: A "
        "destination cannot be reached; data is being buffered'")


def test_a_sentence_with_an_abbreviation_is_one_quote():
    text = ("Bulky items, e.g. sofas and beds, are collected within 10 days. "
            "Small items go by post.")
    chunk = Chunk("bulky#0", "bulky", text, metadata={"title": "Collection", "section": []})
    found = extract("How many days until bulky items are collected?",
                    list(assemble([(chunk.id, 1.0)], [chunk])), WORDS)
    assert shown(found.quotes[0].text) == (
        "Bulky items, e.g. sofas and beds, are collected within 10 days.")


def test_a_heading_joined_to_its_sentence_does_not_make_retrieval_look_strong():
    """The heading pair is quoted, but the decline asks whether a sentence is close to the
    question: here none shares a listed word with it (cosine 0), the pair 2 / (3 · √2)."""
    question = "What is the default min_samples?"
    passages = list(assemble([(DBSCAN.id, 1.0)], [DBSCAN]))
    quoted = extract(question, passages, WORDS, Params(threshold=0.0)).quotes[0]
    assert shown(quoted.text).startswith("min_samples : int, default=5")
    assert quoted.cosine == pytest.approx(2 / (3 * 2 ** 0.5), abs=1e-6)
    found = extract(question, passages, WORDS, Params(threshold=0.3))
    assert found.declined and found.strength == pytest.approx(0.0, abs=1e-5)


def test_the_clauses_of_a_line_over_a_quotes_length_are_units_marked_as_clauses():
    """A one-line list of readings over 1,000 characters was one unit, too long to quote: each
    clause is a unit now, marked so the answerer quotes it only for a word of the question;
    a line of ordinary length keeps its commas and is one unit."""
    line = ", ".join(f"sensor{i} reading {i}" for i in range(60)) + ", the limit is 3 bar\n"
    found = units(f"Log, short; kept whole.\n{line}")
    assert [(u.text, u.clause) for u in found[:3]] == [
        ("Log, short; kept whole.\n", False), ("sensor0 reading 0, ", True),
        ("sensor1 reading 1, ", True)]
    assert (len(found), found[-1].text, found[-1].clause) == (62, "the limit is 3 bar\n", True)


def test_a_clause_is_shown_without_the_separator_it_was_cut_after():
    """A quoted clause showed its ", " / "; " / " - " ("… is 3 bar, [1]"), and a long line's
    last clause its dangling comma; a sentence or line that is no clause keeps its end."""
    line = "; ".join(f"sensor{i} reading {i}" for i in range(60))
    texts = [u.text for u in units(f"{line}; the limit is 3 bar - set in 2019 —  see the log,\n")]
    assert texts[-4:] == ["sensor59 reading 59; ", "the limit is 3 bar - ", "set in 2019 —  ",
                          "see the log,\n"]
    assert [shown(t, clause=True) for t in texts[-4:]] == [
        "sensor59 reading 59", "the limit is 3 bar", "set in 2019", "see the log"]
    assert shown("Dear Sir,\n") == "Dear Sir,"
    assert shown("1,000, 2,000 ;", clause=True) == "1,000, 2,000"


LOAM = Chunk("loam#0", "soils/loam.md",
             "Loam is a soil of about 20 percent clay and\n"
             "40 percent silt, the rest sand. Dig it over in spring\n"
             "2.5 tonnes of compost to the hectare.\n"
             "To improve it:\n"
             "1. Test the pH.\n"
             "2) Spread lime in\n"
             "2024 Annual Report\n",
             metadata={"title": "Loam", "section": []})


def test_a_wrapped_line_starting_with_a_number_joins_its_sentence_and_a_list_item_does_not():
    """"40 percent silt, …" was a unit of its own, so the answerer quoted a sentence from its
    middle; a list number ("1. ", "2) ") and a number before a capital still start a unit."""
    assert [(u.start, u.end, shown(u.text)) for u in units(LOAM.text)] == [
        (0, 2, "Loam is a soil of about 20 percent clay and 40 percent silt, the rest sand."),
        (2, 4, "Dig it over in spring 2.5 tonnes of compost to the hectare."),
        (4, 5, "To improve it:"), (5, 7, "1. Test the pH."), (7, 8, "2) Spread lime in"),
        (8, 9, "2024 Annual Report")]
    wrapped = units("The thermostat switches to Eco mode when the last phone leaves a\n"
                    "300-metre radius around the home. Wait for\n10–15 minutes after it.\n")
    assert [shown(u.text) for u in wrapped] == [  # "300-metre" and a range join too
        "The thermostat switches to Eco mode when the last phone leaves a 300-metre radius "
        "around the home.", "Wait for 10–15 minutes after it."]


def test_the_sentence_a_number_line_continues_is_quoted_whole():
    """Before, the quote began mid-sentence: "40 percent silt, the rest sand." [1]."""
    chunk = Chunk("loam#1", "soils/loam.md",
                  "Clay soils drain slowly.\nLoam is a soil of about 20 percent clay and\n"
                  "40 percent silt, the rest sand.\n", metadata={"title": "Loam", "section": []})
    words = WordEmbedder(["silt", "loam", "clay", "percent", "soil", "sand"])
    found = extract("How much silt is in loam?",
                    list(assemble([(chunk.id, 1.0)], [chunk])), words, Params(threshold=0.0))
    assert [shown(q.text) for q in found.quotes] == [
        "Loam is a soil of about 20 percent clay and 40 percent silt, the rest sand.",
        "Clay soils drain slowly."]
    assert (found.quotes[0].block, found.quotes[0].stop) == (1, 3)


MINUTES = Chunk("minutes#0", "records/meeting-minutes-2025-03.txt",
                "Minutes of the meeting\n\n"
                "3. The chair opened the meeting.\n"
                "4. Ines Okafor presented the updated varroa calendar; the August threshold "
                "drops from 3 to 2\n"
                "mites per 100 bees.\n"
                "5. The meeting closed at nine.\n"
                "- Bulleted notes wrap the same way: the October check is\n"
                "  done by two members.\n"
                "- | a table row after a bullet\n"
                "| a | b\n"
                "c |\n", metadata={"title": "Minutes", "section": []})


def test_a_wrapped_list_item_is_one_unit_and_the_next_item_starts_another():
    """A numbered item was quoted without its wrapped line ("… drops from 3 to 2" with no
    "mites per 100 bees."): a list item's continuation joins the item; a table row's does
    not."""
    assert [(u.start, u.end, shown(u.text)) for u in units(MINUTES.text)] == [
        (0, 1, "Minutes of the meeting"), (1, 3, "3. The chair opened the meeting."),
        (3, 6, ("4. Ines Okafor presented the updated varroa calendar; the August threshold "
                "drops from 3 to 2 mites per 100 bees.")),
        (6, 8, "5. The meeting closed at nine."),
        (8, 10, ("- Bulleted notes wrap the same way: the October check is done by two "
                 "members.")),
        (10, 11, "- | a table row after a bullet"), (11, 12, "| a | b"), (12, 13, "c |")]
    words = WordEmbedder(["august", "threshold", "varroa", "mites", "bees", "calendar"])
    found = extract("What is the August varroa threshold?",
                    list(assemble([(MINUTES.id, 1.0)], [MINUTES])), words, Params(threshold=0.0))
    assert shown(found.quotes[0].text) == (
        "4. Ines Okafor presented the updated varroa calendar; the August threshold drops "
        "from 3 to 2 mites per 100 bees.")


def test_a_docstring_sentence_wrapped_over_lines_of_a_source_file_is_one_unit():
    """In a source file every line was a unit, docstring lines too: an answer quoted "them
    when ``SHOPCORE_ENV=production``." (shopcore/config.py), the end of a sentence begun two
    lines up. Inside a triple-quoted string the lines are prose and join as a sentence; code
    lines, the closing quotes and a comment stay their own units."""
    text = ('"""Runtime settings read from environment variables.\n\n'
            "Every setting has a safe default for local development, so tests need no\n"
            "environment at all. Secrets (gateway key, webhook secret, API token secret) have\n"
            "no default in production mode: :func:`load_settings` refuses to start without\n"
            "them when ``SHOPCORE_ENV=production``.\n"
            '"""\n'
            "import os\n"
            "def env(name: str,\n"
            "        default: str) -> str:\n"
            "    '''Read ``name``, or\n"
            "    ``default`` when it is unset.'''\n"
            "    # the prefix\n"
            "    return os.environ.get(name, default)\n")
    assert [(u.start, u.end, " ".join(u.text.split())) for u in units(text, code=True)] == [
        (0, 1, '"""Runtime settings read from environment variables.'),
        (1, 3, "Every setting has a safe default for local development, so tests need no "
               "environment at all."),
        (3, 6, "Secrets (gateway key, webhook secret, API token secret) have no default in "
               "production mode: :func:`load_settings` refuses to start without them when "
               "``SHOPCORE_ENV=production``."),
        (6, 7, '"""'), (7, 8, "import os"), (8, 9, "def env(name: str,"),
        (9, 10, "default: str) -> str:"),
        (10, 12, "'''Read ``name``, or ``default`` when it is unset.'''"),
        (12, 13, "# the prefix"), (13, 14, "return os.environ.get(name, default)")]


def test_a_question_is_no_unit_to_quote_but_in_source_code():
    """`units` marks a unit ending in "?" (after emphasis marks or a closing quote) as never
    quoted, keeps a reply of a few words with its question (no question then) and offers a
    question on a line of its own with the unit after it; in a source file "?" is an
    operator and the line stays quotable."""
    found = units("**When do I get my laptop?** It is ready on your first morning.\n\n"
                  "**Can I install software myself?** No. Ask the desk.\n\n"
                  "Q. 보관 기간은요？\nA. 30일입니다.\n")
    assert [(u.text.strip(), u.heading) for u in found if not u.titled] == [
        ("**When do I get my laptop?**", True), ("It is ready on your first morning.", False),
        ("**Can I install software myself?** No.", False), ("Ask the desk.", False),
        ("Q. 보관 기간은요？", True), ("A. 30일입니다.", False)]
    # a question on a line of its own is offered with the answer under it, as a heading is
    assert [u.text for u in found if u.titled] == ["Q. 보관 기간은요？\nA. 30일입니다.\n"]
    code = units("let size = read(path)?\nquery = 'SELECT * FROM t WHERE id = ?'\n",
                 code=True)
    assert [u.heading for u in code] == [False, False]


def test_a_short_line_a_question_ends_is_one_question_a_paragraph_is_not():
    """"The display shows E4. What does it mean?" on its own line is one question (never
    quoted, offered with the answer under it); a question inside a paragraph, or ending a
    line over 200 characters, leaves the sentences before it quotable."""
    found = units("The display shows E4. What does it mean?\nRinse the filter.\n")
    assert [(u.text, u.heading, u.titled) for u in found] == [
        ("The display shows E4. What does it mean?\n", True, False),
        ("Rinse the filter.\n", False, False),
        ("The display shows E4. What does it mean?\nRinse the filter.\n", False, True)]
    inside = units("Embeddings are cached. Why does that matter? Re-embedding is slow.\n")
    assert [u.heading for u in inside] == [False, True, False]
    long = "The nightly job copies every table of the cluster to cold storage. " * 3
    ends = units(long + "Why?\nBecause the disks fail.\n")
    assert [u.heading for u in ends if not u.titled] == [False, False, False, True, False]


def test_what_looks_like_a_question_but_is_none_and_a_wrapped_question():
    """A quoted question (a dialog's text), a placeholder, a URL ending in "?" stay
    quotable; a question wrapped over two lines is never quoted but not paired (its heading
    would be cut at its first line); nor is a question over a line without a word ("```")."""
    found = units('The dialog asks "Delete this file?"\nSELECT * FROM t WHERE id = ?\n'
                  'Get it from https://example.com/download?\n')
    assert [u.heading for u in found] == [False, False, False]
    wrapped = units("How often do the nightly database\nbackups run on the cluster?\n"
                    "Every night at 02:00 UTC.\n")
    assert [(u.heading, u.titled) for u in wrapped] == [(True, False), (False, False)]
    fenced = units("Is the id bound?\n```\n")
    assert not any(u.titled for u in fenced)


def test_a_sentence_end_inside_quotes_or_brackets_cuts_only_before_a_new_sentence():
    """Cut after '?**', '."', '.)' only where a sentence starts (a capital, a digit, Hangul):
    'He said "No." and left' and a code line 'msg = "Done." if ok' were cut in two."""
    assert blocks('He said "No." and left. Fruit (apples, etc.) are good. '
                  '**Q?** Your laptop is ready. **질문?** 네.') == [
        'He said "No." and left. ', 'Fruit (apples, etc.) are good. ', '**Q?** ',
        'Your laptop is ready. ', '**질문?** ', '네.']
    assert blocks('msg = "Done." if ok else "Failed."  # shown\n') == [
        'msg = "Done." if ok else "Failed."  # shown\n']
