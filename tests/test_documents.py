import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.datasets import load_beir, load_cookbook, load_dataset, load_shipped
from ragkit.document_folder import load_folder, split_front_matter
from ragkit.documents import (RagkitError, load_documents_jsonl, load_golden,
                              load_queries_jsonl)


def _write(path, lines):
    path.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n")
    return path


def test_documents_jsonl_roundtrip(tmp_path):
    path = _write(tmp_path / "docs.jsonl", [{"id": "a", "text": "Alpha.", "title": "A"},
                                            "", {"id": 7, "text": "Seven", "metadata": {"x": 1}}])
    docs = load_documents_jsonl(path)
    assert [(d.id, d.title, d.metadata) for d in docs] == [("a", "A", {}), ("7", "", {"x": 1})]


@pytest.mark.parametrize("lines, message", [
    (['{"id": "a", "text": "x"}', '{"id": "b", "text": '], r"docs.jsonl:2: malformed JSON"),
    ([{"id": "a"}], r"docs.jsonl:1: field 'text': missing"),
    ([{"id": "a", "text": 5}], r"docs.jsonl:1: field 'text': expected str, got int"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
     r"docs.jsonl:2: field 'id': duplicate document id 'a' \(first at line 1\)"),
    ([{"id": "a", "text": "   "}], r"docs.jsonl:1: field 'text': empty document"),
    ([{"id": "a", "text": "ab\u0000cd"}], r"docs.jsonl:1: field 'text': looks binary"),
    (["[1, 2]"], r"docs.jsonl:1: expected a JSON object"),
    # every JSON reader keeps the last of a repeated key: this row was document "b", silently
    (['{"id": "a", "text": "x"}', '{"id": "b", "text": "y", "id": "c"}'],
     r"docs.jsonl:2: field 'id': given twice in one object"),
    (['{"id": "a", "text": "x", "text": ""}'], r"docs.jsonl:1: field 'text': given twice"),
    # a bool passed the (str, int) check and became the id "True"; 5,000 digits were a
    # traceback (Python's str() of an int stops at 4,300)
    ([{"id": True, "text": "x"}], r"docs.jsonl:1: field 'id': expected str/int, got bool"),
    ([{"id": " ", "text": "x"}], r"docs.jsonl:1: field 'id': empty"),  # chunk id "#0"
    (['{"id": ' + "9" * 5000 + ', "text": "x"}'],
     r"docs.jsonl:1: a number of over 4,300 digits; write it as a string"),
    (['{"id": ' + "9" * 500 + ', "text": "x"}'],
     r"docs.jsonl:1: field 'id': a number of over 300 digits; write it as a string"),
])
def test_documents_jsonl_errors_name_file_line_field(tmp_path, lines, message):
    path = _write(tmp_path / "docs.jsonl", lines)
    with pytest.raises(RagkitError, match=message):
        load_documents_jsonl(path)


def test_a_key_name_written_again_inside_a_value_or_a_nested_object_is_no_repeat(tmp_path):
    path = _write(tmp_path / "docs.jsonl", [
        {"id": "a", "text": 'print({"id": 1, "text": "x"})', "metadata": {"id": "m", "title": "t"},
         "title": "T"}])
    (doc,) = load_documents_jsonl(path)
    assert (doc.id, doc.text, doc.metadata, doc.title) == (
        "a", 'print({"id": 1, "text": "x"})', {"id": "m", "title": "t"}, "T")


def test_binary_file_is_not_utf8(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"id": "a", "text": "\xff\xfe"}\n')
    with pytest.raises(RagkitError, match="docs.jsonl:1: not UTF-8"):
        load_documents_jsonl(path)


def test_queries_accept_text_or_question(tmp_path):
    path = _write(tmp_path / "q.jsonl", [
        {"id": "1", "text": "what?"},
        {"id": "2", "question": "why?", "kind": "paraphrase", "split": "dev", "lang": "en",
         "golden": [{"doc_id": "d", "span": "because"}]}])
    q1, q2 = load_queries_jsonl(path)
    assert (q1.text, q2.text, q2.kind, q2.split, q2.metadata) == ("what?", "why?", "paraphrase",
                                                                  "dev", {"lang": "en"})
    assert q2.golden[0].span == "because"


