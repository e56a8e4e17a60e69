"""The rerank stage, the offline reranker's features and model file, and its training."""
import hashlib
import json

import numpy as np
import pytest

from ragkit import models, rerank
from ragkit.dense import DenseIndex
from ragkit.documents import Chunk, Document, RagkitError, RagkitWarning
from ragkit.lexical import BM25
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig
from ragkit.rerank import Candidate, NoRerank, RerankStage, get_reranker
from ragkit.rerank.features import (FEATURES, bm25_scores, doc_max, feature_matrix,
                                    from_signals, maxp_scores, normalize, phrase_share,
                                    word_pairs)
from ragkit.rerank.offline import (MODEL_PATH, MODEL_SHA256, LinearModel, OfflineReranker,
                                   order)
from ragkit.train_reranker import data_sha256, fit, pairs


def _candidates(*ids, doc="d"):
    return [Candidate(Chunk(i, doc, f"text of {i}"), score=1.0 - n / 10)
            for n, i in enumerate(ids)]


class Reverse:
    name = "reverse"

    def __init__(self):
        self.calls = 0

    def rerank(self, query, candidates, k):
        self.calls += 1
        return [(c.chunk.id, float(n)) for n, c in enumerate(candidates)][::-1][:k]


class Reply:
    """A reranker that answers whatever it is given (a bad reply, or raises)."""

    name = "reply"

    def __init__(self, reply):
        self.reply = reply

    def rerank(self, query, candidates, k):
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


# --------------------------------------------------------------------------- the stage

def test_stage_returns_the_rerankers_top_k():
    stage = RerankStage(Reverse())
    assert stage("q", _candidates("a", "b", "c"), 2) == [("c", 2.0), ("b", 1.0)]
    assert (stage.queries, stage.fallbacks) == (1, 0)


def test_no_rerank_cuts_the_first_stage_order():
    assert NoRerank().rerank("q", _candidates("a", "b", "c"), 2) == [("a", 1.0), ("b", 0.9)]


def test_empty_candidates_give_an_empty_result_without_calling_the_reranker():
    reverse = Reverse()
    stage = RerankStage(reverse)
    assert stage("q", [], 5) == []
    assert (reverse.calls, stage.queries) == (0, 0)


@pytest.mark.parametrize("reply, reason", [
    (RuntimeError("connection reset"), "RuntimeError: connection reset"),
    ("[2] > [1]", "expected a list of (id, score), got str"),
    ([("a", 1.0), ("zz", 0.5)], "unknown passage 'zz'"),
    ([("a", 1.0), ("a", 0.5)], "a passage is ranked twice"),
    ([("b", 1.0)], "1 passages ranked, expected 2"),
    ([("b", "high"), ("a", 0.5)], "score 'high' of 'b' is not a number"),
    ([("b",), ("a", 0.5)], "entry ('b',) is not an (id, score) pair"),
])
def test_a_failing_reranker_keeps_the_first_stage_order_with_a_warning(reply, reason):
    stage = RerankStage(Reply(reply))
    with pytest.warns(RagkitWarning, match="reranker reply: ") as caught:
        ranking = stage("which one", _candidates("a", "b", "c"), 2)
    assert ranking == [("a", 1.0), ("b", 0.9)]
    assert reason in str(caught[0].message)
    assert (stage.queries, stage.fallbacks) == (1, 1)
    assert stage.summary() == ("reranker reply: failed on 1 of 1 queries, which kept the "
                               "first-stage order")


def test_unknown_reranker_names_the_known_ones():
    with pytest.raises(RagkitError, match="unknown reranker 'cohere'; known rerankers: none, "
                                          "offline, claude, voyage:MODEL"):
        get_reranker("cohere")


# --------------------------------------------------------------------------- in the pipeline

DOCS = [
    Document("acme.md", "Revenue grew 3 % over the previous quarter. Margins held.", "ACME Q2"),
    Document("globex.md", "Revenue grew 5 % over the previous quarter. Costs fell.", "Globex Q2"),
    Document("refund.md", "Refunds are accepted within seven days of purchase.", "Refund policy"),
]


