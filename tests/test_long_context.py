"""Long context: the request shape, the over-window refusal, the cost arithmetic."""
from __future__ import annotations

import pytest

from ragkit.agent import long_context as L
from ragkit.agent.compare import is_correct, key_numbers, versus
from ragkit.documents import Document, Golden, Query, RagkitError
from ragkit.llm import LLM, make_client
from ragkit.standin import transport
from tests.test_extractive import plant_log

DOCS = [Document("policies/en/refunds.md", "The cooling-off period is 21 days.", "Refunds"),
        Document("manuals/x.md", "ETH2 has the fixed address 192.168.50.1/24.", "Manual")]


def _llm() -> LLM:
    return LLM(make_client(transport=transport()), cache=False)


def test_request_caches_the_corpus_block_only_and_puts_the_question_last():
    corpus = L.corpus_text(DOCS)
    body = L.request(corpus, "How long is the cooling-off period?")
    (turn,) = body["messages"]
    assert turn["role"] == "user"
    first, last = turn["content"]
    assert first == {"type": "text", "text": corpus, "cache_control": {"type": "ephemeral"}}
    assert last == {"type": "text", "text": "How long is the cooling-off period?"}
    assert corpus.startswith('<documents>\n<document source="policies/en/refunds.md" '
                             'title="Refunds">\nThe cooling-off period is 21 days.\n</document>')


def test_over_window_refusal_says_by_how_much():
    lc = L.LongContext(DOCS, _llm(), room=2048)
    assert lc.fits and lc.limit == 200_000 - 2048
    big = L.LongContext([Document("big.md", "x" * 800_000)], _llm())  # 200,000 tokens + tags
    assert not big.fits
    with pytest.raises(RagkitError, match=r"200,000 less 2,048 .* = 197,952: \d[\d,]* over"):
        big.ask("anything?")


def test_stand_in_answers_from_the_corpus_sentences():
    lc = L.LongContext(DOCS, _llm())
    reply = lc.ask("What is the cooling-off period?")
    assert reply.text == "The cooling-off period is 21 days. (source: policies/en/refunds.md)"
    assert not reply.declined and reply.usage.input > 0
    assert lc.ask("Who won the football match on Sunday evening?").declined


@pytest.mark.parametrize("between, last, question, quote", [
    ("; ", "", "What is the boiler pressure limit?", "the boiler pressure limit is 3 bar"),
    (", ", "the boiler is drained every autumn,", "When is the boiler drained?",
     "the boiler is drained every autumn")])
def test_stand_in_quotes_a_clause_of_a_long_line_without_its_separator(between, last,
                                                                        question, quote):
    """The long-context reply showed a clause of a line over 1,000 characters with the
    separator it was cut after, "the boiler pressure limit is 3 bar; (source: plant.txt)"."""
    lc = L.LongContext([Document("plant.txt", plant_log(between, last), "Plant log")], _llm())
    assert lc.ask(question).text == f"{quote} (source: plant.txt)"


def test_cost_projection_by_hand():
    # Haiku 4.5: input $1, 5-minute write $1.25, read $0.10, output $5 per million tokens.
    # 100,000-token corpus, 50-token question, 100-token answer, 10 queries:
    # first = 0.125 + 0.00005 + 0.0005 = 0.12555; later = 0.01 + 0.00055 = 0.01055;
    # per query = (0.12555 + 9 · 0.01055) / 10 = 0.0220500; uncached = 0.1 + 0.00055.
    p = L.project_cost(100_000, 50, 100, 10)
    assert p.first_query == pytest.approx(0.12555)
    assert p.later_query == pytest.approx(0.01055)
    assert p.cached_per_query == pytest.approx(0.02205)
    assert p.uncached_per_query == pytest.approx(0.10055)
    short = L.project_cost(4000, 50, 100, 10)  # under Haiku 4.5's 4096-token minimum
    assert not short.cached and short.cached_per_query == short.uncached_per_query
    with pytest.raises(RagkitError):
        L.project_cost(1000, 1, 1, 0)


def test_accuracy_rule():
    q = Query("q1", "How long?", "The cooling-off period is 21 days.",
              golden=(Golden("policies/en/refunds.md", "cooling-off period is 21 days"),))
    assert is_correct(q, "It is 21 days (cooling-off period).")
    assert not is_correct(q, "It is 14 days.")
    assert not is_correct(q, "I don't know: the sources do not answer this question.")
    two = Query("q3", "Orders in the quarter of the Arrowmere deal?", "$400.9 million.",
                golden=(Golden("reports/a.md", "signed a ten-year agreement with Arrowmere"),
                        Golden("reports/a.md", "order intake was $400.9 million")))
    assert not is_correct(two, "The Company signed a ten-year agreement with Arrowmere.")
    assert is_correct(two, "Order intake was $400.9 million.")  # the reference's number
    none = Query("q2", "Revenue in 2019?", "", golden=())
    assert is_correct(none, "I don't know: the sources do not answer this question.")
    assert not is_correct(none, "It was 12 million.")
    assert key_numbers("€1,200.50 and 21 days") == {"1200.50", "21"}


