import json

import pandas as pd
import pytest

from ragkit.cli import main
from ragkit.documents import RagkitError
from ragkit.fusion import fuse
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.tune import (Choice, best_alpha, best_rrf_k, candidate_lists, convex, fusion_methods,
                         parse_grid, sweep_alpha, sweep_chunking, sweep_rrf_k, sweep_table)
from test_pipeline import DOCS, HashEmbedder

# q1: normalised (one-gap floor) dense a 1, b 11/12, c 1/3; BM25 c 1, a 5/11, d 1/3.
#     fused: a = α + (1−α)·5/11, b = α·11/12, c = α/3 + (1−α), d = (1−α)/3; c answers.
#     α = 0: c a d b → c at 1; α = 0.5: a .727, c .667 → c at 2; α = 1: a b c → c at 3.
# q2: dense x 1, y 1/2 (two items: floor one gap below y); BM25 y 1; x answers.
#     x = α, y = 1 − α/2: x leads only for α > 2/3 → x at 2, 2, 1.
LISTS = {
    "q1": {"dense": [("a", 0.9), ("b", 0.8), ("c", 0.1)],
           "bm25": [("c", 12.0), ("a", 3.0), ("d", 1.0)]},
    "q2": {"dense": [("x", 0.5), ("y", 0.4)], "bm25": [("y", 2.0)]},
}
JUDGMENTS = {"q1": [frozenset({"c"})], "q2": [frozenset({"x"})]}


def test_alpha_sweep_hand_computed():
    tables = sweep_alpha(LISTS, JUDGMENTS, (0.0, 0.5, 1.0))
    assert list(tables) == [0.0, 0.5, 1.0]
    assert tables[0.0]["MRR"].to_dict() == {"q1": 1.0, "q2": 0.5}
    assert tables[0.5]["MRR"].to_dict() == {"q1": 0.5, "q2": 0.5}
    assert tables[1.0]["MRR"].to_dict() == pytest.approx({"q1": 1 / 3, "q2": 1.0})
    table = sweep_table(tables)
    assert table["MRR"].tolist() == pytest.approx([0.75, 0.5, 2 / 3])
    choice = best_alpha(tables, "MRR")
    assert (choice.point, choice.mean) == (0.0, 0.75)


def test_fused_scores_are_the_convex_combination():
    fused = dict(convex(0.5)(LISTS["q1"], 4))
    assert fused == pytest.approx({"a": 0.5 + 0.5 * 5 / 11, "b": 0.5 * 11 / 12,
                                   "c": 0.5 / 3 + 0.5, "d": 0.5 / 3})


def _flat(points, values):
    """A sweep where every point scores `values[point]` on each of three queries."""
    return {p: pd.DataFrame({"Pass@5": [values[p]] * 3}, index=["q1", "q2", "q3"])
            for p in points}


def test_best_alpha_ties_go_to_the_alpha_nearest_one_half_then_the_larger():
    points = (0.3, 0.4, 0.6, 0.7)
    choice = best_alpha(_flat(points, {0.3: 80, 0.4: 90, 0.6: 90, 0.7: 90}))
    assert choice.point == 0.6  # 0.4 and 0.6 are equally near 0.5
    # every resample ties 0.4, 0.6 and 0.7: they share each vote, so the flat optimum shows
    # as a spread (it once read "0.6 … 0.6, chosen on 100 %")
    assert choice.tied == (0.4, 0.6, 0.7)
    assert (choice.low, choice.high) == (0.4, 0.7)
    assert choice.share == pytest.approx({0.3: 0, 0.4: 1 / 3, 0.6: 1 / 3, 0.7: 1 / 3})
    assert str(choice) == ("best 0.6 (Pass@5 90.0; 0.4, 0.6, 0.7 tie, the tie rule picks 0.6); "
                           "bootstrap 95 % range of the best: 0.4 … 0.7, chosen on 33.3 % of "
                           "resamples")
    assert best_alpha(_flat((0.2, 0.9), {0.2: 50, 0.9: 50})).point == 0.2
    assert best_alpha(_flat((0.2, 0.5), {0.2: 51, 0.5: 50})).point == 0.2  # no tie, best wins


