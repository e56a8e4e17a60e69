import json
import random
import shutil
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import RR, R, nDCG

from ragkit.datasets import load_cookbook
from ragkit.documents import Chunk, Document, Golden, Query, RagkitError
from ragkit.evaluate import (bootstrap_ci, confidence_table, first_relevant_rank, judge, ndcg_at_k,
                             pass_at_k, per_query, reciprocal_rank, round_metrics, summarize)


def test_hand_computed_single_query():
    items = [frozenset({"a"}), frozenset({"c", "c2"})]
    ranked = ["x", "a", "y", "c2"]
    assert pass_at_k(ranked, items, 1) == 0.0
    assert pass_at_k(ranked, items, 2) == 0.5
    assert pass_at_k(ranked, items, 4) == 1.0
    assert reciprocal_rank(ranked, frozenset({"a", "c", "c2"})) == 0.5
    # DCG = 1/log2(3) + 1/log2(5); ideal over 3 relevant: 1 + 1/log2(3) + 1/2
    expected = (1 / 1.5849625007 + 1 / 2.3219280949) / (1 + 1 / 1.5849625007 + 0.5)
    assert ndcg_at_k(ranked, frozenset({"a", "c", "c2"}), 4) == pytest.approx(expected)


def test_first_relevant_rank_is_one_based_or_none():
    ranked = ["x", "a", "y", "c2"]
    assert first_relevant_rank(ranked, {"c2", "a"}) == 2
    assert first_relevant_rank(ranked, frozenset({"x"})) == 1
    assert first_relevant_rank(ranked, {"zz"}) is None
    assert first_relevant_rank([], {"a"}) is None
    assert reciprocal_rank(ranked, frozenset({"zz"})) == 0.0


def test_round_metrics_keeps_three_decimals_for_rank_measures_only():
    table = pd.DataFrame({"Pass@5": [59.4594], "Fail@20": [26.5766], "R@5": [0.41666],
                          "MRR": [0.53234], "nDCG@10": [0.61149], "queries": [12]})
    assert round_metrics(table).iloc[0].to_dict() == {
        "Pass@5": 59.5, "Fail@20": 26.6, "R@5": 0.417, "MRR": 0.532, "nDCG@10": 0.611,
        "queries": 12}


def test_agrees_with_ir_measures():
    judgments = {"q1": [frozenset({"a"}), frozenset({"d"})], "q2": [frozenset({"e"})],
                 "q3": [frozenset({"z"})]}
    run = {"q1": ["b", "a", "c", "d", "e"], "q2": ["e", "a"], "q3": ["a", "b"]}
    table = per_query(run, judgments, ks=(1, 3, 5), ndcg_k=3)
    qrels = [ir_measures.Qrel(q, d, 1) for q, items in judgments.items()
             for item in items for d in item]
    scored = [ir_measures.ScoredDoc(q, d, float(len(r) - i)) for q, r in run.items()
              for i, d in enumerate(r)]
    theirs = ir_measures.calc_aggregate([R @ 1, R @ 3, R @ 5, RR, nDCG @ 3], qrels, scored)
    mine = summarize(table)
    assert mine["R@1"] == pytest.approx(theirs[R @ 1])
    assert mine["R@3"] == pytest.approx(theirs[R @ 3])
    assert mine["R@5"] == pytest.approx(theirs[R @ 5])
    assert mine["MRR"] == pytest.approx(theirs[RR])
    assert mine["nDCG@3"] == pytest.approx(theirs[nDCG @ 3])
    # one chunk per item: Pass@k is recall@k × 100
    assert mine["Pass@3"] == pytest.approx(100 * theirs[R @ 3])


def test_judge_spans_chunks_and_documents():
    doc = Document("d", "alpha beta gamma delta epsilon")
    chunks = [Chunk("d#0", "d", "alpha beta gamma", start=0, end=16),
              Chunk("d#1", "d", "gamma delta epsilon", start=11, end=30),
              Chunk("e#0", "e", "alpha beta gamma", start=0, end=16)]
    queries = [Query("span", "?", golden=(Golden("d", span="gamma delta"),)),
               Query("chunk", "?", golden=(Golden("d", chunk_id="d#0"),)),
               Query("doc", "?", golden=(Golden("d"),)),
               Query("none", "?")]
    got = judge(queries, [doc, Document("e", "alpha beta gamma")], chunks)
    # "gamma delta" = [11, 22): d#0 covers 5 of 11 chars (< half), d#1 covers all
    assert got["span"] == [frozenset({"d#1"})]
    assert got["chunk"] == [frozenset({"d#0", "e#0"})]  # same stripped text counts
    assert got["doc"] == [frozenset({"d#0", "d#1"})]
    assert "none" not in got