@pytest.mark.parametrize("value, other, expected", [
    (13.6, 18.2, "below"), (12.1, 9.1, "above"), (18.2, 18.2, "level with"),
    (100 * 6 / 33, 18.18, "level with"),  # 18.18 and 18.1818... both show as 18.2
    (18.26, 18.24, "above")])              # 18.3 vs 18.2 as displayed
def test_versus_compares_at_the_displayed_precision(value, other, expected):
    assert versus(value, other) == expected


def test_a_method_that_caches_nothing_costs_the_same_uncached():
    """The uncached column priced the mean tokens cut to whole ones: with k = 1 in notebook
    06, plain RAG read $0.000709 per query and $0.000707 uncached, as if caching cost more."""
    import pandas as pd

    from ragkit.agent.compare import comparison_table
    from ragkit.pricing import Usage, cost

    usages = [Usage(632, 15), Usage(633, 16)]
    table = pd.DataFrame({"correct": [True, False], "calls": [1, 1],
                          "input": [u.input for u in usages],
                          "output": [u.output for u in usages],
                          "cache write": [0, 0], "cache read": [0, 0], "seconds": [0.1, 0.1],
                          "$": [cost(u, "claude-haiku-4-5") for u in usages]})
    row = comparison_table({"plain RAG": table, "long context": table},
                           cached_prefix={"long context": 600}).loc["plain RAG"]
    assert row["$/query uncached"] == pytest.approx(row["$/query"], rel=1e-12)


def test_where_no_method_caches_the_comparison_has_one_price_column():
    """Notebook 06 showed "$/query uncached" beside "$/query", equal in every row: none of its
    methods caches, so "uncached" promised a difference there was none of."""
    import pandas as pd

    from ragkit.agent.compare import comparison_table

    table = pd.DataFrame({"correct": [True], "calls": [1], "input": [600], "output": [15],
                          "cache write": [0], "cache read": [0], "seconds": [0.1], "$": [0.0007]})
    plain = comparison_table({"plain RAG": table, "CRAG": table})
    assert list(plain.columns) == ["accuracy %", "calls", "input tokens", "output tokens",
                                   "seconds", "$/query"]
    cached = comparison_table({"plain RAG": table, "long context": table},
                              cached_prefix={"long context": 500})
    assert list(cached.columns)[-2:] == ["$/query", "$/query uncached"]
    read = table.assign(**{"cache read": [500]})  # caching in the usage itself (Claude's)
    assert "$/query uncached" in comparison_table({"plain RAG": read})


def test_the_comparison_shows_tokens_per_query_as_whole_numbers():
    """Notebooks 06 and 07 showed 2699.9 input tokens per query: a tenth of a token says
    nothing. Accuracy and calls keep one decimal, seconds three, dollars three digits."""
    import pandas as pd

    from ragkit.agent.compare import comparison_table, rounded

    table = pd.DataFrame({"correct": [True, False, False], "calls": [1, 1, 2],
                          "input": [2700, 2699, 2702], "output": [16, 17, 17],
                          "cache write": [0, 0, 0], "cache read": [0, 0, 0],
                          "seconds": [0.0341, 0.0342, 0.0343], "$": [0.0028, 0.0028, 0.0029]})
    row = rounded(comparison_table({"plain RAG": table})).loc["plain RAG"]
    assert (row["accuracy %"], row["calls"], row["input tokens"], row["output tokens"],
            row["seconds"], row["$/query"]) == (33.3, 1.3, 2700, 17, 0.034, "$0.00283")


def test_comparing_methods_counts_their_questions_on_a_bar_when_asked(capsys):
    """Notebook 07's five methods ran a minute in silence on a first run in JupyterLab; the
    committed outputs (papermill, nbval) keep no bar: `progress` is False there."""
    from ragkit.agent.compare import run_methods
    from ragkit.documents import Query
    queries = [Query("q1", "How long is the warranty?"), Query("q2", "Who pays returns?")]
    methods = {"echo": lambda text, llm: text, "missing": None, "upper": lambda t, llm: t.upper()}
    runs = run_methods(methods, queries, progress=True)
    assert runs["missing"] is None and list(runs["echo"].index) == ["q1", "q2"]
    err = capsys.readouterr().err
    assert "questions: 100%" in err and "4/4" in err
    run_methods(methods, queries)
    assert capsys.readouterr().err == ""