def test_best_rrf_k_ties_go_to_the_k_nearest_60_in_log_scale():
    assert best_rrf_k(_flat((1, 20, 200), {1: 9, 20: 9, 200: 9})).point == 20  # 60/20 < 200/60
    assert best_rrf_k(_flat((30, 120), {30: 9, 120: 9})).point == 120  # equally near: larger


def test_bootstrap_spreads_over_alphas_that_trade_queries():
    # α 0.2 answers q1 and q2, α 0.8 answers q3 only: 0.2 is best, but a resample holding
    # mostly q3 picks 0.8, so the range covers both
    tables = {0.2: pd.DataFrame({"Pass@5": [100.0, 100.0, 0.0]}, index=["q1", "q2", "q3"]),
              0.8: pd.DataFrame({"Pass@5": [0.0, 0.0, 100.0]}, index=["q1", "q2", "q3"])}
    choice = best_alpha(tables)
    assert choice.point == 0.2 and choice.mean == pytest.approx(200 / 3)
    assert (choice.low, choice.high) == (0.2, 0.8)
    # a resample picks 0.8 when it draws q3 more often than q1 and q2 together: 7 of 27
    assert choice.share[0.8] == pytest.approx(7 / 27, abs=0.04)
    assert sweep_table(tables, choice)["chosen %"].tolist() == pytest.approx(
        [100 * choice.share[0.2], 100 * choice.share[0.8]])


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(RagkitError, match="unknown metric 'P@5' .*Pass@5"):
        best_alpha(sweep_alpha(LISTS, JUDGMENTS, (0.5,)), "P@5")


def test_rrf_k_changes_a_hand_checkable_order():
    # x: rank 1 in dense only → 1/(k+1); y: rank 4 in both → 2/(k+4). y leads iff k > 2.
    lists = {"dense": [("x", 0.9), ("a", 0.8), ("b", 0.7), ("y", 0.6)],
             "bm25": [("c", 9.0), ("d", 8.0), ("e", 7.0), ("y", 6.0)]}
    small = dict(fuse(lists, "rrf", rrf_k=1))
    assert (small["x"], small["y"]) == pytest.approx((1 / 2, 2 / 5))
    large = fuse(lists, "rrf", rrf_k=60)
    assert [i for i, _ in large[:2]] == ["y", "x"]  # x ties c at 1/61 and wins by id
    # the sweep sees the same: x first at k = 1 (ahead of c by id), second at k = 60
    tables = sweep_rrf_k({"q": lists}, {"q": [frozenset({"x"})]}, (1, 60))
    assert (tables[1]["MRR"]["q"], tables[60]["MRR"]["q"]) == (1.0, 0.5)


@pytest.fixture(scope="module")
def pipeline():
    return Pipeline.build(DOCS, IndexConfig(embedder="hash-test"), progress=False,
                          embedder=HashEmbedder())


QUESTIONS = ["How much did ACME revenue grow?", "refund within seven days",
             "Globex costs", "quarterly margins"]


def test_fusing_the_candidate_lists_reproduces_search(pipeline):
    from ragkit.documents import Query
    queries = [Query(f"q{i}", text) for i, text in enumerate(QUESTIONS)]
    lists = candidate_lists(pipeline, queries, depth=100)
    assert list(lists) == ["q0", "q1", "q2", "q3"]
    searched = pipeline.search(QUESTIONS, k=2)  # default: min-max, dense 0.6
    assert [convex(0.6)(lists[q.id], 2) for q in queries] == searched
    for rrf_k in (1, 60):
        config = SearchConfig(fusion="rrf", rrf_k=rrf_k)
        assert pipeline.search(QUESTIONS, 3, config) == [
            fuse(lists[q.id], "rrf", top=3, rrf_k=rrf_k) for q in queries]
    methods = fusion_methods()
    assert [methods["BM25"](lists[q.id], 3) for q in queries] == pipeline.search(
        QUESTIONS, 3, SearchConfig(mode="bm25"))