def test_a_span_written_twice_in_its_document_is_found_in_either_place():
    """Only its first occurrence counted: the chunk holding the second, ranked first, scored
    Pass@1 0 with exit 0."""
    text = "Intro. The reset code is 4471. Middle part. Service: the reset code is 4471. End."
    chunks = [Chunk("m#0", "m", text[:30], start=0, end=30),
              Chunk("m#1", "m", text[30:44], start=30, end=44),
              Chunk("m#2", "m", text[44:], start=44, end=len(text))]
    query = Query("q", "?", golden=(Golden("m", span="reset code is 4471"),))
    assert judge([query], [Document("m", text)], chunks) == {"q": [frozenset({"m#0", "m#2"})]}


def test_a_span_that_overlaps_its_own_repeat_is_found_at_each_start():
    """"ABAB" is at 0 and at 2 in "ABABAB": the search went on after the first occurrence's
    end, so the chunk holding 3 of the 4 characters of the second was judged not relevant."""
    chunks = [Chunk("d#0", "d", "ABA", start=0, end=3), Chunk("d#1", "d", "BAB", start=3, end=6)]
    query = Query("q", "?", golden=(Golden("d", span="ABAB"),))
    assert judge([query], [Document("d", "ABABAB")], chunks) == {"q": [frozenset({"d#0",
                                                                                  "d#1"})]}


DOC = Document("d", "alpha beta gamma delta epsilon")
CHUNKS = [Chunk("d#0", "d", "alpha beta gamma", start=0, end=16)]


@pytest.mark.parametrize("golden, field, problem", [
    (Golden("d", span="gamma omega"), "golden[1].span", "not found verbatim in 'd'"),
    (Golden("nope"), "golden[1].doc_id", "no document 'nope'"),
    (Golden("nope", span="alpha"), "golden[1].doc_id", "no document 'nope'"),
    (Golden("d", chunk_id="d#9"), "golden[1].chunk_id", "no chunk 'd#9' in document 'd'"),
    (Golden("e", chunk_id="d#0"), "golden[1].chunk_id", "no chunk 'd#0' in document 'e'"),
])
def test_judge_refuses_golden_items_it_cannot_place(golden, field, problem):
    query = Query("q7", "?", golden=(Golden("d", span="alpha"), golden),
                  origin="golden/en.jsonl:7")
    documents = [DOC, Document("e", "zeta eta")]
    with pytest.raises(RagkitError) as error:
        judge([query], documents, CHUNKS)
    assert str(error.value).startswith(f"golden/en.jsonl:7: field '{field}': {problem}")


def test_judge_without_origin_names_the_query():
    query = Query("q7", "?", golden=(Golden("d", span="omega"),))
    with pytest.raises(RagkitError, match=r"^query 'q7': field 'golden\[0\].span'"):
        judge([query], [DOC], CHUNKS)


@pytest.mark.parametrize("ks, ndcg_k", [((0, 5), 10), ((5,), 0), ((-1,), 10), ((2.5,), 10)])
def test_per_query_refuses_non_positive_cutoffs(ks, ndcg_k):
    with pytest.raises(RagkitError, match="cutoff k must be a positive whole number"):
        per_query({"q": ["a"]}, {"q": [frozenset({"a"})]}, ks=ks, ndcg_k=ndcg_k)


# --------------------------------------------------------------------------- the cookbook's loop

FIXTURE_FILES = Path(__file__).parent / "fixtures" / "cookbook"


@pytest.fixture
def fixture_dir(tmp_path) -> Path:
    """The hand-written cookbook-format fixture laid out under the format's own file names
    (kept under other names in the repo, so they are never mistaken for the downloaded set)."""
    root = tmp_path / "cookbook"
    root.mkdir()
    shutil.copy(FIXTURE_FILES / "chunks.json", root / "codebase_chunks.json")
    shutil.copy(FIXTURE_FILES / "questions.jsonl", root / "evaluation_set.jsonl")
    return root