@pytest.fixture
def bm25_only(monkeypatch):
    reverse = Reverse()
    monkeypatch.setitem(rerank.RERANKERS, "reverse", lambda: reverse)
    monkeypatch.setitem(rerank.RERANKERS, "broken", lambda: Reply(ValueError("bad")))
    return Pipeline.build(DOCS, IndexConfig(embedder=None), progress=False)


def test_pipeline_reranks_the_first_stage_candidates(bm25_only):
    query = ["revenue grew over the previous quarter"]
    first = bm25_only.search(query, 3, SearchConfig("bm25"))[0]
    (found,) = bm25_only.candidates(query, SearchConfig("bm25"))
    assert [c.chunk.id for c in found] == [ident for ident, _ in first]
    assert found[0].signals == {"bm25": first[0][1], "bm25_rank": 1}
    (reranked,) = bm25_only.search(query, 2, SearchConfig("bm25", rerank="reverse"))
    assert [ident for ident, _ in reranked] == [ident for ident, _ in first[::-1]][:2]
    assert bm25_only.rerank_stages["reverse"].queries == 1


def test_pipeline_counts_fallbacks_and_keeps_going(bm25_only):
    config = SearchConfig("bm25", rerank="broken")
    with pytest.warns(RagkitWarning, match="kept the first-stage order"):
        rankings = bm25_only.search(["revenue", "refund days"], 2, config)
    assert rankings == bm25_only.search(["revenue", "refund days"], 2, SearchConfig("bm25"))
    assert (bm25_only.rerank_stages["broken"].queries,
            bm25_only.rerank_stages["broken"].fallbacks) == (2, 2)


def test_k_larger_than_the_index_reranks_the_whole_index(bm25_only):
    config = SearchConfig("bm25", rerank="reverse")
    assert bm25_only.search(["revenue"], 4, config) == bm25_only.search(["revenue"], 3, config)
    with pytest.raises(RagkitError, match="rerank_candidates must be a positive whole number, got 0"):
        SearchConfig(rerank_candidates=0)


def test_offline_reranker_runs_on_a_bm25_only_index(bm25_only):
    (ranking,) = bm25_only.search(["refund within seven days"], 3,
                                  SearchConfig("bm25", rerank="offline"))
    assert ranking[0][0] == "refund.md#0"


# --------------------------------------------------------------------------- features

def test_word_pairs_skip_stopword_pairs_and_repeats():
    assert word_pairs("How do you create a new DiffExecutor, a new one?") == [
        ("you", "create"), ("create", "a"), ("a", "new"), ("new", "diffexecutor"),
        ("diffexecutor", "a"), ("new", "one")]  # how-do and do-you are stopword pairs


def test_phrase_share_counts_adjacent_pairs_only():
    pairs = [("refund", "window"), ("seven", "days"), ("gift", "card")]
    text = "The refund window is Seven-days; a card gift is not refunded."
    assert phrase_share(pairs, text) == pytest.approx(2 / 3)
    assert phrase_share([("refund", "win")], "refund window") == 0.0  # whole words only
    assert phrase_share([], text) == 0.0


def test_doc_max_is_the_best_candidate_of_the_same_document():
    assert doc_max(["a", "b", "a", "c"], [0.2, 0.9, 0.7, 0.1]).tolist() == [0.7, 0.9, 0.7, 0.1]


def test_from_signals_gives_a_missing_chunk_the_lowest_score():
    found = [Candidate(Chunk("x", "d", "t"), 1.0, {"bm25": 4.0}),
             Candidate(Chunk("y", "d", "t"), 0.5, {}),
             Candidate(Chunk("z", "d", "t"), 0.2, {"bm25": 1.5})]
    assert from_signals(found, "bm25").tolist() == [4.0, 1.5, 1.5]
    assert from_signals(found, "dense").tolist() == [0.0, 0.0, 0.0]


def test_maxp_scores_take_each_chunks_best_window():
    vectors = np.array([[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6]], dtype=np.float32)
    dense = DenseIndex(vectors, np.array([0, 0, 1, 2]))  # chunk 0 owns two windows
    query = np.array([0.0, 1.0])
    assert maxp_scores(dense, query, np.array([2, 0, 1])) == pytest.approx([0.6, 1.0, 0.8])


