"""Each filter of the golden-set generator, triggered by a reply that should trip it.

The offline stand-in answers every request through the real SDK; a test's transport alters
one kind of reply (the written question, the round-trip quote, the closed-book answer) the
way a careless model might, and the report must count the drop under that filter."""
from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

import ragkit  # noqa: F401 (registers the offline stand-in)
from ragkit import progress, standin
from ragkit.cache import CallCache
from ragkit.chunking import chunk_documents
from ragkit.document_folder import load_folder
from ragkit.documents import Document, RagkitError, RagkitWarning
from ragkit.llm import LLM, UsageLog, make_client
from ragkit.questions import documents_of, generate
from ragkit.questions.filters import (closed_book_answers, flat, found_elsewhere,
                                      gives_away, round_trip_ok, whole_units)
from ragkit.questions.prompts import ANSWER_HEADER, CLOSED_BOOK_HEADER, WRITE_HEADER
from ragkit.questions.sample import names_document, names_of, parse_kinds, quotas, sample
from ragkit.questions.spans import anchor
from questions_corpus import write_corpus
from word_embedder import WordEmbedder

Alter = Callable[[str, dict], dict]  # (request kind, reply JSON) -> reply JSON


def _text(reply: dict) -> str:
    return reply["content"][0]["text"]


def _with(reply: dict, text: str) -> dict:
    return {**reply, "content": [{"type": "text", "text": text}]}


def _llm(tmp_path, alter: Alter | None = None) -> LLM:
    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.read())
        status, reply = standin.respond(request.url.path, body)
        prompt = json.dumps(body["messages"], ensure_ascii=False)
        kind = next((k for k, h in (("write", WRITE_HEADER), ("answer", ANSWER_HEADER),
                                    ("closed", CLOSED_BOOK_HEADER)) if h in prompt), "")
        return httpx2.Response(status, json=alter(kind, reply) if alter else reply)
    client = make_client(max_retries=0, transport=httpx2.MockTransport(handle))
    return LLM(client, cache=CallCache(tmp_path / "calls.sqlite"), usage=UsageLog())


def _run(tmp_path, alter: Alter | None = None, kinds: str = "lexical=2,paraphrase=1",
         documents=None, embedder=None):
    docs, chunks = documents_of(write_corpus(tmp_path / "docs")) if documents is None \
        else (documents, None)
    return generate(docs, n=3, kinds=kinds, chunks=chunks, chunk_size=48, overlap=8,
                    llm=_llm(tmp_path, alter), embedder=embedder)


def _dropped(report, stage: str) -> int:
    return report.total(stage)


def test_the_unaltered_stand_in_passes_every_filter(tmp_path):
    questions, report = _run(tmp_path)
    assert [report.total(s) for s in report.counts] == [0, 3, 0, 0, 0, 0, 0, 0, 0, 3]
    assert [q["id"] for q in questions] == ["gen-001", "gen-002", "gen-003"]
    frame = report.frame()  # the table a notebook shows: stages by kinds and all
    assert list(frame.columns) == ["lexical", "paraphrase", "all"]
    assert frame.loc["asked"].tolist() == [2, 1, 3] and frame.loc["kept"].tolist() == [2, 1, 3]
    assert "near-duplicate (not checked)" in report.table()  # no embedder given


@pytest.mark.parametrize("text", ["Sorry, here is a question: what is a refund?",
                                  '{"a": ' + "[" * 100_000 + "}"])  # was a traceback
def test_a_reply_that_is_not_the_json_asked_for_is_dropped_as_malformed(tmp_path, text):
    def alter(kind, reply):
        return _with(reply, text) if kind == "write" else reply
    questions, report = _run(tmp_path, alter)
    assert (questions, _dropped(report, "malformed reply")) == ([], 3)


def test_a_span_not_in_its_passage_is_dropped_and_a_rewrapped_one_is_reanchored(tmp_path):
    def alter(kind, reply):
        if kind != "write":
            return reply
        written = json.loads(_text(reply))
        if written["answer_span"].startswith("Customers"):  # re-wrapped: kept, re-anchored
            written["answer_span"] = written["answer_span"].replace(" unopened ", "\nunopened ")
        else:  # reworded: not verbatim
            written["answer_span"] = written["answer_span"].replace("the ", "a ")
        return _with(reply, json.dumps(written))
    questions, report = _run(tmp_path, alter)
    assert _dropped(report, "span not verbatim") == 2
    assert [q["golden"][0]["span"][:36] for q in questions] == [
        "Customers may return any unopened it"]