def test_sweep_chunking_indexes_each_chunking_and_reuses_a_built_one():
    from ragkit.documents import Document, Golden, Query
    clauses = " ".join(f"Clause {i}: refunds within {i} days." for i in range(1, 21))
    docs = [*DOCS, Document("policy.md", clauses, "Refund clauses")]
    queries = [Query("g1", "ACME revenue", golden=(Golden("acme-q2.md", span="grew 3 %"),)),
               Query("g2", "clause 7", golden=(Golden("policy.md", span="Clause 7:"),))]
    fresh = Pipeline.build(docs, IndexConfig(chunk_size=16, overlap=0, embedder=None),
                           progress=False)
    assert len(fresh.chunks) > 4  # one chunk per document at 512 tokens
    table = sweep_chunking(docs, queries, [(512, 64), (16, 0)], k=5, name="BM25")
    assert list(table.index) == ["BM25 512/64", "BM25 16/0"]
    assert table["chunks"].tolist() == [4, len(fresh.chunks)]
    assert table["Pass@5"].tolist() == [100.0, 100.0]  # rare words: BM25 finds both spans
    # an index given for a chunking is used as it is, not rebuilt
    reused = sweep_chunking(docs, queries, [(512, 64)], k=5, built={(512, 64): fresh})
    assert reused["chunks"].tolist() == [len(fresh.chunks)]


def test_rrf_k_must_be_positive():
    with pytest.raises(RagkitError, match="rrf_k must be a positive whole number, got 0"):
        SearchConfig(rrf_k=0)


@pytest.mark.parametrize("text, integer, expected", [
    ("0:1:0.25", False, (0.0, 0.25, 0.5, 0.75, 1.0)),
    ("0:1:0.1", False, tuple(round(0.1 * i, 10) for i in range(11))),
    ("0.4,0.6", False, (0.4, 0.6)),
    ("1,5,5,60", True, (1, 5, 60)),
    ("0:1:0.6", False, (0.0, 0.6)),  # never a point past STOP (it swept 1.2)
    ("10:100:60", True, (10, 70)),  # (it swept 130)
    ("0:1:0.001", False, tuple(round(0.001 * i, 10) for i in range(1001))),
])
def test_parse_grid(text, integer, expected):
    assert parse_grid(text, integer) == expected


@pytest.mark.parametrize("text, integer", [("0:1:0", False), ("1:0:0.1", False),
                                           ("a,b", False), ("1.5,2", True),
                                           # tracebacks, or 23 GB then killed, before
                                           ("inf", True), ("1e400", True), ("nan", True),
                                           ("0:inf:1", False), ("0:1:1e-9", False),
                                           ("1:1e12:1", True)])
def test_parse_grid_refuses_bad_input(text, integer):
    with pytest.raises(RagkitError):
        parse_grid(text, integer)


# --------------------------------------------------------------------------- command line