def test_bm25_scores_equal_the_index_scores_at_those_positions():
    bm25 = BM25.fit(["refund policy days", "shipping days", "refund refund card", "other"],
                    tokenizer="code")
    positions = np.array([2, 0, 3])
    assert bm25_scores(bm25, "refund days", positions) == \
        pytest.approx(bm25.scores("refund days")[positions])
    assert bm25_scores(bm25, "unknown words", positions).tolist() == [0.0, 0.0, 0.0]


def test_feature_matrix_by_hand():
    found = [Candidate(Chunk("a#0", "a", "seven days refund"), 0.9),
             Candidate(Chunk("b#0", "b", "refund by card"), 0.5),
             Candidate(Chunk("a#1", "a", "nothing here"), 0.1)]
    x = feature_matrix("seven days", found, np.array([0.5, 0.7, 0.3]), np.array([2.0, 0.0, 1.0]),
                       second=np.array([0.2, 0.6, 0.4]))
    assert FEATURES == ("dense", "bm25", "doc_max", "phrase", "second_maxp")
    np.testing.assert_allclose(x, [[0.5, 1.0, 1.0, 1.0, 0.0],  # min-max within the query
                                   [1.0, 0.0, 0.0, 0.0, 1.0],
                                   [0.0, 0.5, 1.0, 0.0, 0.5]])  # doc a's best is 0.9
    no_index = feature_matrix("q", found, None, np.zeros(3))
    assert no_index[:, 0].tolist() == no_index[:, 4].tolist() == [0, 0, 0]
    assert feature_matrix("q", [], None, np.zeros(0)).shape == (0, 5)


# --------------------------------------------------------------------------- the model file

def test_committed_model_loads_and_matches_its_pinned_hash():
    assert hashlib.sha256(MODEL_PATH.read_bytes()).hexdigest() == MODEL_SHA256
    model = OfflineReranker().model
    assert model.features == FEATURES
    assert model.trained_on["data"] == ("ragkit shipped data and held-out scikit-learn "
                                        "docstrings, split dev")
    assert model.trained_on["index"]["embedder"] == "e5-small"
    assert len(model.trained_on["data_sha256"]) == 64


def test_the_training_script_finds_the_shipped_data_and_the_held_out_extractor():
    """`python -m ragkit.train_reranker` reads the repository's data/ and extracts the
    held-out set with the script in data/generators/ (paths from the module's own place)."""
    from ragkit import train_reranker
    assert (train_reranker.DATA / "golden" / "en.jsonl").is_file()
    assert all(script.is_file() for script in train_reranker.EXTRACTORS.values())
    assert train_reranker.HELDOUT == train_reranker.ROOT / "build" / "heldout"
    assert train_reranker.FITTED_ON == ("sklearn",)  # the code set is only reported


def test_the_second_view_is_the_other_model_family():
    from ragkit.rerank.second_view import view_model
    assert [view_model(e) for e in ("e5-small", "auto", "minilm", "voyage:voyage-3.5", None)] \
        == ["auto", "e5-small", "e5-small", "auto", "auto"]


def test_a_changed_model_file_is_a_clear_error(tmp_path):
    edited = tmp_path / "model.json"
    edited.write_text(MODEL_PATH.read_text().replace('"weights": [', '"weights": [ ', 1))
    with pytest.raises(RagkitError, match="model.json: sha256 .* does not match the pinned"):
        OfflineReranker(edited)
    record = json.loads(MODEL_PATH.read_text())
    edited.write_text(json.dumps({**record, "features": ["dense", "bm25"]}))
    with pytest.raises(RagkitError, match="field 'features'"):
        OfflineReranker(edited, sha256=None)
    edited.write_text("{not json")
    with pytest.raises(RagkitError, match="malformed JSON"):
        OfflineReranker(edited, sha256=None)
    with pytest.raises(RagkitError, match="cannot read the reranker model"):
        OfflineReranker(tmp_path / "absent.json")


