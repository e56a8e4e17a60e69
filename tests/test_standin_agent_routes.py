"""The stand-in agent's routes: SQL for aggregation, search for wording, notes, named files."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tabulate import tabulate
from agent_fakes import SHOPCORE, executor, file_tools, note_tool, shopcore_files
from loader_files import pdf

from ragkit import standin
from ragkit.agent.loop import SYSTEM, run_agent
from ragkit.agent.tool import ToolContext
from ragkit.agent.tools import TOOLS
from ragkit.documents import Document
from ragkit.llm import LLM
from ragkit.pipeline import IndexConfig, Pipeline
from ragkit.standin import agent, agent_answer, agent_sql, agent_state
from tests.test_extractive import plant_log

FASTEST = "Which company grew revenue fastest in 2025?"
REFUND = "Find the bug that stores a negative refund amount"
TOWING = "What is the maximum towing load of the EG-400?"
RAGKIT = Path(sys.executable).parent / "ragkit"


def _request(question, names, messages=()):
    return {"model": "claude-haiku-4-5", "max_tokens": 1024, "system": SYSTEM,
            "tools": [TOOLS[n].definition() for n in names],
            "messages": [{"role": "user", "content": question}, *messages]}


def test_aggregation_question_is_one_reports_sql_call_and_an_answer_from_its_table():
    tools = [TOOLS[n] for n in ("grep", "glob", "read_file", "docs_search", "reports_sql")]
    result = run_agent(FASTEST, tools, ToolContext(root=SHOPCORE), llm=LLM(cache=False))
    assert [c.name for c in result.tool_calls] == ["reports_sql"]
    assert not result.tool_calls[0].result.is_error
    # By hand (test_agent_tools): Cedarline Health 1,127.7 → 1,383.5 = +22.7 %;
    # runner-up Solvara Energy +19.6 %.
    assert result.answer.startswith("Cedarline Health: revenue_2024 = 1127.7, revenue_2025 = "
                                    "1383.5, growth_pct = 22.7 — ranked 1 of 8 companies")
    assert "Next: Solvara Energy (growth_pct = 19.6)" in result.answer
    assert result.turns == 2


def test_the_templates_read_the_question():
    growth = agent_sql.plan_query(FASTEST)
    assert (growth.kind, growth.column, growth.aggregate, growth.year) == \
        ("growth", "revenue", "SUM", 2025)
    low = agent_sql.plan_query("Which company had the lowest gross margin in 2024 Q3?")
    assert (low.kind, low.column, low.aggregate, low.quarter, low.descending) == \
        ("ranking", "gross_margin", "AVG", 3, False)
    assert low.sql.endswith("WHERE year = 2024 AND quarter = 3 GROUP BY company ORDER BY "
                            "gross_margin_2024_q3 ASC")
    assert agent_sql.plan_query("What was the average revenue in 2025?").aggregate == "AVG"
    for not_one in ("How did revenue grow in 2025?", "Which company grew revenue fastest?",
                    "Which company has the highest ambitions in 2025?"):
        assert agent_sql.plan_query(not_one) is None, not_one


def test_a_named_company_is_answered_from_its_row():
    query = agent_sql.plan_query("What was the total revenue of Cedarline Health in 2025?")
    table = "2 rows\n" + tabulate([("Orchard Lane Retail", 6350.6), ("Cedarline Health", 1383.5)],
                                  headers=["company", "revenue_2025"], tablefmt="simple")
    assert agent_sql.parse_table(table) == (["company", "revenue_2025"],
                                            [["Orchard Lane Retail", "6350.6"],
                                             ["Cedarline Health", "1383.5"]])
    assert agent_sql.answer("What was the total revenue of Cedarline Health in 2025?", query,
                            table).startswith("Cedarline Health: revenue_2025 = 1383.5 — "
                                              "ranked 2 of 2 companies")
    assert agent_sql.answer("q", query, "no rows: the query matched nothing.") is None


def test_wording_question_is_one_docs_search_and_quotes_the_passage():
    question = "How many days is the cooling-off period for refunds?"
    names = ("grep", "glob", "read_file", "docs_search", "reports_sql")
    first = standin.respond("/v1/messages", _request(question, names))[1]["content"]
    uses = [b for b in first if b["type"] == "tool_use"]
    assert [(b["name"], b["input"]) for b in uses] == [("docs_search", {"query": question})]
    passage = {"type": "search_result", "source": "policies/en/refund-policy.md#0",
               "title": "Refund policy", "citations": {"enabled": True}, "content": [
                   {"type": "text", "text": "You may cancel an order during a cooling-off "
                                            "period of 21 days."}]}
    results = [{"type": "tool_result", "tool_use_id": uses[0]["id"], "content": [passage]}]
    reply = standin.respond("/v1/messages", _request(question, names, [
        {"role": "assistant", "content": first}, {"role": "user", "content": results}]))[1]
    assert reply["content"] == [{"type": "text", "text": (
        "From the documents found:\n- “You may cancel an order during a cooling-off period of "
        "21 days.” [policies/en/refund-policy.md#0]")}]


def test_code_questions_keep_the_walk_through_even_with_search_offered():
    state = agent.state_of(_request(REFUND, ("grep", "docs_search")))
    assert agent.question_kind(state.question, {"grep", "docs_search"}) == "code"
    assert agent.question_kind("What is the refund policy?", {"grep"}) == "code"
    assert agent.question_kind("What is the refund policy?", {"docs_search"}) == "wording"


@pytest.mark.parametrize("approve, last_line", [(False, agent_answer.NOTE_REFUSED),
                                                (True, agent_answer.NOTE_SAVED)])
def test_a_note_asked_for_is_saved_once_after_the_answer(approve, last_line):
    saved: list[dict] = []
    tools = file_tools(shopcore_files()) + [note_tool(saved)]
    result = run_agent(REFUND + " and save a note with the fix", tools,
                       ToolContext(root=SHOPCORE), llm=LLM(cache=False),
                       run_tool=executor(tools, approve=approve))
    notes = [c for c in result.tool_calls if c.name == "notes_save"]
    assert len(notes) == 1 and notes[0].turn == 4 and notes[0].result.is_error is not approve
    assert notes[0].input["title"] == REFUND
    assert result.answer.endswith("\n\n" + last_line)
    assert notes[0].input["text"] == result.answer.rsplit("\n\n", 1)[0]
    assert "orders/cancel.py:68" in notes[0].input["text"]
    assert len(saved) == approve
    # the searches are those of the question without its request for a note
    assert result.tool_calls[0].input == {"pattern": r"(?i)\b(store|negative|refund|amount)"}


def test_no_note_without_an_answer_or_without_a_request():
    saved: list[dict] = []
    tools = file_tools(shopcore_files()) + [note_tool(saved)]
    for question in ("Which quantum flux capacitor calibrates the warp coils? Save a note.",
                     REFUND):
        result = run_agent(question, tools, ToolContext(root=SHOPCORE), llm=LLM(cache=False),
                           run_tool=executor(tools, approve=True))
        assert "notes_save" not in {c.name for c in result.tool_calls}, question
    assert saved == []


def test_a_named_file_is_read_from_the_top_and_its_name_is_not_an_identifier():
    question = REFUND + ", starting from payments/reconcile.py"
    assert agent.identifiers(question) == []
    assert agent.key_terms("What does payments/reconcile.py do?") == ["payment", "reconcile"]
    tools = file_tools(shopcore_files())
    result = run_agent(question, tools, ToolContext(root=SHOPCORE), llm=LLM(cache=False),
                       run_tool=executor(tools))
    turn2 = [c.input for c in result.tool_calls if c.turn == 2 and c.name == "read_file"]
    assert turn2[0] == {"path": "payments/reconcile.py", "start_line": 1, "end_line": 60}
    assert result.sources[0] == "orders/cancel.py:68"


@pytest.fixture
def tractor_docs(tmp_path):
    """A field log grep can read, and the tractor manual as a PDF, which it cannot."""
    notes = tmp_path / "docs" / "notes"
    notes.mkdir(parents=True)
    (notes / "fieldlog.txt").write_text("Field log 2024\n\nOn 12 June the north field received "
                                        "18 mm of rain.\nThe tractor EG-400 broke its "
                                        "hydraulic pump on 14 June.\n")
    pdf(notes / "tractor_manual.pdf", [[
        "EG-400 Tractor Manual", "Change the engine oil of the EG-400 every 250 operating hours.",
        "Never refuel with the engine running.", "The maximum towing load is 3,500 kg."]])
    return tmp_path / "docs"


def test_a_glob_that_matched_nothing_is_never_read_as_a_file(tractor_docs):
    """The globs for '**/*maximum*', '**/*towing*' and '**/*load*' matched nothing, and the
    program read their message as a path: read_file('no files match '**/*load*'. Patterns
    are …'), an error, in place of a file. Only files the searches found are read."""
    tools = [TOOLS[n] for n in ("grep", "glob", "read_file")]
    result = run_agent(TOWING, tools, ToolContext(root=tractor_docs), llm=LLM(cache=False))
    globs = [c for c in result.tool_calls if c.name == "glob"]
    assert len(globs) == 3 and all(c.result.content.startswith("[no files match") for c in globs)
    reads = [c.input for c in result.tool_calls if c.name == "read_file"]
    assert reads == [{"path": "notes/fieldlog.txt", "start_line": 1, "end_line": 60}]
    assert not any(c.result.is_error for c in result.tool_calls)


def test_the_program_tells_a_glob_that_found_nothing_by_its_form_not_its_words(tractor_docs):
    """It spotted a glob that matched nothing by the words "no files match" at its start;
    a result is now read by its form alone — a line is a path or a bracketed note — so the
    glob's hint may name near misses and be reworded without a message read as a path."""
    for pattern in ("**/*towing*", "*.PDF", "notes/*.py"):
        result = TOOLS["glob"].run({"pattern": pattern}, ToolContext(root=tractor_docs))
        assert agent_state.listed(agent_state.Call("glob", {"pattern": pattern}, result)) == []
    for worded in ("[nothing matched; try notes/fieldlog.txt]", "[]"):
        assert agent_state.listed(agent_state.Call("glob", {}, worded)) == []
    listing = TOOLS["glob"].run({"pattern": "notes/*"}, ToolContext(root=tractor_docs))
    assert agent_state.listed(agent_state.Call("glob", {}, listing)) == [
        "notes/fieldlog.txt", "notes/tractor_manual.pdf"]


def test_a_code_question_the_code_cannot_answer_is_answered_from_the_documents(tractor_docs):
    """"EG-400" makes the towing question a code question, and the code read (the field log)
    holds no answer: the program said "I don't know: the searches found no code …" though
    its docs_search had returned the manual's sentence. It answers from that search."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    env["RAGKIT_HOME"] = str(tractor_docs.parent / "home")
    index = tractor_docs.parent / "idx"
    subprocess.run([RAGKIT, "index", str(tractor_docs), "--out", str(index), "--embedder",
                    "none"], check=True, env=env, capture_output=True, timeout=120)
    done = subprocess.run([RAGKIT, "ask", "--agent", "--root", str(tractor_docs), "--index",
                           str(index), TOWING], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("From the documents found:\n- “The maximum towing load is 3,500 "
                           "kg.” [notes/tractor_manual.pdf#0]\n")


CLAUSES = [("; ", "", "What is the boiler pressure limit?", "the boiler pressure limit is 3 bar"),
           (", ", "the boiler is drained every autumn,", "When is the boiler drained?",
            "the boiler is drained every autumn")]


@pytest.mark.parametrize("between, last, question, quote", CLAUSES)
def test_the_agent_quotes_a_clause_without_its_separator(tmp_path, between, last, question,
                                                         quote):
    """A clause of a line over 1,000 characters was quoted with the separator it was cut
    after, "“the boiler pressure limit is 3 bar;”", where the stand-in's cited answers show
    the clause alone (`ragkit.standin.answer.shown`)."""
    log = plant_log(between, last)
    assert len(log) > 1000 and "\n" not in log
    index = Pipeline.build([Document("plant.txt", log, "Plant log")], IndexConfig(embedder=None),
                           progress=False)
    result = run_agent(question, [TOOLS[n] for n in ("grep", "glob", "read_file", "docs_search")],
                       ToolContext(root=tmp_path, pipeline=index), llm=LLM(cache=False))
    assert [c.name for c in result.tool_calls] == ["docs_search"]
    assert result.answer == f"From the documents found:\n- “{quote}” [plant.txt#0]"