def test_front_matter_and_folder_titles(tmp_path):
    meta, text = split_front_matter("---\ntitle: Q2 report\ncompany: Acme\n---\n\nBody.\n")
    assert (meta, text) == ({"title": "Q2 report", "company": "Acme"}, "Body.\n")
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "refund.md").write_text("# Refund policy\n\nSeven days.\n")
    (tmp_path / "app.py").write_text("def main():\n    pass\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "notes.txt").write_text("internal")
    docs = load_folder(tmp_path / "pol" / "..")  # a relative path with '..' in it still loads
    assert [(d.id, d.title) for d in docs] == [("app.py", "app.py"),
                                              ("pol/refund.md", "Refund policy")]


def _shipped(tmp_path, span="Seven days"):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "golden").mkdir()
    (tmp_path / "corpus" / "refund.md").write_text("---\ntitle: Refunds\n---\nSeven days.\n")
    _write(tmp_path / "golden" / "en.jsonl", [
        {"id": "en-1", "question": "How long?", "split": "dev", "kind": "lexical",
         "golden": [{"doc_id": "refund.md", "span": span}]}])
    return tmp_path


def test_shipped_layout_loads_and_validates(tmp_path):
    data = load_dataset(_shipped(tmp_path))
    assert [d.id for d in data.documents] == ["refund.md"]
    assert data.split("dev").queries[0].id == "en-1"
    with pytest.raises(RagkitError, match="no queries in split 'test'"):
        data.split("test")


def test_shipped_rejects_span_not_in_document(tmp_path):
    with pytest.raises(RagkitError, match=r"en.jsonl:1: query 'en-1': field 'golden\[0\].span': "
                                          r"not in 'refund.md', even with its white space aside"):
        load_shipped(_shipped(tmp_path, span="Thirty days"))