def test_model_scores_standardised_features_times_weights():
    model = LinearModel(FEATURES, [0, 0, 0.5, 0, 1], [1, 1, 0.5, 1, 2], [2, 1, 1, 0, 1])
    x = np.array([[1.0, 0.0, 1.0, 0.0, 3.0], [0.0, 1.0, 0.5, 1.0, 1.0]])
    assert model.score(x).tolist() == [4.0, 1.0]
    found = _candidates("a", "b")
    assert order(found, np.array([1.0, 1.0]), 2) == [("a", 1.0), ("b", 1.0)]  # ties: first stage


# --------------------------------------------------------------------------- training

def _groups():
    rng = np.random.default_rng(3)
    groups = []
    for _ in range(6):
        x = rng.random((10, len(FEATURES)))
        y = np.zeros(10, dtype=int)
        y[np.argmax(x[:, 0] + 0.1 * x[:, 1])] = 1
        groups.append((x, y))
    return groups


def test_pairs_are_every_relevant_minus_every_other_both_ways():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    px, py = pairs([(x, np.array([1, 0, 0]))])
    assert px.tolist() == [[1, -1], [0.5, -0.5], [-1, 1], [-0.5, 0.5]]
    assert py.tolist() == [1, 1, 0, 0]
    with pytest.raises(ValueError, match="no question has both"):
        pairs([(x, np.zeros(3, dtype=int))])


def test_a_tiny_fit_learns_the_separating_feature_and_writes_the_same_bytes(tmp_path):
    model = fit(_groups(), trained_on={"data": "synthetic"})
    assert np.argmax(model.weights) == 0 and model.weights[0] > 0
    assert model.trained_on == {"data": "synthetic", "pairs": 54}
    assert fit(_groups(), trained_on={"data": "synthetic"}).to_json() == model.to_json()
    path = tmp_path / "m.json"
    path.write_text(model.to_json())
    again = LinearModel.load(path, hashlib.sha256(path.read_bytes()).hexdigest())
    x = np.random.default_rng(0).random((5, len(FEATURES)))
    assert again.score(x) == pytest.approx(model.score(x), rel=1e-3)  # 6 digits kept


def test_training_data_hash_changes_with_a_golden_item():
    from ragkit.documents import Golden, Query
    docs = [Document("a", "alpha")]
    one = [Query("q", "alpha?", golden=(Golden("a", span="alpha"),))]
    two = [Query("q", "alpha?", golden=(Golden("a", span="alph"),))]
    assert data_sha256(docs, one) != data_sha256(docs, two)
    assert data_sha256(docs, one) == data_sha256(list(docs), list(one))


# --------------------------------------------------------------------------- command line

@pytest.fixture
def index(tmp_path, bm25_only):
    from ragkit.cli import main
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": d.id, "text": d.text, "title": d.title}) + "\n"
                            for d in DOCS))
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "text": "revenue quarter"}\n'
                       '{"id": "q2", "text": "refund days"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    return ["search", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25",
            "--out", str(tmp_path / "run.trec")], tmp_path / "run.trec"


def test_cli_search_falls_back_warns_and_counts(index, capsys):
    from ragkit.cli import main
    from ragkit.runs import read_trec
    search, run = index
    capsys.readouterr()
    assert main([*search, "--k", "2"]) == 0  # --mode bm25: no reranking unless asked
    plain = read_trec(run)
    assert "reranker" not in capsys.readouterr().err
    assert main([*search, "--k", "2", "--rerank", "broken"]) == 0
    err = capsys.readouterr().err
    assert err.count("ragkit: warning: reranker reply: ValueError: bad; kept the first-stage "
                     "order") == 2
    assert "reranker reply: failed on 2 of 2 queries, which kept the first-stage order" in err
    assert read_trec(run) == plain


