"""Relevance judgments (TREC and BEIR qrels) and BEIR splits, from small files written here."""
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ragkit.datasets import load_beir, load_dataset, read_qrels, relevant
from ragkit.documents import RagkitError, RagkitWarning

RAGKIT = Path(sys.executable).parent / "ragkit"


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_trec_qrels_keep_every_grade(tmp_path):
    path = _write(tmp_path / "qrels.txt", ["q1 0 d1 1", "q1 0 d2 0", "q1\t0\td3\t2", "",
                                           "q2 Q0 d1 -1", "q3 0 d4 0"])
    qrels = read_qrels(path)
    assert qrels == {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": -1}, "q3": {"d4": 0}}
    assert relevant(qrels) == {"q1": ["d1", "d3"]}  # grades > 0


@pytest.mark.parametrize("lines, said", [
    (["q1 0 d1 1", "q1 0 d2 0", "q2 0 d1 1", "", "q1 0 d1 2"],
     "qrels.txt:5: field 'docid': 'd1' is judged for query 'q1' already (line 1)"),
    (["query-id\tcorpus-id\tscore", "q1\tdoc one\t1", "q1\tdoc one\t1"],
     "qrels.txt:3: field 'corpus-id': 'doc one' is judged for query 'q1' already (line 2)"),
    (["q%201 0 my%20notes#0 1", "q%201 0 my%20notes#0 0"],  # ids as a run spells them
     "qrels.txt:2: field 'docid': 'my notes#0' is judged for query 'q 1' already (line 1)"),
])
def test_a_pair_judged_twice_is_refused_naming_both_lines(tmp_path, monkeypatch, lines, said):
    """The last grade silently won (a file of two merged judgment sets scored as one); a run
    listing a document twice for a query was refused already."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "qrels.txt", lines)
    with pytest.raises(RagkitError) as err:
        read_qrels("qrels.txt")
    assert str(err.value) == f"{said}; keep one of the two lines"
    _write(tmp_path / "run.trec", ["q1 Q0 d1 1 2.0 bm25"])
    done = subprocess.run([str(RAGKIT), "eval", "--run", "run.trec", "--qrels", "qrels.txt"],
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"ragkit: error: {said}; keep one of the two lines\n")


@pytest.mark.parametrize("header", [["query-id\tcorpus-id\tscore"], []])
def test_beir_tsv_with_or_without_header(tmp_path, header):
    path = _write(tmp_path / "test.tsv", [*header, "q1\tdoc one\t1", "q1\td2\t0", "7\td3\t2"])
    assert read_qrels(path) == {"q1": {"doc one": 1, "d2": 0}, "7": {"d3": 2}}


def test_trec_qrels_ids_are_unescaped_like_run_ids(tmp_path):
    # a run spells an id with a space `my%20notes#0` (ragkit.runs.escape_id); TREC qrels
    # spelling it the same way mean the same id, as trec_eval matches them
    path = _write(tmp_path / "qrels.txt", ["q%201 0 my%20notes#0 1", "q%201 0 50%25#1 2",
                                           "q2 0 plain#0 1"])
    assert read_qrels(path) == {"q 1": {"my notes#0": 1, "50%#1": 2}, "q2": {"plain#0": 1}}


def test_beir_tsv_ids_are_taken_literally(tmp_path):
    # BEIR ids are the corpus's own `_id`s, spaces and percent signs included
    path = _write(tmp_path / "test.tsv", ["q1	my notes#0	1", "q1	my%20notes#0	1"])
    assert read_qrels(path) == {"q1": {"my notes#0": 1, "my%20notes#0": 1}}


@pytest.mark.parametrize("lines, message", [
    (["q1 0 d1 1", "q1 0 d2"],
     r"qrels:2: expected 4 whitespace-separated fields \(qid iter docid rel\) like the first "
     r"line, got 3"),
    (["q1 0 d1 1", "q1 0 d2 yes"], r"qrels:2: field 'rel': not an integer: 'yes'"),
    (["q1\td1\t1", "q1\td2\t0.5"], r"qrels:2: field 'score': not an integer: '0.5'"),
    (["q1\td1\t1", "q1 0 d2 1"], r"qrels:2: expected 3 tab-separated fields"),
    (["q1 0 d%FF 1"], r"qrels:1: field 'docid': bad %-escape in 'd%FF'"),
    (["q%C3 0 d1 1"], r"qrels:1: field 'qid': bad %-escape in 'q%C3'"),
    (["q1 d1"], r"qrels:1: expected 3 tab-separated fields \(query-id, corpus-id, score\) or "
                r"4 whitespace-separated fields \(qid iter docid rel\), got 2"),
])
def test_bad_qrels_lines_name_file_line_and_field(tmp_path, lines, message):
    with pytest.raises(RagkitError, match=message):
        read_qrels(_write(tmp_path / "qrels", lines))


def test_missing_qrels_file(tmp_path):
    with pytest.raises(RagkitError, match=r"nope.tsv: no such file"):
        read_qrels(tmp_path / "nope.tsv")


@pytest.fixture
def beir(tmp_path):
    _write(tmp_path / "corpus.jsonl", ['{"_id": "d1", "text": "alpha"}',
                                       '{"_id": "d2", "title": "B", "text": "beta"}'])
    _write(tmp_path / "queries.jsonl", ['{"_id": "t1", "text": "alpha?"}',
                                        '{"_id": "v1", "text": "beta?"}'])
    (tmp_path / "qrels").mkdir()
    _write(tmp_path / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "t1\td1\t1"])
    _write(tmp_path / "qrels" / "dev.tsv", ["v1 0 d2 1", "v1 0 d1 0"])  # TREC qrels work too
    return tmp_path


def test_beir_split_picks_its_qrels_file(beir):
    assert [(q.id, q.split) for q in load_dataset(beir).queries] == [("t1", "test")]
    dev = load_dataset(beir, "dev")
    assert [(q.id, q.split, [g.doc_id for g in q.golden]) for q in dev.queries] == [
        ("v1", "dev", ["d2"])]
    assert dev.split("dev").queries == dev.queries


def test_beir_unknown_split_lists_the_known_ones(beir):
    with pytest.raises(RagkitError, match=r"train.tsv: no such file \(splits with qrels: "
                                          r"dev, test\)"):
        load_beir(beir, "train")


def test_judged_queries_missing_from_queries_jsonl_are_counted(beir):
    _write(beir / "qrels" / "dev.tsv", ["v1\td2\t1", "v9\td1\t1", "v8\td1\t1", "v7\td1\t0"])
    with pytest.warns(RagkitWarning, match=r"dev.tsv: left out 2 judged queries not in "
                                           r".*queries.jsonl \(v8, v9\)"):
        data = load_beir(beir, "dev")
    assert [q.id for q in data.queries] == ["v1"]


def test_a_query_id_given_twice_in_queries_jsonl_is_refused_with_both_lines(beir):
    """Scoring keyed by id would keep one text of the two and drop the other unsaid."""
    _write(beir / "queries.jsonl", ['{"_id": "t1", "text": "alpha?"}',
                                    '{"_id": "v1", "text": "beta?"}',
                                    '{"_id": "t1", "text": "alpha, asked again?"}'])
    with pytest.raises(RagkitError, match=r"queries.jsonl:3: field '_id': duplicate query id "
                                          r"'t1' \(first at line 1\)"):
        load_beir(beir)


def test_a_judged_corpus_id_not_in_the_corpus_is_named_in_the_qrels_words(beir):
    _write(beir / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "t1\td1\t1",
                                         "t1\tmissing-doc\t1"])
    with pytest.raises(RagkitError) as err:
        load_beir(beir)
    assert str(err.value) == (f"{beir / 'qrels' / 'test.tsv'}:3: query 't1': field "
                              f"'corpus-id': 'missing-doc' is not in {beir / 'corpus.jsonl'}")


def test_a_judged_corpus_id_not_in_the_corpus_names_its_qrels_line(beir):
    """The line of the judgment, blank lines counted; TREC qrels name their field `docid`;
    eval says it as one line."""
    _write(beir / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "t1\td2\t0", "",
                                         "t1\td1\t1", "t1\tgone\t2"])
    with pytest.raises(RagkitError) as err:
        load_beir(beir)
    assert str(err.value) == (f"{beir / 'qrels' / 'test.tsv'}:5: query 't1': field "
                              f"'corpus-id': 'gone' is not in {beir / 'corpus.jsonl'}")
    _write(beir / "qrels" / "dev.tsv", ["v1 0 d2 1", "v1 0 my%20doc 1"])
    with pytest.raises(RagkitError) as err:
        load_beir(beir, "dev")
    assert str(err.value) == (f"{beir / 'qrels' / 'dev.tsv'}:2: query 'v1': field 'docid': "
                              f"'my doc' is not in {beir / 'corpus.jsonl'}")
    done = subprocess.run([str(RAGKIT), "eval", str(beir), "--embedder", "none"],
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"ragkit: error: {beir / 'qrels' / 'test.tsv'}:5: query 't1': field "
               f"'corpus-id': 'gone' is not in {beir / 'corpus.jsonl'}\n")


def test_own_documents_jsonl_with_golden_queries(tmp_path):
    _write(tmp_path / "documents.jsonl", [
        '{"id": "refund", "title": "Refund policy", "text": "Refunds within seven days."}',
        '{"id": "ship", "text": "Shipping takes three days."}'])
    (tmp_path / "golden").mkdir()
    _write(tmp_path / "golden" / "mine.jsonl", [
        '{"id": "a", "text": "How long for a refund?", "kind": "lexical", "split": "dev", '
        '"golden": [{"doc_id": "refund", "span": "seven days"}]}',
        '{"id": "b", "question": "Shipping time?", "golden": [{"doc_id": "ship"}]}'])
    data = load_dataset(tmp_path)
    assert [d.id for d in data.documents] == ["refund", "ship"]
    assert [(q.id, q.kind, q.split, q.golden[0].span) for q in data.queries] == [
        ("a", "lexical", "dev", "seven days"), ("b", "", "", "")]
    _write(tmp_path / "golden" / "mine.jsonl", [
        '{"id": "a", "text": "?", "golden": [{"doc_id": "refund", "span": "thirty days"}]}'])
    with pytest.raises(RagkitError, match=r"mine.jsonl:1: query 'a': field 'golden\[0\].span'"):
        load_dataset(tmp_path)
    (tmp_path / "corpus").mkdir()  # a second set of documents beside the first: it was ignored
    (tmp_path / "corpus" / "refund.md").write_text("Refunds within thirty days.\n")
    with pytest.raises(RagkitError) as error:
        load_dataset(tmp_path)
    assert str(error.value) == (f"{tmp_path}: holds both documents.jsonl and corpus/, two sets "
                                f"of documents; keep the one the golden questions are about")


def test_beir_jsonl_files_read_directly_by_their_id_field(beir):
    from ragkit.documents import load_documents_jsonl, load_queries_jsonl
    assert [(d.id, d.title) for d in load_documents_jsonl(beir / "corpus.jsonl")] == [
        ("d1", ""), ("d2", "B")]
    queries = load_queries_jsonl(beir / "queries.jsonl")
    assert [(q.id, q.text, q.metadata) for q in queries] == [("t1", "alpha?", {}),
                                                             ("v1", "beta?", {})]


@pytest.mark.parametrize("content, error", [
    (b"q1 0 d1 +-1\n", "a.qrels:1: field 'rel': not an integer: '+-1'"),
    (b"q1 0 d1 \xc2\xb2\n", "a.qrels:1: field 'rel': not an integer: '\u00b2'"),
    (b"q1 0 d1 1\nq1 0 caf\xe9 1\n", "a.qrels:2: not UTF-8 text (invalid continuation byte)"),
    (b"query-id\tcorpus-id\tscore\nq1\td1\t--1\n", "a.qrels:2: field 'score': not an integer: "
                                                   "'--1'"),
])
def test_a_bad_grade_or_byte_in_qrels_is_one_line_not_a_traceback(tmp_path, content, error):
    from ragkit.datasets import read_qrels
    (tmp_path / "a.qrels").write_bytes(content)
    with pytest.raises(RagkitError) as raised:
        read_qrels(tmp_path / "a.qrels")
    assert str(raised.value) == f"{tmp_path}/{error}"


@pytest.mark.parametrize("chunks, golden, error", [
    ('[{"original_uuid": "u1", "content": "x", "chunks": []}]', '[["u1", 0]]',
     "codebase_chunks.json: [0].doc_id: missing"),  # was KeyError: 'doc_id'
    ("[1, 2]", '[["u1", 0]]', "codebase_chunks.json: [0]: expected an object"),
    ('{"a": 1}', '[["u1", 0]]', "codebase_chunks.json: expected a JSON list of documents"),
    ('[{"doc_id": "d", "original_uuid": "u1", "content": 5, "chunks": []}]', '[["u1", 0]]',
     "codebase_chunks.json: [0].content: expected str, got int"),
    ('[{"doc_id": "d", "original_uuid": "u1", "content": "hello world", "chunks": '
     '[{"chunk_id": "c0", "content": "hello world", "original_index": 0}]}]', '["u1"]',
     "evaluation_set.jsonl:1: field 'golden_chunk_uuids': expected [document uuid, chunk "
     "index] pairs, got 'u1'"),  # was read as characters: "no chunk 1 of document u"
])
def test_a_malformed_cookbook_data_set_is_one_line_not_a_traceback(tmp_path, chunks, golden,
                                                                     error):
    from ragkit.datasets import load_cookbook
    (tmp_path / "codebase_chunks.json").write_text(chunks)
    (tmp_path / "evaluation_set.jsonl").write_text(
        f'{{"query": "refund", "golden_chunk_uuids": {golden}}}\n')
    with pytest.raises(RagkitError) as raised:
        load_cookbook(tmp_path)
    assert str(raised.value) == f"{tmp_path}/{error}"


def test_a_beir_set_in_decomposed_hangul_is_read_composed(beir):
    """A folder, a documents JSONL file and golden questions were read in NFC, a BEIR set
    not: `ragkit ask` composes its question, so a decomposed BEIR corpus missed it."""
    import unicodedata
    text, title, question = "환불은 7일 이내", "환불 규정", "환불은 며칠?"
    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
    _write(beir / "corpus.jsonl", [json.dumps({"_id": "d1", "text": nfd(text),
                                               "title": nfd(title)})])
    _write(beir / "queries.jsonl", [json.dumps({"_id": "t1", "text": nfd(question)})])
    data = load_beir(beir)
    assert (data.documents[0].text, data.documents[0].title) == (text, title)
    assert data.queries[0].text == question


@pytest.mark.parametrize("text, said", [
    ('{\n  "name": "harbor-web",\n  "version": "1.0.0"\n}\n',
     "package.json:1: malformed JSON (Expecting property name enclosed in double quotes)"),
    ('{"name": "harbor-web"}\n', "package.json:1: field 'id': missing"),
])
def test_a_json_file_given_alone_that_is_no_documents_jsonl_says_how_it_was_read(tmp_path, text,
                                                                                 said):
    """`ragkit index package.json` said "malformed JSON" of a valid file: a .json file given
    alone is read as documents JSONL, and the error now says so, and how to index it as a
    configuration file."""
    (tmp_path / "package.json").write_text(text)
    with pytest.raises(RagkitError) as caught:
        load_dataset(tmp_path / "package.json")
    assert str(caught.value) == (
        f"{tmp_path / said} (a .json file given alone is read as documents JSONL, one "
        '{"id", "text"} object per line; to index it as a configuration file, give the folder '
        "that holds it)")
    docs = load_dataset(tmp_path).documents  # its folder: read as a configuration file
    assert [d.id for d in docs] == ["package.json"] and '"harbor-web"' in docs[0].text


def test_documents_beside_corpus_are_named_not_left_out_unsaid(tmp_path):
    """A data set folder with `corpus/`, `golden/` and `expenses.md` at its top indexed one
    document and never named the file; its README and LICENSE are no documents."""
    root = tmp_path / "data"
    (root / "corpus").mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "corpus" / "kettle.md").write_text("The kettle boils water in two minutes.\n")
    (root / "golden" / "q.jsonl").write_text(json.dumps(
        {"id": "q1", "question": "How fast does the kettle boil?",
         "golden": [{"doc_id": "kettle.md", "span": "boils water"}]}) + "\n")
    for name in ("README.md", "LICENSE.txt", "SOURCE.txt", "notes.json"):  # SOURCE: held-out sets'
        (root / name).write_text("x\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_dataset(root)
    assert caught == []
    (root / "expenses.md").write_text("Expenses are paid monthly.\n")
    with pytest.warns(RagkitWarning) as caught:
        data = load_dataset(root)
    assert [d.id for d in data.documents] == ["kettle.md"]
    assert [str(w.message) for w in caught] == [
        f"{root}: not read, beside corpus/: expenses.md (a data set's documents are those of "
        f"corpus/: move them there to index them)"]


def test_a_beir_set_with_decomposed_ids_in_corpus_queries_and_qrels_loads(beir):
    """Qrels ids are read in NFC (one id in two forms is one id); a corpus and queries whose
    ids are written decomposed (NFD) were then "not in corpus.jsonl"."""
    import unicodedata
    nfd = unicodedata.normalize("NFD", "café")
    _write(beir / "corpus.jsonl", [json.dumps({"_id": nfd, "text": "Coffee is served."}),
                                   json.dumps({"_id": "tea", "text": "Tea is served."})])
    _write(beir / "queries.jsonl", [json.dumps({"_id": f"q-{nfd}", "text": "coffee?"})])
    (beir / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq-{nfd}\t{nfd}\t1\n")
    data = load_beir(beir)
    assert [(q.id, [g.doc_id for g in q.golden]) for q in data.queries] == [(f"q-{nfd}", [nfd])]
