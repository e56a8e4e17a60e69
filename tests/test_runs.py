import ir_measures
import pytest
from ir_measures import RR, R, nDCG

from ragkit.documents import RagkitError
from ragkit.evaluate import per_query, summarize
from ragkit.fusion import ranked
from ragkit.runs import escape_id, read_trec, unescape_id, write_trec


def test_escape_rule_and_its_inverse():
    cases = {"a b": "a%20b", "50%": "50%25", "tab\there": "tab%09here", "line\nbreak": "line%0Abreak",
             "nbsp\u00a0x": "nbsp%C2%A0x", "doc.md#3": "doc.md#3", "한국어#0": "한국어#0"}
    for raw, written in cases.items():
        assert escape_id(raw) == written
        assert unescape_id(written) == raw
    # every character Python counts as whitespace is escaped (ids without one take a
    # shortcut that must not skip any)
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert len(spaces) == 29
    for ch in spaces:
        written = escape_id(f"a{ch}b")
        assert written == "a" + "".join(f"%{b:02X}" for b in ch.encode()) + "b"
        assert unescape_id(written) == f"a{ch}b"


def test_every_line_has_six_fields_and_reads_back_exactly(tmp_path):
    rankings = {"q 1": ranked({"my doc#0": 0.1 + 0.2, "my doc#1": 0.3, "100%#2": -1e-17}),
                "q2": [("x", 2.5)]}
    path = write_trec(tmp_path / "run.trec", rankings, tag="my run")
    lines = path.read_text().splitlines()
    assert [len(line.split()) for line in lines] == [6, 6, 6, 6]
    # equal to single precision, so tied (as trec_eval sees them): id descending
    assert lines[:2] == ["q%201 Q0 my%20doc#1 1 0.3 my%20run",
                         "q%201 Q0 my%20doc#0 2 0.30000000000000004 my%20run"]
    assert read_trec(path) == rankings  # ids decoded, scores exact, order kept


def test_empty_ids_are_refused(tmp_path):
    with pytest.raises(RagkitError, match="empty chunk id"):
        write_trec(tmp_path / "r", {"q": [("", 1.0)]})
    with pytest.raises(RagkitError, match="empty query id"):
        write_trec(tmp_path / "r", {"": [("a", 1.0)]})


def test_read_orders_like_trec_eval_not_by_the_rank_column(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 c 2 1.0 t\nq Q0 b 3 2.0 t\nq Q0 a%20b 4 1.0 t\n"
                    "q Q0 a!b 5 1.0 t\n")
    assert [doc for doc, _ in read_trec(path)["q"]] == ["b", "c", "a b", "a!b", "a"]


def test_bad_lines_name_file_line_and_field(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 high t\n")
    with pytest.raises(RagkitError, match=r"run.trec:2: field 'score': not a number"):
        read_trec(path)
    path.write_text("q Q0 a b 1 1.0 t\n")
    with pytest.raises(RagkitError, match=r"run.trec:1: expected 6 fields"):
        read_trec(path)
    path.write_text("q Q0 a 1 1e39 t\n")  # numpy warned "overflow encountered in cast"
    with pytest.raises(RagkitError, match=r"run.trec:1: field 'score': 1e39 is beyond single "
                                          r"precision \(±3.4e38\), where trec_eval compares"):
        read_trec(path)
    path.write_text("q Q0 a%FF 1 1.0 t\n")
    with pytest.raises(RagkitError, match=r"run.trec:1: field 'doc_id': bad %-escape"):
        read_trec(path)


def test_ir_measures_on_the_written_file_agrees_with_ragkit(tmp_path):
    """Ties, ids with spaces, scores closer than 1e-6: trec_eval's order is ragkit's.

    d / e differ in the 7th decimal (a 6-decimal file would tie them and flip them); z / zz /
    the x y pair differ only beyond single precision, which trec_eval keeps: tied.
    """
    rankings = {
        "q1": ranked({"a b": 0.5, "a!b": 0.5, "c": 0.5, "d": 0.4000002, "e": 0.4000001}),
        "q2": ranked({"x y#1": 0.3, "x y#0": 0.3, "z": 0.1 + 0.2, "zz": 0.3 - 1e-12}),
        "q3": ranked({"p": 1.0, "q": 1.0}),
    }
    judgments = {"q1": [frozenset({"a!b"}), frozenset({"d"})],
                 "q2": [frozenset({"x y#0"}), frozenset({"zz"})],
                 "q3": [frozenset({"p"})]}
    path = write_trec(tmp_path / "run.trec", rankings)
    back = read_trec(path)
    assert back == rankings
    ours = summarize(per_query({q: [d for d, _ in r] for q, r in back.items()}, judgments,
                               ks=(1, 3, 4), ndcg_k=4))
    qrels = [ir_measures.Qrel(q, escape_id(d), 1) for q, items in judgments.items()
             for item in items for d in item]
    theirs = ir_measures.calc_aggregate([R @ 1, R @ 3, R @ 4, RR, nDCG @ 4], qrels,
                                        list(ir_measures.read_trec_run(str(path))))
    # hand-computed from the tie rule: q1 c, a b, a!b, d, e; q2 zz, z, x y#1, x y#0; q3 q, p
    assert ours["MRR"] == pytest.approx((1 / 3 + 1 + 1 / 2) / 3)
    assert ours["R@1"] == pytest.approx((0 + 1 / 2 + 0) / 3)
    assert ours["R@3"] == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)
    assert ours["R@4"] == 1.0
    for mine, measure in (("R@1", R @ 1), ("R@3", R @ 3), ("R@4", R @ 4), ("MRR", RR),
                          ("nDCG@4", nDCG @ 4)):
        assert ours[mine] == pytest.approx(theirs[measure], rel=1e-12, abs=1e-15), mine


def test_a_run_listing_a_document_twice_or_not_utf8_is_one_line_naming_it(tmp_path):
    """A repeated document once scored nDCG@10 2.13 (each copy earned its gain again); a
    Latin-1 run was a UnicodeDecodeError traceback."""
    run = tmp_path / "dup.run"
    run.write_text("q1 Q0 d1 1 3.0 x\nq2 Q0 d1 1 3.0 x\nq1 Q0 d1 2 2.0 x\n")
    with pytest.raises(RagkitError) as caught:
        read_trec(run)
    assert str(caught.value) == (f"{run}:3: field 'doc_id': 'd1' is listed for query 'q1' "
                                 f"already (line 1)")
    run.write_bytes(b"q1 Q0 d\xe9 1 2.0 x\n")
    with pytest.raises(RagkitError, match=r"dup.run: not UTF-8 text \(invalid continuation "
                                          r"byte\)$"):
        read_trec(run)


def test_a_run_saved_with_a_byte_order_mark_reads_its_first_query(tmp_path):
    run = tmp_path / "bom.run"
    run.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 3.0 x\n")
    assert read_trec(run) == {"q1": [("d1", 3.0)]}


def test_format_characters_of_every_kind_are_percent_encoded_and_read_back():
    """The first fix took a list of bidi and zero-width marks and missed the Arabic letter
    mark, the word joiner and the soft hyphen: every format or control character is encoded."""
    from ragkit.runs import escape_id, unescape_id
    for ident, spelled in [("x\u061cy", "x%D8%9Cy"), ("x\u2060y", "x%E2%81%A0y"),
                           ("x\u00ady", "x%C2%ADy"), ("x\u202ey", "x%E2%80%AEy"),
                           ("x\x1b]0;t\x07", "x%1B]0;t%07"), ("한국어 문서#1", "한국어%20문서#1")]:
        assert escape_id(ident) == spelled and unescape_id(spelled) == ident