def test_a_question_its_passage_does_not_answer_fails_the_round_trip(tmp_path):
    def alter(kind, reply):
        return _with(reply, json.dumps({"answer_span": ""})) if kind == "answer" else reply
    questions, report = _run(tmp_path, alter, kinds="lexical=2,unanswerable=1")
    assert report.counts["round-trip failed"] == {"lexical": 2, "unanswerable": 0}
    assert [q["kind"] for q in questions] == ["unanswerable"]  # declining is its pass


def test_a_question_stating_its_answer_is_answerable_from_itself(tmp_path):
    def alter(kind, reply):
        if kind != "write":
            return reply
        written = json.loads(_text(reply))
        if written["question"].startswith("Which"):
            written["question"] = f"Is it true that {written['answer_span']}?"
        return _with(reply, json.dumps(written))
    questions, report = _run(tmp_path, alter)
    assert report.counts["answerable from the question"] == {"lexical": 0, "paraphrase": 1}
    assert [q["kind"] for q in questions] == ["lexical", "lexical"]


def test_a_closed_book_answer_that_holds_the_span_drops_the_question(tmp_path):
    written: list[str] = []

    def alter(kind, reply):
        if kind == "write":
            written.append(json.loads(_text(reply))["answer_span"])
        if kind == "closed":  # a model that knows everything it was shown
            return _with(reply, " ".join(written))
        return reply
    questions, report = _run(tmp_path, alter)
    assert (questions, _dropped(report, "answerable from the question")) == ([], 3)


def test_a_span_another_document_holds_too_is_dropped_unless_the_question_names_its_own(
        tmp_path):
    text = ("Refunds are paid to the original payment card within five working days after the "
            "warehouse inspects and accepts the returned parcel from the customer.")
    documents = [Document("a.md", text, "Policy A"), Document("b.md", text, "Policy B")]
    questions, report = generate(documents, n=2, kinds="lexical", llm=_llm(tmp_path),
                                 embedder=None)
    assert (questions, report.counts["span in another document"]) == ([], {"lexical": 2})
    questions, report = generate(documents, n=2, kinds="contextual", llm=_llm(tmp_path),
                                 embedder=None)
    assert [q["question"][:12] for q in questions] == ["In Policy A,", "In Policy B,"]


def test_a_twin_that_wraps_its_lines_elsewhere_is_another_document_holding_the_span(tmp_path):
    """The same page saved as Markdown and as HTML: its lines break in other places. Compared
    verbatim the twin was missed, the question kept, and `eval` scored the retriever that
    found the twin first as missing the answer."""
    text = ("Refunds are paid to the original payment card within five working days after the "
            "warehouse inspects and accepts the returned parcel from the customer.")
    wrapped = text.replace(" within ", "\nwithin ").replace(" the returned", "\n  the returned")
    documents = [Document("notes/a.md", text, "Policy"), Document("web/a.html", wrapped, "Policy")]
    questions, report = generate(documents, n=2, kinds="lexical", llm=_llm(tmp_path),
                                 embedder=None)
    assert (questions, report.counts["span in another document"]) == ([], {"lexical": 2})
    assert found_elsewhere(["payment card within"], "notes/a.md", {"web/a.html": flat(wrapped)})
    assert not found_elsewhere(["payment card within"], "web/a.html",
                               {"web/a.html": flat(wrapped)})


def test_two_questions_alike_keep_only_the_first(tmp_path):
    documents = [Document("a.md", "Refunds paid original card within five working days after "
                                  "the warehouse inspects the parcel and the courier confirms "
                                  "its delivery to our returns desk.", "Policy A"),
                 Document("b.md", "Refunds paid original currency at the exchange rate of the "
                                  "day the order was placed, whatever the rate is on the day "
                                  "the refund reaches the bank.", "Policy B")]
    embedder = WordEmbedder(["refunds", "paid", "original", "card", "currency"])
    questions, report = generate(documents, n=2, kinds="lexical", llm=_llm(tmp_path),
                                 embedder=embedder)
    assert report.counts["near-duplicate"] == {"lexical": 1}
    assert [q["question"] for q in questions] == [
        "What does the text state about refunds, paid and original?"]
    assert "near-duplicate " in report.table() and "(not checked)" not in report.table()


