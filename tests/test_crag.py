"""CRAG: the action table, strip decomposition, the grep fallback, the judge's NaN."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragkit.agent import crag as C
from ragkit.documents import Chunk, RagkitWarning
from ragkit.answer_judge import Judge
from ragkit.llm import LLM, make_client
from ragkit.standin import transport

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("scores, expected", [
    ([0.80, 0.10], C.CORRECT),        # one passage at or above upper (0.75) is enough
    ([0.75, 0.10], C.CORRECT),        # the threshold itself counts
    ([0.74, 0.30, 0.00], C.AMBIGUOUS),  # best between lower (0.25) and upper
    ([0.25], C.AMBIGUOUS),
    ([0.24, 0.10], C.INCORRECT),      # all below lower
    ([], C.INCORRECT),
    ([math.nan, 0.1], C.INCORRECT),   # undecided counts as incorrect
    ([math.nan, 0.9], C.CORRECT),
])
def test_action_table(scores, expected):
    assert C.action(scores, upper=0.75, lower=0.25) == expected


def test_strips_group_three_sentences_and_glue_short_pieces():
    text = ("The refund window lasts 21 days here. It starts on the day of delivery. "
            "Fees apply. Do returns always need the original receipt? Yes. "
            "Items must be unused and in the box. Shipping back is free for members.")
    # "Fees apply." and "Yes." have <= 5 words: glued to the sentence before them.
    assert C.strips(text) == [
        "The refund window lasts 21 days here. It starts on the day of delivery. Fees apply. "
        "Do returns always need the original receipt? Yes.",
        "Items must be unused and in the box. Shipping back is free for members."]
    assert C.strips("One two three four five six.\nSeven eight nine ten eleven twelve.",
                    size=1) == ["One two three four five six.",
                                "Seven eight nine ten eleven twelve."]


class Fixed:
    """An evaluator with hand-made scores by passage text."""
    upper, lower = 0.75, 0.25

    def __init__(self, by_word: dict[str, float]) -> None:
        self.by_word = by_word

    def score(self, question: str, passage: str) -> float:
        return max((s for w, s in self.by_word.items() if w in passage), default=0.0)


def _chunk(ident: str, text: str) -> Chunk:
    return Chunk(ident, "policies/en/refunds.md", text, metadata={"title": "Refunds"})


def test_refine_keeps_top_strips_and_scores_short_ones_minus_one():
    chunk = _chunk("c1", "Alpha words one two three four. Beta words one two three four. "
                   "Gamma words one two three four. Delta words one two three four.")
    kept = C.refine("q", [chunk], Fixed({"Alpha": 0.2, "Delta": 0.9}), keep=1)
    assert [(c.id, c.text, s) for c, s in kept] == [
        ("c1#s2", "Delta words one two three four.", 0.9)]
    short = _chunk("c2", "Too short.")
    assert C.refine("q", [short], Fixed({"Too": 1.0}), keep=5)[0][1] == -1.0


def test_crag_actions_choose_internal_external_or_both(tmp_path):
    (tmp_path / "faq.md").write_text("Intro line.\nThe cooling-off period lasts 21 days here.\n"
                                     "Other line.\n", encoding="utf-8")
    grep = C.GrepCorpus(tmp_path)
    inside = _chunk("c1", "Inside words one two three four five.")
    llm = LLM(make_client(transport=transport()), cache=False)
    correct = C.crag("cooling-off period", [inside], Fixed({"Inside": 0.9, "cooling": 0.5}),
                     grep, llm=llm)
    assert correct.action == C.CORRECT and correct.fallback_query is None
    assert [c.id for c, _ in correct.kept] == ["c1#s1"]
    ambiguous = C.crag("cooling-off period", [inside], Fixed({"Inside": 0.5, "cooling": 0.6}),
                       grep, llm=llm)
    assert ambiguous.action == C.AMBIGUOUS
    assert [c.id for c, _ in ambiguous.kept] == ["faq.md:2#s1", "c1#s1"]  # best first
    wrong = C.crag("cooling-off period", [inside], Fixed({"cooling": 0.6}), grep, llm=llm)
    assert wrong.action == C.INCORRECT and wrong.fallback_query == "cooling off period"
    assert [c.id for c, _ in wrong.kept] == ["faq.md:2#s1"]


def test_grep_fallback_ranks_by_rare_keywords(tmp_path):
    (tmp_path / "a.md").write_text("refund policy\nnothing\nnothing\nnothing\nrefund window "
                                   "days\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("refund only\n", encoding="utf-8")
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe refund")
    hits = C.GrepCorpus(tmp_path, limit=2)("refund window")
    assert [h.id for h in hits] == ["a.md:5", "a.md:1"]
    assert hits[0].text == "nothing\nrefund window days"


def test_grep_fallback_reads_no_file_outside_its_folder_through_a_link(tmp_path):
    """A link in the corpus to a file outside it put that file's lines (/etc/passwd, a key)
    into CRAG's passages and so into the prompt."""
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    corpus.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("refund secret token\n", encoding="utf-8")
    (corpus / "a.md").write_text("refund policy\n", encoding="utf-8")
    (corpus / "leak.md").symlink_to(outside / "secret.txt")
    (corpus / "also.md").symlink_to("../outside/secret.txt")
    (corpus / "same.md").symlink_to("a.md")  # a link inside the folder is read, as the loader
    grep = C.GrepCorpus(corpus)
    assert sorted(grep.files) == ["a.md", "same.md"]
    assert all("secret" not in hit.text for hit in grep("refund secret"))


def test_keywords_drop_question_words():
    assert C.keywords("How many days is the refund window at Larkspur?") == [
        "days", "refund", "window", "larkspur"]