def test_a_span_typed_with_other_white_space_is_read_as_the_documents_own(tmp_path):
    """A span copied from a man page with its run of spaces typed as one ("-S sort by file
    size") was refused as not verbatim, the message collapsing the document's spaces too."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "ls.txt", "text": "Options:\n  -S     sort by file "
                                "size,\n         largest first\n"}) + "\n")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "q1", "text": "How do I sort by size?", "golden": [
        {"doc_id": "ls.txt", "span": "-S sort by file size, largest first"}]}) + "\n")
    from ragkit.documents import check_golden, load_documents_jsonl, load_queries_jsonl
    (query,) = check_golden(load_queries_jsonl(golden, golden=True),
                            load_documents_jsonl(docs), golden)
    assert query.golden[0].span == "-S     sort by file size,\n         largest first"


def test_shipped_rejects_missing_document_and_duplicate_ids(tmp_path):
    root = _shipped(tmp_path)
    _write(root / "golden" / "ko.jsonl", [{"id": "en-1", "question": "?", "golden": []}])
    with pytest.raises(RagkitError, match=r"ko.jsonl:1: field 'id': duplicate query id 'en-1' "
                                          r"\(first at .*en.jsonl:1\)"):
        load_golden(root / "golden")
    _write(root / "golden" / "ko.jsonl", [
        {"id": "ko-1", "question": "?", "golden": [{"doc_id": "nope.md", "span": "x"}]}])
    with pytest.raises(RagkitError, match=r"ko.jsonl:1: query 'ko-1': "
                                          r"field 'golden\[0\].doc_id': no document 'nope.md'"):
        load_shipped(root)


def test_beir_layout(tmp_path):
    _write(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "T", "text": "alpha"},
                                       {"_id": "d2", "text": "beta"}])
    _write(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "alpha?"},
                                        {"_id": "q2", "text": "unjudged"}])
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    data = load_beir(tmp_path)
    assert [q.id for q in data.queries] == ["q1"]
    assert [g.doc_id for g in data.queries[0].golden] == ["d1"]
    assert data.documents[0].title == "T"
    (tmp_path / "qrels" / "test.tsv").write_text("q1\td1\n")
    with pytest.raises(RagkitError, match=r"test.tsv:1: expected 3 tab-separated fields"):
        load_beir(tmp_path)


def test_cookbook_loader(cookbook_dir):
    data = load_cookbook(cookbook_dir)
    assert (len(data.documents), len(data.chunks), len(data.queries)) == (90, 737, 248)
    assert data.documents[0].title == "AFLplusplus/LibAFL: libafl/src/executors/differential.rs"
    by_id = {d.id: d for d in data.documents}
    for chunk in data.chunks[:50]:
        assert by_id[chunk.doc_id].text[chunk.start:chunk.end] == chunk.text
    assert sum(len(q.golden) for q in data.queries) > 248


@pytest.mark.parametrize("lines, message", [
    # a line with neither field names 'text', the documented one (it once said 'question')
    ([{"id": "a", "text": "x"}, {"id": "b"}],
     r"q.jsonl:2: field 'text': missing \(a query needs 'text' or 'question'\)"),
    ([{"id": "a", "question": ""}], r"q.jsonl:1: field 'question': empty"),
    ([{"id": "a", "text": None, "question": "q"}], r"q.jsonl:1: field 'text': missing$"),
])
def test_a_query_line_without_its_text_names_the_field_the_format_documents(tmp_path, lines,
                                                                             message):
    path = _write(tmp_path / "q.jsonl", lines)
    with pytest.raises(RagkitError, match=message):
        load_queries_jsonl(path)
    assert [q.text for q in load_queries_jsonl(_write(tmp_path / "ok.jsonl", [
        {"id": "a", "question": "Q?"}, {"id": "b", "text": "T?", "question": "T?"}]))] == [
        "Q?", "T?"]  # both, the same: one text (differing: refused, test_cli_hostile_inputs)


@pytest.mark.parametrize("raw, message", [
    # nested past Python's stack: one line, not a RecursionError traceback
    (b'{"id": "a", "text": "x", "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
     r"docs.jsonl:1: malformed JSON \(nested too deeply\)$"),
    # deep enough for Python's stack, shallow enough for orjson (1,024 levels)
    (b'{"id": "a", "text": "x", "extra": ' + b"[" * 1000 + b"]" * 1000 + b"}\n",
     r"docs.jsonl:1: malformed JSON \(nested too deeply\)$"),
    # a lone surrogate cannot be written to any file later: refused where it is read
    (b'{"id": "a", "text": "hello \\ud800 refunds"}\n',
     r"docs.jsonl:1: field 'text': holds a lone surrogate"),
    (b'{"id": "a", "text": "ok", "meta": {"k": ["\\udfff"]}}\n',
     r"docs.jsonl:1: field 'meta': holds a lone surrogate"),
])
def test_a_json_line_no_later_step_could_handle_is_refused_where_it_is_read(tmp_path, raw,
                                                                          message):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(raw)
    with pytest.raises(RagkitError, match=message):
        load_documents_jsonl(path)
    path.write_bytes(b'{"id": "a", "text": "a pair is one character: \\ud83d\\ude00"}\n')
    assert load_documents_jsonl(path)[0].text.endswith("\U0001F600")


def test_a_byte_order_mark_is_read_past_and_an_empty_query_id_is_refused(tmp_path):
    """Notepad saves UTF-8 with a byte-order mark: refused before as malformed JSON. An empty
    id was accepted by eval though no run file can carry it."""
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "Q?"}\n')
    assert [q.id for q in load_queries_jsonl(path)] == ["a"]
    path.write_text('{"id": "", "text": "Q?"}\n')
    with pytest.raises(RagkitError, match=r"q.jsonl:1: field 'id': empty$"):
        load_queries_jsonl(path)
    path.write_text('{"id": "a", "text": "Q?", "kind": null, "split": null, "answer": null}\n')
    (query,) = load_queries_jsonl(path)
    assert (query.kind, query.split, query.answer) == ("", "", "")  # not the text "None"


def test_a_query_longer_than_a_query_may_be_is_one_line(tmp_path):
    """A 14 MB query line cost the offline reranker 48 s and 3.6 GB of memory."""
    from ragkit.documents import MAX_QUERY_CHARS
    path = _write(tmp_path / "q.jsonl", [{"id": "q", "text": "refund " * 20_000}])
    with pytest.raises(RagkitError) as caught:
        load_queries_jsonl(path)
    assert str(caught.value) == (f"{path}:1: field 'text': 140,000 characters, over the "
                                 f"{MAX_QUERY_CHARS:,} a query may have")


@pytest.mark.parametrize("field, value, expected", [
    ("split", 3, "expected str, got int"), ("kind", ["x"], "expected str, got list"),
    ("lang", 4, "expected str, got int"), ("answer", {"a": 1}, "expected str/int/float, got dict"),
])
def test_a_label_of_the_wrong_type_names_file_line_and_field(tmp_path, field, value, expected):
    # before: `"split": 3` was read as a split named "3" and `"kind": ["x"]` as "['x']"
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "text": "refund window"}\n'
                    + json.dumps({"id": "b", "text": "refund window", field: value}) + "\n")
    with pytest.raises(RagkitError) as caught:
        load_queries_jsonl(path)
    assert str(caught.value) == f"{path}:2: field '{field}': {expected}"
    path.write_text(json.dumps({"id": "b", "text": "t", "answer": 42, "kind": None}) + "\n")
    assert (load_queries_jsonl(path)[0].answer, load_queries_jsonl(path)[0].kind) == ("42", "")


@pytest.mark.parametrize("record, error", [
    # a misspelled "golden" made the question unanswerable: left out of every score, silently
    ({"id": "q1", "text": "sort by time", "gloden": [{"doc_id": "ls.txt"}]},
     "g.jsonl:1: field 'golden': missing (a golden question has a list, [] when unanswerable) "
     "(is 'gloden' a misspelling of 'golden'?)"),
    ({"id": "q1", "text": "sort by time"},  # a plain queries file given as golden questions
     "g.jsonl:1: field 'golden': missing (a golden question has a list, [] when unanswerable)"),
    # a misspelled "span" made a span label a whole-document one: R@5 1.000 became 0.385
    ({"id": "q1", "text": "sort by time", "golden": [{"doc_id": "ls.txt", "spam": "newest"}]},
     "g.jsonl:1: field 'golden[0].spam': unknown key (a golden item has doc_id, span, "
     "chunk_id) (is 'spam' a misspelling of 'span'?)"),
    ({"id": "q1", "text": "sort by time", "golden": [{"doc_id": "ls.txt", "span": " "}]},
     "g.jsonl:1: field 'golden[0].span': empty (leave the key out to label the whole "
     "document)"),  # scored as "any chunk of the document", silently
    ({"id": "q1", "text": "sort by time", "golden": [{"dco_id": "ls.txt"}]},
     "g.jsonl:1: field 'golden[0]': expected an object with 'doc_id' (is 'dco_id' a "
     "misspelling of 'doc_id'?)"),
])
def test_a_golden_file_refuses_a_missing_or_misspelled_field(tmp_path, record, error):
    path = _write(tmp_path / "g.jsonl", [record])
    with pytest.raises(RagkitError) as raised:
        load_golden(path)
    assert str(raised.value) == f"{tmp_path}/{error}"
    assert load_golden(_write(tmp_path / "ok.jsonl", [  # unanswerable: an empty list, extras
        {"id": "q2", "text": "what?", "golden": [], "source": {"doc": "x"}}]))[0].golden == ()


def test_an_input_that_is_not_a_file_is_named_for_what_it_is(tmp_path):
    """`--queries <(cat q.jsonl)` and a folder were both "no such file"; a FIFO is never opened
    (opening one with no writer would block)."""
    import os
    from ragkit.datasets import read_qrels
    os.mkfifo(tmp_path / "pipe")
    expected = {tmp_path / "pipe": "not a regular file (a pipe, a device or a socket); save it "
                                   "to a file and give that",
                tmp_path: "a folder, not a file", tmp_path / "gone.jsonl": "no such file"}
    for path, why in expected.items():
        for read in (load_queries_jsonl, read_qrels):
            with pytest.raises(RagkitError) as raised:
                read(path)
            assert str(raised.value) == f"{path}: {why}"


def test_a_data_set_given_as_dot_is_named_after_its_folder(tmp_path, monkeypatch):
    """`cd mydocs && ragkit eval .` printed ": 2 judged queries" (a name of "")."""
    (tmp_path / "mydocs").mkdir()
    (tmp_path / "mydocs" / "a.md").write_text("# A\n\nSome text.\n")
    monkeypatch.chdir(tmp_path / "mydocs")
    assert load_dataset(".").name == load_dataset("../mydocs").name == "mydocs"
    assert [d.id for d in load_dataset(".").documents] == ["a.md"]


def test_a_file_of_another_format_given_for_jsonl_is_named_so(tmp_path):
    """`questions accept` with its two files swapped said only "malformed JSON"."""
    (tmp_path / "review.csv").write_text("id,question,keep\nq1,What?,yes\n")
    with pytest.raises(RagkitError) as raised:
        load_queries_jsonl(tmp_path / "review.csv")
    assert str(raised.value) == (f"{tmp_path / 'review.csv'}:1: malformed JSON (Expecting "
                                 f"value): review.csv is a CSV file, not JSON Lines (one JSON "
                                 f"object per line)")
    (tmp_path / "later.csv").write_text('{"id": "1", "text": "a"}\nnot json\n')
    with pytest.raises(RagkitError, match=r"later.csv:2: malformed JSON \(Expecting value\)$"):
        load_queries_jsonl(tmp_path / "later.csv")  # a JSONL file named .csv: its line 2


@pytest.mark.parametrize("pages, shown", [
    ("5", "5"), ("[[1, 0], [2]]", "[[1, 0], [2]]"), ("[[1, 40], [2, 0]]", "[[1, 40], [2, 0]]"),
    ('[["one", 0]]', "[['one', 0]]")])
def test_a_bad_page_map_in_documents_jsonl_is_one_line_naming_its_field(tmp_path, pages, shown):
    """`metadata.pages` is the page map citations name pages by: `{"pages": 5}` stopped
    `ragkit index` with a TypeError traceback; a map of pairs ascending indexes."""
    ragkit = str(Path(sys.executable).parent / "ragkit")
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    line = ('{"id": "a", "text": "Pumps move water. The limit is 3 bar.", '
            '"metadata": {"pages": %s}}\n')
    bad.write_text(line % pages)
    good.write_text(line % "[[1, 0], [2, 18]]")
    done = subprocess.run([ragkit, "index", str(bad), "--out", str(tmp_path / "i1"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith(
        f"ragkit: error: {bad}:1: field 'metadata.pages': expected a page map, "
        f"[[page, offset], ...] with offsets ascending, got {shown}")
    assert not (tmp_path / "i1").exists()
    done = subprocess.run([ragkit, "index", str(good), "--out", str(tmp_path / "i2"),
                           "--embedder", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_golden_folder_reads_jsonl_in_any_case_and_names_what_it_leaves(tmp_path):
    """`golden/Q.JSONL` was not read, and `q.json` or `sub/q.jsonl` beside `a.jsonl` left
    their questions out without a word ("no queries to evaluate" when they were all)."""
    from ragkit.documents import RagkitWarning
    folder = tmp_path / "golden"
    (folder / "sub").mkdir(parents=True)
    for name, qid in (("a.jsonl", "1"), ("Q.JSONL", "2"), ("b.json", "3"), ("sub/c.jsonl", "4")):
        _write(folder / name, [{"id": qid, "question": "why?", "golden": []}])
    with pytest.warns(RagkitWarning) as said:
        queries = load_golden(folder)
    assert [q.id for q in queries] == ["2", "1"]  # Q.JSONL sorts before a.jsonl
    assert [str(w.message) for w in said] == [
        f"{folder}: not read: b.json, sub/ (questions are read from the folder's *.jsonl "
        f"files only)"]


def test_a_row_of_many_keys_is_checked_for_a_repeat_in_linear_time():
    """Counting each key's name over the row took 11 s for 40,000 keys (a 738 KB line)."""
    import time

    from ragkit.jsonl import parse_line
    keys = {f"key{i}": i for i in range(40_000)}
    started = time.monotonic()
    assert parse_line(json.dumps(keys).encode(), Path("x.jsonl"), 1) == keys
    assert time.monotonic() - started < 2
    with pytest.raises(RagkitError, match="x.jsonl:1: field 'key7': given twice"):
        parse_line(json.dumps(keys)[:-1].encode() + b', "key7": 0}', Path("x.jsonl"), 1)


def test_a_folder_loads_from_a_script_piped_to_python(tmp_path):
    """`python - <<EOF` (a script on standard input) loading a folder with worker processes
    failed with "the worker process reading it died (out of memory?)": spawned workers
    re-import the main module by its path, and `<stdin>` has none. Such a process now loads
    in itself, as with one worker."""
    import subprocess
    import sys
    for n in range(3):
        (tmp_path / f"note{n}.html").write_text(f"<h1>Note {n}</h1><p>It boils in {n} s.</p>")
    script = (f"from ragkit.document_folder import load_folder\n"
              f"loaded = load_folder({str(tmp_path)!r}, progress=False, jobs=2)\n"
              f"print(sorted(d.id for d in loaded))\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['note0.html', 'note1.html', 'note2.html']\n"