def test_filter_rules_on_their_own():
    passage = "Opened items are refunded at 80 percent\nof the price within 14 days."
    assert anchor("80 percent of the price", passage) == "80 percent\nof the price"
    assert anchor("80 per cent of the price", passage) is None
    assert round_trip_ok(["80 percent of the price"], "They are refunded at 80 percent of "
                                                     "the price.")
    assert not round_trip_ok(["80 percent of the price"], "Within 14 days.")
    assert round_trip_ok([], "", unanswerable=True)
    assert not round_trip_ok([], "80 percent", unanswerable=True)
    assert gives_away("Are opened items refunded at 80 percent of the price?",
                      ["Opened items are refunded at 80 percent of the price"])
    assert not gives_away("How much of the price comes back for an opened item?",
                          ["Opened items are refunded at 80 percent of the price"])
    assert not closed_book_answers("UNKNOWN", ["80 percent"])
    assert closed_book_answers("Usually 80 percent.", ["80 percent"])


def test_kind_shares_split_n_by_largest_remainder_and_bad_ones_are_refused():
    # 2.5, 2.5, 2.5, 1.5, 1.0: the two extra go to the first kinds of the tied remainders
    assert quotas(10, parse_kinds(None)) == {"lexical": 3, "paraphrase": 3, "contextual": 2,
                                             "multi-chunk": 1, "unanswerable": 1}
    assert quotas(7, parse_kinds("lexical=3,contextual=1")) == {"lexical": 5, "contextual": 2}
    with pytest.raises(RagkitError, match="the weight of 'lexical' must be a number > 0"):
        parse_kinds("lexical=0")
    for huge in ("lexical=inf", "lexical=1e308,paraphrase=1e308"):  # before: NaN quotas, a
        with pytest.raises(RagkitError, match=r"'lexical' must be a number > 0 and at most "
                                              r"1e\+06, got '(inf|1e308)'"):  # traceback
            parse_kinds(huge)
    assert quotas(3, parse_kinds("lexical=1e6,paraphrase=1")) == {"lexical": 3, "paraphrase": 0}
    for twice in ("lexical,lexical", "lexical=1,paraphrase,lexical=5"):  # the last one won
        with pytest.raises(RagkitError, match=r"^--kinds: 'lexical' is given twice$"):
            parse_kinds(twice)


def test_the_source_names_the_page_and_heading_path_of_the_span(tmp_path):
    text = ("# Warranty\n\nShort intro here.\n\n## Repairs\n\nRepairs under warranty are free of "
            "charge for two years from the date printed on the original receipt.")
    pages = [[1, 0], [2, text.index("## Repairs")]]  # as the PDF loader maps pages
    documents = [Document("w.pdf", text, "Warranty", {"pages": pages})]
    questions, _ = generate(documents, n=1, kinds="lexical", llm=_llm(tmp_path), embedder=None)
    (question,) = questions
    assert question["golden"] == [{"doc_id": "w.pdf", "span": text[text.index("Repairs under"):]}]
    assert {k: question["source"][k] for k in ("page", "section", "title")} == {
        "page": 2, "section": "Warranty > Repairs", "title": "Warranty"}


def test_a_folder_too_small_for_questions_stops_with_one_line_not_a_keyerror(tmp_path):
    # three short files: no chunk has 20 words outside its headings, so nothing is asked;
    # notebook 08 stops here with the reason instead of failing three cells later
    docs = [Document("kettle.md", "# Kettle\n\nThe kettle descales monthly with vinegar.\n"),
            Document("gate.md", "# Gate\n\nThe north gate opens at six in the morning.\n")]
    with pytest.warns(RagkitWarning, match="usable chunks for 0 of the 10"):
        records, report = generate(docs, n=10, seed=0)
    assert records == []
    frame = report.frame()  # every question asked is in a row: none had a usable chunk
    assert frame.loc["no usable chunk"].tolist() == frame.loc["asked"].tolist() == [
        3, 3, 2, 1, 1, 10]
    with pytest.raises(RagkitError) as caught:
        report.require_kept()
    assert str(caught.value) == (
        "no answerable question was kept (0 of 10 asked; the filter table says where they "
        "were lost): the comparison needs questions — give a folder with more text or larger "
        "chunks (a chunk needs 20 words outside its headings: chunk_size in notebook 08, "
        "--chunk-size on the command line) or ask for more (n_questions, --n)")