def test_cli_search_reranks_and_refuses_bad_rerank_options(index, capsys):
    from ragkit.cli import main
    from ragkit.runs import read_trec
    search, run = index
    assert main([*search, "--k", "2"]) == 0
    plain = [c for c, _ in read_trec(run)["q1"]]
    assert main([*search, "--k", "2", "--rerank", "reverse", "--rerank-candidates", "3"]) == 0
    out = capsys.readouterr().out
    assert "reranker reverse: reranked 2 queries" in out and "first-stage" not in out
    assert len(plain) == 2 and [c for c, _ in read_trec(run)["q1"]] == plain[::-1]
    assert main([*search, "--rerank", "reverse", "--k", "5"]) == 0  # the whole index, said once
    assert capsys.readouterr().err.splitlines() == [
        "ragkit: warning: k=5 is larger than the index (3 chunks); returning 3"]
    for options, message in [(["--rerank", "cohere"], "unknown reranker 'cohere'")]:
        assert main([*search, *options]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ragkit: error: ") and message in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:  # argparse refuses it, like --k 0
        main([*search, "--rerank", "reverse", "--rerank-candidates", "0"])
    assert exit_.value.code == 2
    assert "--rerank-candidates: must be at least 1, got 0" in capsys.readouterr().err


# --------------------------------------------------------------------------- regression

def test_cookbook_numbers_with_and_without_the_offline_reranker(cookbook_dir, monkeypatch):
    """The numbers benchmarks/bench_rerank.py reports (embeddings come from the cache)."""
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    import ragkit
    from ragkit.evaluate import judge, per_query
    data = ragkit.load_cookbook(cookbook_dir)
    pipeline = Pipeline.build(data.documents, IndexConfig(), chunks=data.chunks, progress=False)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    means = {}
    for name in ("none", "offline"):
        run = pipeline.run(data.queries, 20, SearchConfig(rerank=name))
        means[name] = per_query(run, judgments).mean()
    assert means["none"]["Pass@5"] == pytest.approx(87.740, abs=0.001)
    assert means["offline"][["Pass@5", "Pass@10", "Pass@20"]].tolist() == \
        pytest.approx([85.522, 91.297, 95.296], abs=0.001)
    assert means["offline"]["MRR"] == pytest.approx(0.738, abs=0.0005)


# --------------------------------------------------------------------------- the second view

def _second_view_index():
    from word_embedder import WordEmbedder
    words = ["refund", "days", "revenue", "costs"]
    docs = [*DOCS, Document("long.md", "costs costs costs costs costs costs refund days costs "
                                       "costs costs costs costs costs", "Long")]
    config = IndexConfig(contextualizer="none", window=4)
    pipeline = Pipeline.build(docs, config, progress=False, embedder=WordEmbedder(words))
    return pipeline, WordEmbedder(words)


def test_the_second_view_scores_a_chunk_by_its_best_window_embedding_each_once():
    from ragkit.rerank.second_view import SecondView
    pipeline, second = _second_view_index()
    view = SecondView(pipeline, second)
    position = {c.id: n for n, c in enumerate(pipeline.chunks)}
    long, refund = position["long.md#0"], position["refund.md#0"]
    scores = view.scores("refund days", [long, refund])
    # the window "costs costs refund days" (by hand: 2 / (√2 · √6)) beats the whole chunk's
    # 2 / (√2 · √146); "Refunds are accepted within seven days" has only "days" (1 / √2)
    assert scores == pytest.approx([2 / (2 ** 0.5 * 6 ** 0.5), 1 / 2 ** 0.5], rel=1e-4)
    calls = second.calls  # the windows once, the query once
    assert calls == 2
    assert view.scores("costs", [refund, long]).tolist() == pytest.approx([0.0, 1.0], abs=2e-3)
    assert second.calls == calls + 1  # only the query: the windows are held
    assert view.scores("refund", []).size == 0


def _asked_bars(monkeypatch, second):
    """The `progress` option of each `second.embed` call, in order."""
    asked = []
    embed = second.embed
    monkeypatch.setattr(second, "embed", lambda texts, **options: asked.append(
        options.get("progress", False)) or embed(texts, input_type=options["input_type"]))
    return asked


def test_a_first_query_over_many_fresh_windows_shows_a_bar(monkeypatch):
    """The first search on a new index sat silent for a minute while the second view embedded
    150 candidates' windows; from `PROGRESS_TEXTS` windows at once the embedder shows its bar."""
    from ragkit.rerank import second_view
    pipeline, second = _second_view_index()
    asked = _asked_bars(monkeypatch, second)
    view = second_view.SecondView(pipeline, second)
    view.scores("refund", [0])
    monkeypatch.setattr(second_view, "PROGRESS_TEXTS", 1)
    view.scores("refund", [1])
    assert asked == [False, False, True, False]  # windows, query; windows (bar), query


def test_the_second_views_bar_shows_on_a_commands_redirected_stderr(monkeypatch):
    """`ragkit search --queries q.txt 2> log` (stderr a file, no terminal) sat 4.5 minutes
    with nothing in the log while a fresh 5k-document index's candidates were embedded: the
    bar was kept for a terminal or JupyterLab only. A command's log shows it, as `ragkit
    index`'s bars."""
    from ragkit import progress
    from ragkit.rerank import second_view
    pipeline, second = _second_view_index()
    asked = _asked_bars(monkeypatch, second)
    monkeypatch.setattr(second_view, "PROGRESS_TEXTS", 1)
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: False, raising=False)
    monkeypatch.delenv(progress.SESSION_ENV, raising=False)
    assert progress.cell_display() is None  # not a kernel: a command
    second_view.SecondView(pipeline, second).scores("refund", [0])
    assert asked == [True, False]