def _shipped(root):
    (root / "corpus").mkdir(parents=True)
    (root / "golden").mkdir()
    for doc in DOCS:
        (root / "corpus" / doc.id).write_text(f"---\ntitle: {doc.title}\n---\n{doc.text}\n")
    rows = [{"id": "d1", "question": "How much did ACME revenue grow?", "split": "dev",
             "golden": [{"doc_id": "acme-q2.md", "span": "Revenue grew 3 %"}]},
            {"id": "d2", "question": "How long do I have to return an item?", "split": "dev",
             "golden": [{"doc_id": "refund.md", "span": "within seven days"}]},
            {"id": "t1", "question": "Globex costs", "split": "test",
             "golden": [{"doc_id": "globex-q2.md", "span": "Costs fell"}]}]
    (root / "golden" / "en.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_tune_prints_both_sweeps_and_the_best_points(tmp_path, capsys, monkeypatch):
    from ragkit import embed, models
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    data = _shipped(tmp_path / "data")
    assert main(["tune", str(data), "--embedder", "minilm", "--alphas", "0:1:0.25",
                 "--rrf-ks", "1,60,200"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "data: 2 judged queries of split dev, 3 chunks"
    alpha_rows = [line.split()[0] for line in out[4:9]]
    assert alpha_rows == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    # three chunks: every α has Pass@5 = 100 on every query — a flat optimum, said as one
    assert ("dense weight α: best 0.5 (Pass@5 100.0; 0, 0.25, 0.5, 0.75, 1 tie, the tie rule "
            "picks 0.5); bootstrap 95 % range of the best: 0 … 1, chosen on 20.0 % of resamples"
            ) in out
    assert out[-2].startswith("RRF k: best 60 (Pass@5 100.0; 1, 60, 200 tie")
    # a tie is no evidence against the defaults (dense 0.6, k 60): keep them, not "0.5"
    assert out[-1] == ("  all 3 tie on Pass@5: keep the default 60 (--fusion rrf, no --rrf-k "
                       "needed) (swept without reranking: add --rerank none to reproduce this "
                       "table)")
    assert ("  all 5 tie on Pass@5: keep the default 0.6 (no --dense-weight needed) (swept "
            "without reranking: add --rerank none to reproduce this table)") in out


def test_the_tuned_weight_and_k_are_used_where_a_user_searches(tmp_path, capsys, monkeypatch):
    """`ragkit tune` printed a best α and RRF k that no command could search with."""
    from ragkit import embed, models
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    monkeypatch.setattr(embed, "default_cache_path", lambda: tmp_path / "cache.sqlite")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in {"a.md": "The kettle boils water in two minutes and switches itself off.",
                       "b.md": "Heating water: the appliance reaches a rolling boil quickly, "
                               "then stops on its own.",
                       "c.md": "Kettle kettle kettle: our kettle catalogue lists every kettle "
                               "colour and kettle price.",
                       "d.md": "The toaster browns bread evenly on both sides."}.items():
        (docs / name).write_text(text + "\n")
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "how fast does the kettle boil '
                                      'water"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "minilm"]) == 0

    def ranked(*options: str) -> list[tuple[str, float]]:
        run = tmp_path / "run.trec"
        assert main(["search", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.jsonl"),
                     "--out", str(run), "--rerank", "none", *options]) == 0
        return [(line.split()[2], float(line.split()[4])) for line in run.read_text().splitlines()]

    def order(*options: str) -> list[str]:
        return [ident for ident, _ in ranked(*options)]
    bm25, dense, default = order("--mode", "bm25"), order("--mode", "dense"), order()
    assert order("--dense-weight", "0")[:len(bm25)] == bm25 != default[:len(bm25)]
    assert order("--dense-weight", "1") == dense != default
    # b.md: BM25's first, dense's second: 1/(k+1) + 1/(k+2)
    assert ranked("--fusion", "rrf", "--rrf-k", "1")[0] == ("b.md#0", pytest.approx(1/2 + 1/3))
    assert ranked("--fusion", "rrf")[0] == ("b.md#0", pytest.approx(1/61 + 1/62))
    capsys.readouterr()
    for options, error in ((["--rrf-k", "5"], "--rrf-k does not apply to --fusion weighted "
                                              "(add --fusion rrf)"),
                           (["--mode", "bm25", "--dense-weight", "0.3"],
                            "--dense-weight sets how hybrid search fuses; this search is bm25")):
        assert main(["search", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.jsonl"),
                     "--out", str(tmp_path / "x.trec"), *options]) == 2
        assert capsys.readouterr().err == f"ragkit: error: {error}\n"


def test_tune_without_dense_vectors_is_a_one_line_error(tmp_path, capsys):
    data = _shipped(tmp_path / "data")
    assert main(["tune", str(data), "--embedder", "none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragkit: error: tune weighs BM25 against dense") and err.count("\n") == 1
    assert main(["tune", str(data), "--embedder", "none", "--alphas", "0:1"]) == 2
    assert "expected START:STOP:STEP" in capsys.readouterr().err
    # refused before the data is read: the folder named here does not exist
    assert main(["tune", str(tmp_path / "absent"), "--alphas", "0.5,1.5"]) == 2
    assert capsys.readouterr().err == ("ragkit: error: a dense weight α must lie in [0, 1], "
                                       "got 1.5\n")
    assert main(["tune", str(data), "--metric", "Pass@20", "--k", "10"]) == 2
    assert "unknown metric 'Pass@20' (known at k = 10: Pass@5, Pass@10, R@5" in (
        capsys.readouterr().err)


def test_tune_help_shows_every_default(capsys):
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("--split SPLIT queries of this split, or all (default: dev when there is "
                  "one, else all)",
                  "(default: Pass@5)", "(default: 0:1:0.1)", "(default: 1,5,10,20,40,60,100,200)",
                  "--k K results per query (default: 20)", "(default: auto)"):
        assert shown in text, shown


def test_sweep_tables_print_every_row_at_the_metrics_decimals():
    """pandas printed a column of 1.0 and 0.98 as "1.00" / "0.98" beside "0.957" ones."""
    import pandas as pd
    from ragkit.cli.scoring import metrics_text
    table = pd.DataFrame({"Pass@5": [86.5, 87.0], "R@20": [1.0, 0.98], "MRR": [0.7, 0.75]},
                         index=[1, 5])
    assert metrics_text(table).splitlines() == ["  Pass@5  R@20   MRR",
                                                "1   86.5 1.000 0.700",
                                                "5   87.0 0.980 0.750"]


def test_the_best_point_is_printed_at_its_metrics_decimals():
    """`--metric MRR` printed "best 0.6 (MRR 0.8)" beside a table row of 0.810."""
    import pandas as pd
    choice = Choice(0.6, "MRR", 0.8104, 0.4, 0.8, {0.6: 0.5}, (0.6,))
    assert str(choice).startswith("best 0.6 (MRR 0.810); ")
    assert str(Choice(0.6, "Pass@5", 87.71, 0.4, 0.8, {0.6: 0.5}, (0.6,))).startswith(
        "best 0.6 (Pass@5 87.7); ")


def test_a_tie_with_the_default_keeps_the_default():
    """`ragkit tune` advised "--dense-weight 0.5" when every α tied, unlike the 0.6 it searches
    with by default, on no evidence; a point better than the default is still advised."""
    better = Choice(0.3, "Pass@5", 90.0, 0.2, 0.4, {0.3: 0.9, 0.6: 0.1}, (0.3,))
    assert better.advice(0.6, "--dense-weight") == (
        "search with it: ragkit search|eval|ask ... --dense-weight 0.3")
    shared = Choice(0.5, "Pass@5", 90.0, 0.5, 0.6, {0.1: 0.0, 0.5: 0.5, 0.6: 0.5}, (0.5, 0.6))
    assert shared.advice(0.6, "--dense-weight") == (
        "the default ties on Pass@5: keep the default 0.6 (no --dense-weight needed)")
    flat = Choice(60, "MRR", 0.5, 1, 200, {1: 1 / 3, 60: 1 / 3, 200: 1 / 3}, (1, 60, 200))
    assert flat.advice(60, "--rrf-k", "--fusion rrf") == (
        "all 3 tie on MRR: keep the default 60 (--fusion rrf, no --rrf-k needed)")
    assert Choice(10, "MRR", 0.5, 1, 10, {1: 0.0, 10: 1.0}, (10,)).advice(
        60, "--rrf-k", "--fusion rrf") == (
        "search with it: ragkit search|eval|ask ... --fusion rrf --rrf-k 10")
    # `--alphas 0.5`: "all 1 tie … keep the default 0.6", a default never measured
    assert Choice(0.5, "Pass@5", 90.0, 0.5, 0.5, {0.5: 1.0}, (0.5,)).advice(
        0.6, "--dense-weight") == ("only 0.5 was swept on Pass@5, and the default 0.6 was not "
                                   "swept: nothing to choose on; sweep it too")
    # a flat sweep around the default (0:1:0.25) keeps it, unmeasured between its neighbours
    assert Choice(0.5, "MRR", 0.5, 0, 1, {0.25: 0.5, 0.75: 0.5}, (0.25, 0.75)).advice(
        0.6, "--dense-weight") == ("all 2 tie on MRR: keep the default 0.6 (no --dense-weight "
                                   "needed)")
    assert Choice(0.3, "MRR", 0.5, 0.3, 0.5, {0.3: 0.5, 0.5: 0.5}, (0.3, 0.5)).advice(
        0.6, "--dense-weight") == ("all 2 tie on MRR, and the default 0.6 was not swept: "
                                   "nothing to choose on; sweep it too")


def test_a_sweep_at_a_deep_k_scores_the_top_as_search_does():
    """`ragkit tune --k 300` fused 300-deep lists: on the shipped dev split its α table's
    Pass@5 at 0.6 moved from 74.0 to 71.6 and its advice with it, while `eval --k 300`, which
    fuses the top 100 of each list as search does, kept 74.0."""
    import random
    from ragkit.documents import Document, Query
    from test_search import BagOfWords
    rng = random.Random(5)
    words = "tea kettle milk bread toast oven fridge cold hot water cup plate spoon".split()
    docs = [Document(f"d{i:03d}", " ".join(rng.choice(words) for _ in range(9)))
            for i in range(300)]
    pipeline = Pipeline.build(docs, IndexConfig(contextualizer="none", embedder="bag"),
                              progress=False, embedder=BagOfWords())
    queries = [Query(f"q{i}", " ".join(rng.choice(words) for _ in range(3))) for i in range(40)]
    eighth = pipeline.search([q.text for q in queries], 8, SearchConfig(mode="dense"))
    judgments = {q.id: [frozenset({found[-1][0]})] for q, found in zip(queries, eighth)}
    shallow = sweep_alpha(candidate_lists(pipeline, queries, 100), judgments, (0.3, 0.6), k=20)
    deep = sweep_alpha(candidate_lists(pipeline, queries, 300), judgments, (0.3, 0.6), k=300)
    for alpha in (0.3, 0.6):
        for metric in ("Pass@5", "Pass@10", "Pass@20"):
            assert deep[alpha][metric].tolist() == shallow[alpha][metric].tolist(), (alpha,
                                                                                      metric)
    found = pipeline.run(queries, 300, SearchConfig(weights={"dense": 0.3, "bm25": 0.7}))
    assert 100 * sum(bool(judgments[q][0] & set(found[q][:5])) for q in found) / 40 == \
        deep[0.3]["Pass@5"].mean() > 0


def test_the_peak_sentence_names_points_tied_at_the_top_together():
    """With `idxmax` alone, a tie read "peaks at α = 0.6 (Pass@5 85.6 against 85.6 at the
    chosen 0.7)" (notebook 03, `-p split=dev -p tune_split=test`): compared as shown."""
    import pandas as pd
    from ragkit.sweep_prose import peak_sentence
    tied = pd.DataFrame({"Pass@5": [80.0, 85.61, 85.58, 84.0]}, index=[0.5, 0.6, 0.7, 0.8])
    assert peak_sentence(tied, 0.7, "dev") == \
        "On the dev split the sweep peaks at the chosen α = 0.7 (Pass@5 85.6), tied with 0.6."
    assert peak_sentence(tied, 0.5, "dev") == ("On the dev split the sweep peaks at α = 0.6 "
                                               "and 0.7 (Pass@5 85.6 against 80.0 at the "
                                               "chosen 0.5).")
    apart = pd.DataFrame({"Pass@5": [80.0, 87.7, 88.1, 87.7]}, index=[0.5, 0.6, 0.7, 0.8])
    assert peak_sentence(apart, 0.6, "test") == ("On the test split the sweep peaks at α = 0.7 "
                                                 "(Pass@5 88.1 against 87.7 at the chosen 0.6).")
    assert peak_sentence(apart, 0.7, "test") == \
        "On the test split the sweep peaks at the chosen α = 0.7 (Pass@5 88.1)."


def test_the_peak_sentence_leaves_out_failed_points_and_writes_points_as_prose_does():
    """A chosen point the table lacks raised KeyError, a table of NaN IndexError, and an RRF
    k of a million read "1e+06"."""
    import pandas as pd
    from ragkit.sweep_prose import peak_sentence
    ks = pd.DataFrame({"Pass@5": [70.0, float("nan"), 72.0]}, index=[60, 1000, 1_000_000])
    assert peak_sentence(ks, 1000, "dev", name="k") == \
        "On the dev split the sweep peaks at k = 1,000,000 (Pass@5 72.0)."
    assert peak_sentence(ks, 5, "dev", name="k") == \
        "On the dev split the sweep peaks at k = 1,000,000 (Pass@5 72.0)."
    assert peak_sentence(ks.iloc[[1]], 60, "dev", name="k") == \
        "On the dev split the sweep has no Pass@5 to compare."