def test_a_folder_smaller_than_the_quotas_keeps_every_kinds_share():
    """29 one-chunk documents, 100 questions asked: every quota is scaled down alike, and
    multi-chunk (no document has two chunks) gives its share to the others — lexical no
    longer takes every chunk left while paraphrase and unanswerable get none."""
    from ragkit.chunking import ChunkerConfig, chunk_documents
    from ragkit.questions.sample import fit_quotas, sample
    words = " ".join(f"word{i}" for i in range(25))
    docs = [Document(f"d{i:02}.md", f"Topic {i} note: {words} fact {i}.") for i in range(29)]
    chunks = chunk_documents(docs, ChunkerConfig(512, 64))
    wanted = quotas(100, parse_kinds(None))
    assert wanted == {"lexical": 25, "paraphrase": 25, "contextual": 25, "multi-chunk": 15,
                      "unanswerable": 10}
    # 25 questions (4 of them on two chunks each) is the most that fits in 29 chunks
    assert fit_quotas(wanted, 29) == {"lexical": 6, "paraphrase": 6, "contextual": 6,
                                      "multi-chunk": 4, "unanswerable": 3}
    assert fit_quotas(wanted, 500) == wanted
    items = sample(docs, chunks, wanted)
    kinds = [item.kind for item in items]
    # the 4 multi-chunk questions go to lexical, paraphrase and unanswerable by their shares
    assert {k: kinds.count(k) for k in dict.fromkeys(kinds)} == {
        "lexical": 8, "paraphrase": 7, "contextual": 6, "unanswerable": 4}
    assert len({item.chunks[0].id for item in items}) == len(items) == 25


def test_the_progress_bar_counts_the_calls_made_and_names_the_offline_stand_in(tmp_path,
                                                                              monkeypatch):
    """The bar counted three calls a question, so it stopped at 22/60 when filters dropped
    some, and named claude-haiku-4-5 while the offline stand-in wrote them. In a notebook it
    is drawn in the cell's output (`ragkit.progress`): it went to the kernel's stderr, a pink
    strip under the cell."""
    shown: list[str] = []

    class Handle:
        def update(self, data: dict, raw: bool) -> None:
            shown.append(data["text/plain"])

    def display(data: dict, raw: bool, display_id: bool) -> Handle:
        shown.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr(progress, "cell_display", lambda: display)  # as in a Jupyter kernel
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    docs, chunks = documents_of(write_corpus(tmp_path / "docs"))
    generate(docs, n=8, chunks=chunks, chunk_size=48, overlap=8, embedder=None,
             llm=LLM(cache=False), progress=True)
    assert shown[0] == "questions (offline stand-in):   0%|          | 0/21 [00:00<?, ?call/s]"
    assert shown[-1] == ""  # cleared at the end (`leave=False`)
    # 7 usable chunks, 21 calls planned; one question dropped before its closed-book call:
    # 20 calls made, and the bar still ends full
    assert shown[-2].startswith("questions (offline stand-in): 100%|██████████| 20/20 [")


def test_a_big_file_gets_no_second_question_before_every_document_has_one():
    """A 23 MB log among 27 notes gave 24 of 45 questions when the chunks were shuffled as
    one list; the documents now take turns."""
    from ragkit.chunking import ChunkerConfig, chunk_documents
    from ragkit.questions.sample import sample
    words = " ".join(f"word{i}" for i in range(25))
    log = Document("log.txt", "\n\n".join(f"Entry {i}: {words} event {i}." for i in range(400)))
    notes = [Document(f"n{i:02}.md", f"Note {i}: {words} fact {i}.") for i in range(9)]
    chunks = chunk_documents([log, *notes], ChunkerConfig(64, 0))
    assert sum(c.doc_id == "log.txt" for c in chunks) > 100
    for seed in range(3):
        items = sample([log, *notes], chunks, {"lexical": 10}, seed=seed)
        assert sorted(item.document.id for item in items) == ["log.txt", *(n.id for n in notes)]


