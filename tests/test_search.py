"""Pipeline.search / run: the tie rule in every mode, and refused cutoffs."""
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from ragkit.documents import Document, Query, RagkitError
from ragkit.pipeline import IndexConfig, Pipeline, SearchConfig


class BagOfWords:
    """A deterministic embedder for tests: identical texts get identical vectors."""

    name, dim, max_tokens = "bag-test", 32, 256

    def embed(self, texts, *, input_type="document", progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def token_lengths(self, texts):
        return [len(t.split()) for t in texts]


TWINS = [Document(name, "Refunds are accepted within seven days.") for name in "abcde"]
OTHERS = [Document(f"z{i}", text) for i, text in enumerate([
    "Shipping takes two weeks by sea.", "Invoices are sent monthly.", "Support answers by email.",
    "Gift cards never expire.", "Prices include tax.", "Orders ship from Berlin.",
    "Returns need the original box.", "Accounts close after a year of silence."])]


@pytest.fixture(scope="module")
def twins():
    return Pipeline.build(TWINS + OTHERS, IndexConfig(contextualizer="none", embedder="bag"),
                          progress=False, embedder=BagOfWords())


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_tied_chunks_rank_by_id_descending_even_across_the_cut(twins, mode):
    # five identical chunks tie; the retrievers return them by position (a first), so the
    # top 2 are d and e only if ties past the cut are fetched and ordered by id
    for fusion in (["weighted", "rrf", "weighted_rank"] if mode == "hybrid" else ["weighted"]):
        config = SearchConfig(mode=mode, fusion=fusion, candidates=2)
        (top,) = twins.search(["refund within seven days"], k=2, config=config)
        assert [ident for ident, _ in top] == ["e#0", "d#0"], (mode, fusion)
        (five,) = twins.search(["refund within seven days"], k=5, config=config)
        assert [ident for ident, _ in five] == ["e#0", "d#0", "c#0", "b#0", "a#0"]


def test_run_follows_search_order(twins):
    run = twins.run([Query("q", "seven days refund")], k=3, config=SearchConfig("bm25"))
    assert run == {"q": ["e#0", "d#0", "c#0"]}


@pytest.mark.parametrize("k", [0, -3])
def test_non_positive_k_is_refused(twins, k):
    with pytest.raises(RagkitError, match=f"k must be a positive whole number, got {k}"):
        twins.search(["refund"], k=k, config=SearchConfig("bm25"))
    with pytest.raises(RagkitError, match="k must be a positive whole number"):
        twins.run([Query("q", "refund")], k=k)


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_one_string_is_refused_not_searched_character_by_character(twins, mode):
    """`search("pump", 5)` searched "p", "u", "m", "p" and returned four empty rankings."""
    with pytest.raises(RagkitError, match=r"^search takes a list of query texts, got one "
                                          r"string; give \[text\]$"):
        twins.search("refund within seven days", 5, SearchConfig(mode=mode))
    assert len(twins.search(["refund within seven days"], 5, SearchConfig(mode=mode))) == 1


def test_search_config_refuses_bad_depth_and_fusion():
    with pytest.raises(RagkitError, match="candidates must be a positive whole number, got 0"):
        SearchConfig(candidates=0)
    with pytest.raises(RagkitError, match="unknown fusion 'borda'"):
        SearchConfig(fusion="borda")


def test_a_config_keeps_its_own_copy_of_the_weights_it_was_given(twins):
    """A sweep that changed one dict between configs gave every config the last weights:
    all three rows of `compare` showed the same Pass@5, no warning."""
    weights, configs = {"dense": 0, "bm25": 1}, {}
    for alpha in (0.0, 1.0):
        weights["dense"], weights["bm25"] = alpha, 1 - alpha
        configs[alpha] = SearchConfig(weights=weights)
    assert [c.weights for c in configs.values()] == [{"dense": 0.0, "bm25": 1.0},
                                                     {"dense": 1.0, "bm25": 0.0}]
    question = ["Orders ship from Berlin"]
    fresh = [twins.search(question, 3, SearchConfig(weights={"dense": a, "bm25": 1 - a}))
             for a in (0.0, 1.0)]
    assert [twins.search(question, 3, c) for c in configs.values()] == fresh
    assert fresh[0] != fresh[1]


@pytest.mark.parametrize("weights, line", [
    ({"dense": 0.6, "sparse": 0.4}, "weights must give exactly dense and bm25, e.g. "
                                    "{'dense': 0.6, 'bm25': 0.4}; got {'dense': 0.6, 'sparse': 0.4}"),
    ({}, "weights must give exactly dense and bm25, e.g. {'dense': 0.6, 'bm25': 0.4}; got {}"),
    ({"dense": -1, "bm25": 0.4}, "weights['dense'] must be a number ≥ 0, got -1"),
    ({"dense": "a", "bm25": 1}, "weights['dense'] must be a number ≥ 0, got 'a'"),
    ({"dense": 0.5, "bm25": float("nan")}, "weights['bm25'] must be a number ≥ 0, got nan"),
    ({"dense": 0, "bm25": 0}, "weights: at least one of dense and bm25 must be above 0")])
def test_weights_that_cannot_fuse_are_refused_when_the_config_is_made(weights, line):
    """An unknown key searched with both retrievers at 1.0, `{}` likewise, a negative weight
    turned a retriever's order upside down, and a string failed nine calls into a search."""
    with pytest.raises(RagkitError) as caught:
        SearchConfig(weights=weights)
    assert str(caught.value) == line


def test_query_texts_that_are_no_list_of_text_are_refused_and_a_generator_is_read(twins):
    """`search([None])` was a TypeError deep in BM25, and a generator returned `[]`: BM25 read
    it up and the dense side searched nothing."""
    bm25 = SearchConfig("bm25")
    assert (twins.search((q for q in ["refund within seven days"]), 2, SearchConfig())
            == twins.search(["refund within seven days"], 2, SearchConfig()))
    for texts, line in (([None], "search: query 0 is None (NoneType), not text"),
                        (["refund", 7], "search: query 1 is 7 (int), not text"),
                        (5, "search takes a list of query texts, got 5 (int)")):
        with pytest.raises(RagkitError) as caught:
            twins.search(texts, 2, bm25)
        assert str(caught.value) == line


@pytest.mark.parametrize("documents, line", [
    ([Document("a", "alpha"), Document("b", "beta"), Document("a", "gamma")],
     "documents[2].id: 'a' is the id of documents[0] too; each document needs its own"),
    ("ab", "documents[0]: 'a' (str), not a ragkit.Document"),
    ([Document("x", None)], "documents[0].text: None is no text"),
    ([Document(1, "one")], "documents[0].id: 1 is no non-empty text"),
    ([Document("", "one")], "documents[0].id: '' is no non-empty text")])
def test_documents_that_cannot_be_indexed_as_given_are_refused(documents, line):
    """Two documents "a" made two chunks "a#0" that no run or judgment tells apart."""
    with pytest.raises(RagkitError) as caught:
        Pipeline.build(documents, IndexConfig(embedder=""), progress=False)
    assert str(caught.value) == line


@pytest.mark.parametrize("config", [SearchConfig("bm25"), SearchConfig("dense"),
                                    SearchConfig("hybrid"),
                                    SearchConfig("hybrid", rerank="offline"),
                                    SearchConfig("bm25", rerank="offline")])
def test_k_larger_than_the_index_returns_what_the_index_has(twins, config):
    # reranked or not, a k past the index's 13 chunks is the whole index, never an error
    assert len(twins.chunks) == 13
    (whole,) = twins.search(["refund within seven days"], k=20, config=config)
    assert whole == twins.search(["refund within seven days"], k=13, config=config)[0]
    assert len(whole) == (5 if config.mode == "bm25" else 13)  # BM25 lists only matches


# --------------------------------------------------------------------------- command line

def _small_index(tmp_path, embedder="none"):
    from ragkit.cli import main
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        '{"id": "kettle", "text": "The kettle boils water in two minutes."}\n'
        '{"id": "toaster", "text": "A toaster browns bread slices."}\n'
        '{"id": "fridge", "text": "The fridge keeps milk cold for a week."}\n')
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "text": "kettle water"}\n{"id": "q2", "text": "cold milk"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", embedder]) == 0
    return tmp_path / "idx", queries


CLAMPED = "ragkit: warning: k=20 is larger than the index (3 chunks); returning 3"


def test_search_clamps_its_default_k_with_one_warning_line(tmp_path, capsys):
    from ragkit.cli import main
    from ragkit.runs import read_trec
    idx, queries = _small_index(tmp_path)
    capsys.readouterr()
    run = tmp_path / "run.trec"
    assert main(["search", str(idx), "--queries", str(queries), "--mode", "bm25",
                 "--rerank", "offline", "--out", str(run)]) == 0  # the default --k 20
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [CLAMPED]
    assert "reranker offline: reranked 2 queries" in captured.out
    assert "failed" not in captured.out + captured.err  # nothing failed: no fallback talk
    assert [c for c, _ in read_trec(run)["q1"]][0] == "kettle#0"
    assert main(["search", str(idx), "--queries", str(queries), "--mode", "bm25", "--level",
                 "doc", "--out", str(run)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "ragkit: warning: k=20 is larger than the index (3 documents); returning 3"]
    assert main(["search", str(idx), "--queries", str(queries), "--mode", "bm25", "--k", "3",
                 "--out", str(run)]) == 0
    assert capsys.readouterr().err == ""  # k = the index's size: nothing to say


def test_search_and_ask_clamp_k_across_processes_with_the_default_stack(tmp_path):
    """The user's path: index in one process, `ragkit search` with every default in another
    (hybrid, the offline reranker, k = 20) on a 3-chunk index."""
    import os
    import subprocess
    import sys
    from ragkit import models
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    idx, queries = _small_index(tmp_path, embedder="minilm")
    ragkit = [sys.executable, "-m", "ragkit.cli"]
    done = subprocess.run([*ragkit, "search", str(idx), "--queries", str(queries),
                           "--out", str(tmp_path / "run.trec")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [CLAMPED]
    assert len((tmp_path / "run.trec").read_text().splitlines()) == 6
    done = subprocess.run([*ragkit, "search", str(idx), "--queries", str(queries), "--k", "0",
                           "--out", str(tmp_path / "zero.trec")], capture_output=True, text=True)
    assert done.returncode == 2 and "must be at least 1, got 0" in done.stderr
    assert not (tmp_path / "zero.trec").exists()
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([*ragkit, "ask", "--index", str(idx), "--k", "20", "kettle water?"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert CLAMPED in done.stderr.splitlines()


def test_the_clamp_warning_counts_one_chunk_in_the_singular(tmp_path, capsys):
    """It read "k=20 is larger than the index (1 chunks)"."""
    from ragkit.cli import main
    docs = tmp_path / "one.jsonl"
    docs.write_text('{"id": "kettle", "text": "Boil the kettle water."}\n')
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "kettle"}\n')
    assert main(["index", str(docs), "--out", str(tmp_path / "idx"), "--embedder", "none"]) == 0
    capsys.readouterr()
    assert main(["search", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.jsonl"),
                 "--mode", "bm25", "--out", str(tmp_path / "run.trec")]) == 0
    assert capsys.readouterr().err == ("ragkit: warning: k=20 is larger than the index (1 "
                                       "chunk); returning 1\n")


def test_a_query_with_no_hit_is_counted_as_such(tmp_path, capsys):
    """"wrote 1 query × top 5 chunks" over an empty run: BM25 knew none of its words."""
    from ragkit.cli import main
    idx, _ = _small_index(tmp_path)
    (tmp_path / "q2.jsonl").write_text('{"id": "q1", "text": "zebra"}\n'
                                       '{"id": "q2", "text": "kettle"}\n')
    capsys.readouterr()
    assert main(["search", str(idx), "--queries", str(tmp_path / "q2.jsonl"), "--mode", "bm25",
                 "--k", "2", "--out", str(tmp_path / "run.trec")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"wrote 1 chunk for 2 queries to {tmp_path / 'run.trec'} (top 2 asked; 1 with fewer "
        f"matches; 1 with no hit: no line in the run)")
    assert len((tmp_path / "run.trec").read_text().splitlines()) == 1


@pytest.mark.parametrize("level, k, said", [
    ("chunk", "20", "wrote 1 chunk for 1 query to {run} (top 3 asked; 1 with fewer matches)"),
    ("doc", "3", "wrote 1 document for 1 query to {run} (top 3 asked; 1 with fewer matches)"),
    ("chunk", "1", "wrote 1 query × top 1 chunk to {run}"),
])
def test_search_says_how_many_lines_it_wrote_when_bm25_matches_fewer_than_k(
        tmp_path, level, k, said):
    """"wrote 1 query × top 8 chunks" over a run of 2 lines: BM25 lists only the chunks that
    hold a word of the query."""
    idx, _ = _small_index(tmp_path)
    (tmp_path / "q1.jsonl").write_text('{"id": "a", "text": "kettle?"}\n')
    run = tmp_path / "run.trec"
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "search", str(idx),
                           "--queries", str(tmp_path / "q1.jsonl"), "--mode", "bm25",
                           "--level", level, "--k", k, "--out", str(run)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == said.format(run=run)
    assert [line.split()[2] for line in run.read_text().splitlines()] == (
        ["kettle#0"] if level == "chunk" else ["kettle"])


# --------------------------------------------------------------------------- depth asked
WORDS = ("refund ship invoice tax box gift card order berlin email account price return week "
         "sea month kettle toaster fridge milk bread water cold").split()


def _words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture(scope="module")
def many():
    import random
    rng = random.Random(7)
    docs = [Document(f"d{i:03d}", _words(rng, 12) + ".") for i in range(300)]
    return Pipeline.build(docs, IndexConfig(contextualizer="none", embedder="bag"),
                          progress=False, embedder=BagOfWords())


def _queries():
    import random
    rng = random.Random(11)
    return [_words(rng, 3) for _ in range(30)]


def _falls(ranking):
    from ragkit.fusion import ranked
    from ragkit.runs import trec_score
    scores = [trec_score(score) for _, score in ranking]
    assert scores == sorted(scores, reverse=True) and ranked(ranking) == ranking
    assert len({ident for ident, _ in ranking}) == len(ranking)


@pytest.mark.parametrize("fusion", ["weighted", "rrf", "weighted_rank"])
def test_asking_deeper_keeps_the_hybrid_top(many, fusion):
    """Fusing 200-deep lists instead of 10-deep moved min-max floors and RRF sums: a k of 200
    changed the top 5 (notebook 01 with k=1000 changed its finding)."""
    config = SearchConfig(fusion=fusion, candidates=10)
    top = many.search(_queries(), 5, config)
    deep = many.search(_queries(), 200, config)
    assert [ranking[:5] for ranking in deep] == top  # ids and scores
    for ranking in deep:
        assert len(ranking) == 200
        _falls(ranking)  # a TREC run of it ranks as search did
    # past the head too: each k's ranking is the start of a deeper one's (ranks 15-40 had
    # moved between k = 30 and k = 37, a fusion of 30- or 37-deep lists)
    for shorter, longer in ((30, 37), (37, 120), (120, 200)):
        assert [r[:shorter] for r in many.search(_queries(), longer, config)] == \
            many.search(_queries(), shorter, config), (shorter, longer)


@pytest.mark.parametrize("fusion", ["weighted", "rrf"])
def test_candidates_past_the_fused_head_are_the_unreranked_ranking(many, fusion):
    """`Pipeline.candidates(texts, config, k)` with k past `candidates` fused lists fetched k
    deep, so below its head it was not the unreranked search's ranking at that k."""
    config = SearchConfig(fusion=fusion, candidates=10, rerank_candidates=8)
    for k in (8, 37, 120):
        found = many.candidates(_queries(), config, k)
        assert [[(c.chunk.id, c.score) for c in mine] for mine in found] == \
            many.search(_queries(), k, config), k


class ByCrc:
    """A pointwise test reranker: a fixed arbitrary score per chunk."""

    name = "crc-test"

    def rerank(self, query, candidates, k):
        from ragkit.fusion import ranked
        return ranked({c.chunk.id: zlib.crc32(c.chunk.id.encode()) for c in candidates}, k)


@pytest.mark.parametrize("mode", ["hybrid", "bm25"])
def test_the_reranker_reorders_rerank_candidates_whatever_k(many, monkeypatch, mode):
    """A k past `rerank_candidates` reranked k candidates, so asking for more hits changed the
    top: now the top `rerank_candidates` are reranked and the first stage continues below."""
    from ragkit import rerank
    monkeypatch.setitem(rerank.RERANKERS, "crc-test", ByCrc)
    many.rerank_stages.clear()
    config = SearchConfig(mode=mode, rerank="crc-test", candidates=10, rerank_candidates=8)
    top = many.search(_queries(), 5, config)
    deep = many.search(_queries(), 60, config)
    first = many.search(_queries(), 60, SearchConfig(mode=mode, candidates=10))
    assert [ranking[:5] for ranking in deep] == top
    for ranking, before in zip(deep, first):
        _falls(ranking)
        head = {ident for ident, _ in before[:8]}
        assert {ident for ident, _ in ranking[:8]} == head
        assert [i for i, _ in ranking[8:]] == [i for i, _ in before if i not in head][:52]
    many.rerank_stages.clear()


@pytest.mark.parametrize("k", [15, 30, 50, 60])
def test_a_reranked_search_fills_k_when_its_candidates_are_fewer(many, monkeypatch, k):
    """Fused from two 10-deep lists, the first stage holds about 17 candidates, fewer than
    the 50 `rerank_candidates`: asked for 15 to 50 hits, a reranked search returned those
    17 (the CLI then said the index had "fewer matches"), asked for 60 it returned 60."""
    from ragkit import rerank
    monkeypatch.setitem(rerank.RERANKERS, "crc-test", ByCrc)
    many.rerank_stages.clear()
    config = SearchConfig(rerank="crc-test", candidates=10, rerank_candidates=50)
    assert [len(r) for r in many.search(_queries(), k, config)] == [k] * len(_queries())
    many.rerank_stages.clear()


def test_a_deeper_k_keeps_the_top_across_processes(tmp_path):
    """The user's path: one index, `ragkit search` at --k 5, 150 and 400 (past the 100
    candidates each retriever gives fusion, and past --rerank-candidates), each in its own
    process, with and without the offline reranker: each run is the start of the deeper."""
    from ragkit import models
    from ragkit.runs import read_trec
    if not models.model_dir().is_dir():
        pytest.skip("model not installed: run `ragkit models install`")
    import json
    import random
    rng = random.Random(3)
    docs, queries = tmp_path / "docs.jsonl", tmp_path / "q.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": _words(rng, 14) + "."}) + "\n"
                            for i in range(300)))
    queries.write_text("".join(json.dumps({"id": f"q{i}", "text": _words(rng, 3)}) + "\n"
                               for i in range(20)))
    ragkit = [sys.executable, "-m", "ragkit.cli"]
    done = subprocess.run([*ragkit, "index", str(docs), "--out", str(tmp_path / "idx"),
                           "--embedder", "minilm"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for rerank in ("none", "offline"):
        runs = {}
        for k in ("5", "150", "400"):
            out = tmp_path / f"{rerank}-{k}.trec"
            done = subprocess.run([*ragkit, "search", str(tmp_path / "idx"), "--queries",
                                   str(queries), "--k", k, "--rerank", rerank, "--out", str(out)],
                                  capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            runs[k] = read_trec(out)
        assert {q: r[:5] for q, r in runs["400"].items()} == runs["5"], rerank
        assert {q: r[:150] for q, r in runs["400"].items()} == runs["150"], rerank
        assert all(len(r) == 300 for r in runs["400"].values())


def test_chunk_documents_reads_a_generator_once():
    """The new document check read a generator up first: `chunk_documents(iter(docs))` gave
    no chunks."""
    from ragkit import chunk_documents
    docs = [Document("a", "alpha beta"), Document("b", "gamma delta")]
    assert [c.id for c in chunk_documents(iter(docs))] == ["a#0", "b#0"]