def cookbook_pass_at_k(eval_rows: list[dict], retrieve, k: int) -> float:
    """Pass@k exactly as the cookbook notebook computes it.

    A port of `evaluate_retrieval` (with `retrieve_base` as `retrieve`) from
    anthropics/claude-cookbooks capabilities/contextual-embeddings/guide.ipynb, commit
    5c1c15358b41109f94cfabd26e1b8f73f6efa46f: golden contents looked up by (doc uuid, index)
    in the query's own `golden_documents`, a golden chunk found when its stripped content
    equals a top-k retrieved chunk's stripped content, the mean over all queries × 100.
    """
    total_score = 0
    for query_item in eval_rows:
        golden_contents = []
        for doc_uuid, chunk_index in query_item["golden_chunk_uuids"]:
            golden_doc = next((doc for doc in query_item["golden_documents"]
                               if doc["uuid"] == doc_uuid), None)
            if not golden_doc:
                continue
            golden_chunk = next((chunk for chunk in golden_doc["chunks"]
                                 if chunk["index"] == chunk_index), None)
            if not golden_chunk:
                continue
            golden_contents.append(golden_chunk["content"].strip())
        if not golden_contents:
            continue
        retrieved_docs = retrieve(query_item["query"], k)
        chunks_found = 0
        for golden_content in golden_contents:
            for doc in retrieved_docs[:k]:
                if doc["metadata"]["content"].strip() == golden_content:
                    chunks_found += 1
                    break
        total_score += chunks_found / len(golden_contents)
    return total_score / len(eval_rows) * 100


def _cookbook_files(root: Path) -> tuple[list[dict], dict[str, dict]]:
    rows = [json.loads(line) for line in (root / "evaluation_set.jsonl").open()]
    metadata = {chunk["chunk_id"]: {"content": chunk["content"]}
                for doc in json.loads((root / "codebase_chunks.json").read_text())
                for chunk in doc["chunks"]}
    return rows, metadata


def _agree_with_the_cookbook(root: Path, runs: dict[str, dict[str, list[str]]],
                             ks=(1, 2, 3, 5)) -> dict[str, list[float]]:
    """ragkit's Pass@k on each run, asserted equal to the port's; returns ragkit's numbers."""
    data = load_cookbook(root)
    judgments = judge(data.queries, data.documents, data.chunks)
    rows, metadata = _cookbook_files(root)
    by_text = {q.text: q.id for q in data.queries}  # runs must agree on repeated texts
    out = {}
    for name, run in runs.items():
        ours = summarize(per_query(run, judgments, ks=ks))
        def retrieve(query, k, run=run):
            return [{"metadata": metadata[ident]} for ident in run[by_text[query]][:k]]
        theirs = [cookbook_pass_at_k(rows, retrieve, k) for k in ks]
        assert [ours[f"Pass@{k}"] for k in ks] == pytest.approx(theirs, abs=1e-9), name
        out[name] = [ours[f"Pass@{k}"] for k in ks]
    return out


def test_pass_at_k_matches_the_cookbook_loop_on_the_shipped_fixture(fixture_dir):
    data = load_cookbook(fixture_dir)
    ids = [c.id for c in data.chunks]
    runs = {"file order": {q.id: ids for q in data.queries},
            "reversed": {q.id: ids[::-1] for q in data.queries},
            "golden first": {q.id: [g.chunk_id for g in q.golden] for q in data.queries},
            # the other document's copy of the duplicated licence header counts as found
            "duplicate copy": {q.id: ["doc_2_chunk_0", "doc_1_chunk_2", "doc_3_chunk_1"]
                               for q in data.queries}}
    for seed in range(5):
        rng = random.Random(seed)
        runs[f"shuffled {seed}"] = {q.id: rng.sample(ids, len(ids)) for q in data.queries}
    got = _agree_with_the_cookbook(fixture_dir, runs)
    # hand-computed, 5 queries: file order puts both licence copies first (q1 and q5 found
    # at k=1), then q2's two goldens (half at k=2, both at k=3); q3, q4 need k ≥ 5 and 8
    assert got["file order"] == [40.0, 50.0, 60.0, 80.0]
    assert got["golden first"] == [90.0, 100.0, 100.0, 100.0]
    assert got["duplicate copy"] == [40.0, 50.0, 70.0, 70.0]


def test_pass_at_k_matches_cookbook_definition_on_cookbook(cookbook_dir):
    data = load_cookbook(cookbook_dir)
    judgments = judge(data.queries, data.documents, data.chunks)
    assert len(judgments) == 248
    # a perfect run that lists each query's golden chunks first scores 100
    run = {q.id: [g.chunk_id for g in q.golden] for q in data.queries}
    assert summarize(per_query(run, judgments))["Pass@20"] == pytest.approx(100.0)
    ids = [c.id for c in data.chunks]
    # the notebook retrieves by query text (two texts occur twice): one list per text
    first = {}
    for q in data.queries:
        first.setdefault(q.text, [q.golden[0].chunk_id] + random.Random(q.text).sample(ids, 40))
    _agree_with_the_cookbook(cookbook_dir, {"shuffled": {q.id: first[q.text] for q in data.queries}},
                             ks=(5, 10, 20))


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    lo, hi = bootstrap_ci(values)
    assert lo < 0.7 < hi
    assert bootstrap_ci(values) == (lo, hi)