def test_a_front_matter_list_of_products_names_its_document(tmp_path):
    """Contextual questions are written about passages that do not name their document. A
    note whose front matter lists `product: [Kestrel EG-400, EG-500]` and whose text says
    "Kestrel EG-400" names it: the list's Python text was taken for the name, so the note
    was drawn for a contextual question its passage answers by name."""
    folder = tmp_path / "notes"
    folder.mkdir()
    body = " ".join(f"step{i}" for i in range(25))
    (folder / "a.md").write_text(f"---\nproduct: [Kestrel EG-400, EG-500]\n---\nThe Kestrel "
                                 f"EG-400 pairs in five seconds: {body}.\n", encoding="utf-8")
    (folder / "b.md").write_text(f"The unit pairs in five seconds: {body}.\n",
                                 encoding="utf-8")
    docs = load_folder(folder, progress=False)
    chunks = chunk_documents(docs)
    for seed in range(4):
        items = sample(docs, chunks, {"contextual": 2}, seed=seed)
        assert [item.document.id for item in items] == ["b.md"]


def test_a_span_is_widened_only_at_a_line_break_the_answerer_joins():
    """A writer's short phrase stays as written; a span cut at a wrapped line's break grows
    to the sentence the offline answerer quotes; a line starting with a capital is its own."""
    passage = ("Most crops grow best at a soil pH between 6.0 and 7.0. Agricultural lime "
               "raises the pH of an\nacidic field; apply about 2 tonnes per hectare.\n"
               "Lime works slowly\nOver a season.")
    sentence = ("Agricultural lime raises the pH of an\nacidic field; apply about 2 tonnes per "
                "hectare.")
    assert whole_units("acidic field; apply about 2 tonnes per hectare.", passage) == sentence
    assert whole_units("Agricultural lime raises the pH of an", passage) == sentence
    assert whole_units("2 tonnes per hectare", passage) == "2 tonnes per hectare"
    assert whole_units("Over a season.", passage) == "Over a season."


def test_a_span_cut_where_a_wrapped_line_starts_with_a_number_grows_to_its_sentence():
    """A line going on with a number ("40 percent silt") joins its sentence for the span as
    for the answerer; a numbered list item stays a span of its own."""
    passage = ("Loam is a soil of about 20 percent clay and\n40 percent silt, the rest sand.\n"
               "To improve it:\n1. Test the pH.\n")
    sentence = "Loam is a soil of about 20 percent clay and\n40 percent silt, the rest sand."
    assert whole_units("40 percent silt, the rest sand.", passage) == sentence
    assert whole_units("Loam is a soil of about 20 percent clay and", passage) == sentence
    assert whole_units("1. Test the pH.", passage) == "1. Test the pH."


def test_a_name_wrapped_over_two_lines_names_its_document(tmp_path):
    """A hard-wrapped passage that breaks "Kestrel EG-400" after "Kestrel" names its
    document as much as one that does not: it was drawn for a contextual question (whose
    passage must not name its document), and a title wrapped in two lines was one name
    with a line break that no passage holds."""
    folder = tmp_path / "notes"
    folder.mkdir()
    wrapped = ("It collects readings from machines and sensors on a factory floor. The Kestrel\n"
               "EG-400 stores them when the network is down, evaluates alert rules locally\n"
               "and forwards the data to cloud or on-premises systems.\n")
    (folder / "a.md").write_text("---\ntitle: Quick start\nproduct: Kestrel EG-400\n---\n"
                                 + wrapped, encoding="utf-8")
    (folder / "b.md").write_text(wrapped.replace("The Kestrel\nEG-400", "The\ngateway"),
                                 encoding="utf-8")
    docs = load_folder(folder, progress=False)
    chunks = chunk_documents(docs)
    assert names_of(docs[0]) == {"quick start", "kestrel eg-400"}
    assert [names_document(c, docs[0] if c.doc_id == "a.md" else docs[1]) for c in chunks] == [
        True, False]
    for seed in range(4):
        items = sample(docs, chunks, {"contextual": 2}, seed=seed)
        assert [item.document.id for item in items] == ["b.md"]
    pdf = Document("eg400.pdf", wrapped, "Kestrel EG-400\nEdge Gateway", {})
    assert names_of(pdf) == {"kestrel eg-400 edge gateway"}


def test_a_reply_with_an_empty_question_is_counted_as_none_written_not_malformed(tmp_path):
    """The offline stand-in writes an empty question for a passage without a key sentence; a
    folder of repeated text gave 9 of 10 rows as "malformed reply", read as the writer's
    reply breaking. It is `no question written`."""
    def alter(kind, reply):
        return _with(reply, '{"question": "", "answer_span": "", "second_span": "", '
                            '"answer": ""}') if kind == "write" else reply
    questions, report = _run(tmp_path, alter)
    assert questions == []
    assert (_dropped(report, "no question written"), _dropped(report, "malformed reply")) == (
        3, 0)