def test_offline_lexical_score_is_the_idf_share():
    ev = C.OfflineEvaluator()  # no index: every term weighs 1; no embedder: no cosine
    assert ev.score("refund window days", "The refund window is short.") == pytest.approx(2 / 3)


def _reply_handler(text: str):
    def handle(path, body):
        from ragkit.standin import respond
        status, reply = respond(path, body)
        reply["content"] = [{"type": "text", "text": text}]
        return status, reply
    return handle


@pytest.mark.parametrize("reply", ["not json", '{"label": "very relevant"}', '{"score": 1}'])
def test_claude_evaluator_malformed_reply_is_nan_and_counted(reply):
    llm = LLM(make_client(max_retries=0, transport=transport(_reply_handler(reply))),
              cache=False)
    ev = C.ClaudeEvaluator(Judge(llm))
    with pytest.warns(RagkitWarning, match="crag_relevance v1"):
        assert math.isnan(ev.score("question?", "passage"))
    assert ev.judge.failures["crag_relevance"] == 1


def test_claude_evaluator_through_the_stand_in_grades_by_overlap():
    llm = LLM(make_client(transport=transport()), cache=False)
    ev = C.ClaudeEvaluator(Judge(llm))
    assert ev.score("refund window days", "refund window days apply") == 1.0  # relevant
    assert ev.score("refund window days", "the refund is paid") == 0.5  # 1/3 ≥ 0.25: partial
    assert ev.score("refund window days", "unrelated text") == 0.0
    assert ev.judge.asked["crag_relevance"] == 3 and not ev.judge.failures


class Counting:
    """An embedder whose vector is [1, len(text)] normalised; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts, *, input_type="document", progress=False):
        import numpy as np
        self.calls.append(list(texts))
        v = np.array([[1.0, len(t)] for t in texts]).reshape(-1, 2)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_offline_evaluator_embeds_a_questions_passages_in_one_call():
    embedder = Counting()
    ev = C.OfflineEvaluator(embedder=embedder)
    chunk = _chunk("c1", "Alpha words one two three four. Beta words one two three four. "
                   "Gamma words one two three four. Delta words one two three four.")
    kept = C.refine("alpha question", [chunk], ev, keep=2)
    assert [len(c) for c in embedder.calls] == [1, 2]  # the question, then both strips at once
    one_by_one = [ev.score("alpha question", C.passage_text(c)) for c, _ in kept]
    assert [s for _, s in kept] == one_by_one  # the same scores as one at a time
    q, text = len("alpha question"), len(C.passage_text(kept[0][0]))
    cosine = (1 + q * text) / ((1 + q * q) ** 0.5 * (1 + text * text) ** 0.5)
    assert kept[0][1] == pytest.approx(max(0.5, cosine))  # max(term share 1/2, cosine)


def test_lexical_score_is_the_same_in_every_process():
    """The question's terms are a set, whose order follows str hashing (PYTHONHASHSEED, a
    new one per process): the score must not move with it (a plain sum's last bit did, and
    flipped a borderline strip of notebook 06 between runs)."""
    code = ("import types, numpy as np\n"
            "from ragkit.agent.crag_evaluators import OfflineEvaluator\n"
            "words = 'alpha beta gamma delta epsilon'.split()\n"
            "bm25 = types.SimpleNamespace(tokenize=str.split, idf=np.array(IDF),\n"
            "                             vocabulary={w: i for i, w in enumerate(words)})\n"
            "print(repr(OfflineEvaluator(bm25).lexical(' '.join(words), 'alpha beta gamma epsilon')))\n")
    idf = [0.1, 0.2, 0.3, 0.7, 0.11]
    children = [subprocess.Popen([sys.executable, "-c", code.replace("IDF", repr(idf))],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                 env={**os.environ, "PYTHONHASHSEED": str(seed)})
                for seed in range(12)]  # 12 seeds: the plain sum gave two values among them
    runs = {child.communicate()[0] for child in children}
    assert all(child.returncode == 0 for child in children)
    assert len(runs) == 1
    assert float(runs.pop()) == math.fsum(idf[:3] + idf[4:]) / math.fsum(idf)


def test_thresholds_are_tuned_from_scored_passages_and_refused_without_both_kinds():
    import pandas as pd
    from ragkit.documents import RagkitError
    rows = pd.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.5, 0.7],
                         "relevant": [True, True, True, False, False, False]})
    upper, lower, sweep = C.tune_thresholds(rows)
    # balanced accuracy 5/6 at 0.55, 0.6, 0.75 and 0.8: the higher cut; all relevant kept to 0.6
    assert (upper, lower) == (0.8, 0.6)
    assert sweep.loc[0.8].tolist() == pytest.approx([2 / 3, 1.0, 5 / 6])
    for relevant, lacking in (([False] * 6, "relevant"), ([True] * 6, "irrelevant")):
        with pytest.raises(RagkitError, match=f"none of the 6 scored passages is {lacking} "):
            C.tune_thresholds(rows.assign(relevant=relevant))  # it returned nan, nan


def test_a_strip_found_again_by_the_fallback_is_kept_once(tmp_path):
    """Ambiguous keeps the internal strips and the fallback's: grep reading the file the
    index holds found the same sentences again, and the answer was given them twice."""
    text = "The cooling-off period lasts 21 days here. Refunds go back to the card."
    (tmp_path / "refunds.md").write_text(text + "\n", encoding="utf-8")
    llm = LLM(make_client(transport=transport()), cache=False)
    inside = _chunk("c1", text)
    result = C.crag("cooling-off period", [inside], Fixed({"cooling": 0.6}),
                    C.GrepCorpus(tmp_path), llm=llm)
    assert result.action == C.AMBIGUOUS
    assert [(c.id, c.text) for c, _ in result.kept] == [("c1#s1", text)]