def test_bootstrap_leaves_out_nan_and_refuses_nothing():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    assert bootstrap_ci(values + [float("nan")]) == bootstrap_ci(values)
    for empty in ([], [float("nan")]):
        with pytest.raises(RagkitError, match="no values to bootstrap"):
            bootstrap_ci(empty)
    import pandas as pd
    with pytest.raises(RagkitError, match="no Pass@20 score in 'bm25'"):
        confidence_table({"bm25": pd.DataFrame({"Pass@20": [float("nan")]})})


def test_confidence_table_brackets_each_mean():
    import pandas as pd
    tables = {"a": pd.DataFrame({"Pass@20": [100.0, 0.0, 100.0, 100.0]}),
              "b": pd.DataFrame({"Pass@20": [50.0, 50.0, 50.0, 50.0]})}
    table = confidence_table(tables)
    assert table.loc["a", "Pass@20"] == 75.0
    assert table.loc["a", "95% low"] < 75.0 < table.loc["a", "95% high"]
    assert table.loc["b"].tolist() == [50.0, 50.0, 50.0]


def test_doc_level_orders_documents_by_the_tie_rule():
    from ragkit.eval_runs import doc_level
    doc_of = {"a#0": "a", "a#1": "a", "b#0": "b", "c#0": "c"}
    ranking = [("a#0", 1.0), ("b#0", 1.0), ("a#1", 0.9), ("c#0", 0.5)]
    # a and b tie at their best chunks' 1.0: id descending puts b first, as trec_eval would
    assert doc_level(ranking, doc_of.__getitem__) == [("b", 1.0), ("a", 1.0), ("c", 0.5)]


def test_round_metrics_keeps_answer_scores_to_three_decimals_and_dollars_to_3_digits():
    table = pd.DataFrame({"faithfulness_lexical": [0.31234], "context_recall_golden": [0.98765],
                          "$ / query (projected)": [0.0023456], "answered %": [28.3237]})
    assert round_metrics(table).iloc[0].to_dict() == {
        "faithfulness_lexical": 0.312, "context_recall_golden": 0.988,
        "$ / query (projected)": "$0.00235", "answered %": 28.3}


def test_token_counts_are_shown_as_whole_numbers():
    """Notebooks 04, 06 and 07 showed mean tokens per query as 10048.4 and 2699.9: a tenth of
    a token is no information. Calls and dollars keep their decimals."""
    table = pd.DataFrame({"listwise input tokens (est.)": [10048.4, 391.6],
                          "prompt tokens (est.)": [1774.4, float("nan")],
                          "listwise calls": [12.34, 1.0], "$ / query": [0.0101768, 0.0397]})
    shown = round_metrics(table)
    assert shown.to_dict("list") == {"listwise input tokens (est.)": [10048, 392],
                                     "prompt tokens (est.)": ["1774", ""],
                                     "listwise calls": [12.3, 1.0],
                                     "$ / query": ["$0.0102", "$0.0397"]}
    assert str(shown["listwise input tokens (est.)"].dtype) == "int64"


def test_dollars_are_shown_to_the_three_significant_digits_the_report_prints():
    """Notebook 07's table showed $0.0031 and its report $0.00306 for the same cost."""
    from ragkit.money import dollars
    costs = [0.0030612, 0.069812, 3.84491, 11.6912, 0.0]
    shown = round_metrics(pd.DataFrame({"$/query": costs}))["$/query"].tolist()
    assert shown == ["$0.00306", "$0.0698", "$3.84", "$11.69", "$0.00"] == list(map(dollars, costs))


def test_round_metrics_shows_tables_with_a_repeated_column_or_nullable_floats():
    """Both raised (AttributeError, TypeError) once dollars and blanks were shown."""
    shown = round_metrics(pd.DataFrame([[1.04, 2.06, float("nan")]], columns=["a", "a", "$"]))
    assert shown.iloc[0].tolist() == [1.0, 2.1, ""]
    nullable = pd.DataFrame({"Pass@5": pd.array([91.54, None], dtype="Float64")})
    assert round_metrics(nullable)["Pass@5"].tolist() == ["91.5", ""]
    # a column with a blank is text at the column's decimals: MRR 0.710 beside 0.714 read
    # "0.71" (notebook 08's table of configurations)
    mrr = pd.DataFrame({"MRR": [0.71, 0.7143, float("nan")], "p": [0.5, 1.0, float("nan")]})
    assert round_metrics(mrr).to_dict("list") == {"MRR": ["0.710", "0.714", ""],
                                                  "p": ["0.500", "1.000", ""]}