def test_the_second_views_bar_stays_out_of_a_kernel_no_one_watches(monkeypatch):
    """papermill's kernel (no Jupyter session) kept the bar and its timings in notebook 02's
    committed output with embedder=minilm; JupyterLab's kernel (a session) shows it."""
    from ragkit import progress
    from ragkit.rerank import second_view
    pipeline, second = _second_view_index()
    asked = _asked_bars(monkeypatch, second)
    monkeypatch.setattr(second_view, "PROGRESS_TEXTS", 1)
    monkeypatch.setattr(progress, "cell_display", lambda: print)  # a Jupyter kernel
    monkeypatch.delenv(progress.SESSION_ENV, raising=False)
    second_view.SecondView(pipeline, second).scores("refund", [0])
    monkeypatch.setenv(progress.SESSION_ENV, "notebooks/02_contextual_retrieval.ipynb")
    second_view.SecondView(pipeline, second).scores("refund", [1])
    assert asked == [False, False, True, False]  # unwatched: no bar; in JupyterLab: a bar


def test_index_features_fill_the_second_view_column_and_leave_it_zero_without_vectors(bm25_only):
    from ragkit.rerank.features import IndexFeatures
    pipeline, second = _second_view_index()
    features = IndexFeatures(pipeline)
    features.second_view._embedder = second
    (found,) = pipeline.candidates(["refund days"], SearchConfig(rerank_candidates=4))
    x = features("refund days", found)
    assert x[:, FEATURES.index("second_maxp")].tolist() == pytest.approx(normalize(
        features.second_view.scores("refund days", [features.position[c.chunk.id]
                                                    for c in found])).tolist())
    (plain,) = bm25_only.candidates(["refund days"], SearchConfig("bm25"))
    bare = IndexFeatures(bm25_only)
    assert bare("refund days", plain)[:, FEATURES.index("second_maxp")].tolist() == \
        [0.0] * len(plain)
    assert bare.second_view._embedder is None  # no model loaded for a BM25-only index


def test_cli_search_says_when_the_offline_stand_in_ordered_for_claude(index, capsys,
                                                                       monkeypatch):
    """`--rerank claude` without a key must not read as if Claude had ranked the results."""
    from ragkit.cli import main
    search, _ = index
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main([*search, "--k", "2", "--rerank", "claude"]) == 0
    assert ("reranker claude: reranked 2 queries — ANTHROPIC_API_KEY is not set, so the offline "
            "stand-in ordered them (a documented lexical rule, not Claude)"
            ) in capsys.readouterr().out
    assert main([*search, "--k", "2", "--rerank", "reverse"]) == 0
    assert "ANTHROPIC_API_KEY" not in capsys.readouterr().out
