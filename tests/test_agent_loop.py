"""The agent loop's rules on recorded requests, against a scripted model and the stand-in."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from agent_fakes import SHOPCORE, executor, file_tools, note_tool, shopcore_files

from ragkit import standin
from ragkit.agent.loop import PARALLEL_PROMPT, SYSTEM, run_agent, sources, tool_choice
from ragkit.agent.tool import Tool, ToolContext
from ragkit.cli import main
from ragkit.errors import RagkitError
from ragkit.llm import LLM, make_client

FILES = {"pay/refund.py": "def calculate_refund(order):\n    return order.total - order.discount\n",
         "pay/cancel.py": "amount = calculate_refund(order)\n"}


class Script:
    """A model that answers with the given content lists in turn, recording each request."""

    def __init__(self, *turns, usage=(100, 10)):
        self.turns, self.requests, self.usage = list(turns), [], usage

    def __call__(self, path, body):
        self.requests.append(body)
        content = self.turns.pop(0) if self.turns else [{"type": "text", "text": "done"}]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return 200, {"id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
                     "model": body["model"], "content": content, "stop_reason": stop,
                     "stop_sequence": None,
                     "usage": {"input_tokens": self.usage[0] * len(self.requests),
                               "output_tokens": self.usage[1]}}


def use(ident, name, **args):
    return {"type": "tool_use", "id": ident, "name": name, "input": args}


def run(script, tools=None, approve=False, **kw):
    tools = tools or file_tools(FILES)
    llm = LLM(make_client(max_retries=0, transport=standin.transport(script)), cache=False)
    return run_agent("Where is the refund computed?", tools, ToolContext(root=Path(".")),
                     llm=llm, run_tool=executor(tools, approve), **kw)


def test_results_come_first_in_one_user_message_one_per_id():
    script = Script([{"type": "text", "text": "Let me look."},
                     use("t1", "grep", pattern="calculate_refund"),
                     use("t2", "delete_everything", path="/"),
                     use("t3", "read_file", path=42),
                     use("t4", "read_file", path="missing.py")])
    result = run(script)
    results = script.requests[1]["messages"][-1]
    assert results["role"] == "user"
    assert [b["type"] for b in results["content"]] == ["tool_result"] * 4
    assert [b["tool_use_id"] for b in results["content"]] == ["t1", "t2", "t3", "t4"]
    assert [b.get("is_error", False) for b in results["content"]] == [False, True, True, True]
    assert results["content"][0]["content"] == \
        "pay/cancel.py:1:amount = calculate_refund(order)\n" \
        "pay/refund.py:1:def calculate_refund(order):"
    assert "no tool named 'delete_everything'" in results["content"][1]["content"]
    assert "glob, grep, read_file" in results["content"][1]["content"]
    assert "bad field 'path'" in results["content"][2]["content"]
    assert "use glob" in results["content"][3]["content"]
    assert result.stop_reason == "answered" and result.answer == "done"
    assert result.calls_per_turn == 4.0


def test_sequential_batch_stops_at_the_first_failure():
    script = Script([use("a", "read_file", path="missing.py"),
                     use("b", "grep", pattern="x"), use("c", "glob", pattern="*")])
    result = run(script, parallel=False)
    assert script.requests[0]["tool_choice"] == {"type": "auto",
                                                 "disable_parallel_tool_use": True}
    blocks = script.requests[1]["messages"][-1]["content"]
    assert [b.get("is_error") for b in blocks] == [True, True, True]
    assert blocks[1]["content"].startswith("Not executed: the preceding read_file call failed")
    assert [c.executed for c in result.tool_calls] == [True, False, False]


def test_a_refused_write_is_not_executed_and_the_loop_goes_on():
    saved = []
    tools = file_tools(FILES) + [note_tool(saved)]
    script = Script([use("w", "notes_save", title="fix", text="subtract once")])
    result = run(script, tools)
    block = script.requests[1]["messages"][-1]["content"][0]
    assert block["is_error"] is True and "did not approve" in block["content"]
    assert saved == [] and result.stop_reason == "answered"
    script = Script([use("w", "notes_save", title="fix", text="subtract once")])
    run(script, tools, approve=True)
    assert saved == [{"title": "fix", "text": "subtract once"}]


def test_an_executor_that_raises_gives_an_error_result():
    def broken(name, args, context):
        raise RuntimeError("disk on fire")
    tools = file_tools(FILES)
    llm = LLM(make_client(max_retries=0, transport=standin.transport(
        script := Script([use("x", "grep", pattern="a")]))), cache=False)
    run_agent("q", tools, ToolContext(root=Path(".")), llm=llm, run_tool=broken)
    block = script.requests[1]["messages"][-1]["content"][0]
    assert block["is_error"] is True
    assert block["content"].startswith("Error: internal error in tool grep: RuntimeError: disk")


@pytest.mark.parametrize("choice, parallel, sent", [
    ("any", True, {"type": "any"}),
    ("grep", True, {"type": "tool", "name": "grep"}),
    ("none", True, {"type": "none"}),
    ("any", False, {"type": "any", "disable_parallel_tool_use": True}),
    (None, True, None)])
def test_tool_choice_applies_to_the_first_call(choice, parallel, sent):
    assert tool_choice(choice, parallel) == sent
    script = Script([use("g", "grep", pattern="a")])
    run(script, tool_choice=choice, parallel=parallel)
    assert script.requests[0].get("tool_choice") == sent
    later = script.requests[1].get("tool_choice")
    assert later == (None if parallel else {"type": "auto", "disable_parallel_tool_use": True})


def test_strict_definitions_are_sent_with_tool_choice_any():
    strict = Tool("grep", "Regex search.", {"type": "object", "properties": {
        "pattern": {"type": "string"}}, "required": ["pattern"],
        "additionalProperties": False}, lambda a, c: "(no matches)", strict=True)
    script = Script()
    run(script, [strict], tool_choice="any")
    assert script.requests[0]["tools"][0]["strict"] is True
    assert script.requests[0]["tool_choice"] == {"type": "any"}


def test_max_turns_ends_with_a_message_not_an_exception():
    """The message names the limit as a notebook and `run_agent` set it, `max_turns`, and as
    the command line does: notebook 05 run with `-p max_turns=2` advised "--max-turns", an
    option a notebook reader has not got, after a constant's name, "(MAX_TURNS)"."""
    script = Script(*[[use(f"t{i}", "grep", pattern="a")] for i in range(5)])
    result = run(script, max_turns=3)
    assert result.stop_reason == "max_turns" and result.turns == 3 and len(script.requests) == 3
    assert result.answer == ("Stopped after 3 turns, the turn limit, without an answer. Ask a "
                             "narrower question, or allow more turns (max_turns; on the "
                             "command line --max-turns).")
    assert result.tool_calls[-1].executed is False
    assert result.messages[-1]["content"][0]["content"].startswith("Not executed: the run "
                                                                   "reached its turn limit")


def test_the_token_budget_stops_the_run():
    script = Script(*[[use(f"t{i}", "grep", pattern="a")] for i in range(5)], usage=(100, 10))
    result = run(script, token_budget=300)  # 110 after call 1, 110 + 210 = 320 after call 2
    assert result.stop_reason == "budget" and result.turns == 2
    assert "token budget of 300 tokens" in result.answer
    assert [u.input for u in result.usage] == [100, 200]


def test_cache_control_only_on_the_last_block_of_each_request():
    script = Script([use("a", "grep", pattern="a"), use("b", "glob", pattern="*")],
                    [use("c", "grep", pattern="b")])
    result = run(script)
    for request in script.requests:
        marked = [(m, b) for m, message in enumerate(request["messages"])
                  for b, block in enumerate(message["content"]) if "cache_control" in block]
        last = len(request["messages"]) - 1
        assert marked == [(last, len(request["messages"][last]["content"]) - 1)]
        assert request["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in b for m in result.messages[1:] for b in m["content"])
    script = Script([use("a", "grep", pattern="a")])
    run(script, cache_prefix=False)
    assert "cache_control" not in str(script.requests)


def test_a_reply_without_text_gets_a_nudge_then_stops():
    script = Script([], [{"type": "text", "text": "pay/refund.py:2 subtracts it."}])
    result = run(script)
    assert script.requests[1]["messages"][-1]["content"][0]["text"].startswith(
        "Your last reply had neither text nor tool calls")
    assert result.stop_reason == "answered" and result.sources == ["pay/refund.py:2"]
    result = run(Script([], []))
    assert result.stop_reason == "no_text" and result.turns == 2


def test_results_over_max_output_are_cut_with_advice():
    tools = [Tool("grep", "x", {"type": "object", "properties": {"pattern": {"type": "string"}},
                                "required": ["pattern"]}, lambda a, c: "y" * 50)]
    script = Script([use("a", "grep", pattern="a")])
    llm = LLM(make_client(max_retries=0, transport=standin.transport(script)), cache=False)
    run_agent("q", tools, ToolContext(root=Path("."), max_output=10), llm=llm,
              run_tool=executor(tools))
    content = script.requests[1]["messages"][-1]["content"][0]["content"]
    assert content.startswith("y" * 10 + "\n[truncated at 10 characters: narrow the search")


def test_system_prompt_asks_for_parallel_calls_and_sources_are_parsed():
    assert PARALLEL_PROMPT.startswith("For maximum efficiency, whenever you need to perform "
                                      "multiple independent operations, invoke all relevant "
                                      "tools simultaneously rather than sequentially.")
    assert PARALLEL_PROMPT in SYSTEM
    assert sources("See orders/cancel.py:68 and (payments/refund.py:39); cancel.py:68.") == \
        ["orders/cancel.py:68", "payments/refund.py:39", "cancel.py:68"]


@pytest.fixture
def tool_modules(monkeypatch):
    """The real tools when present; else fakes with their names under their module names."""
    try:
        import ragkit.agent.tools  # noqa: F401
        import ragkit.agent.gate  # noqa: F401
    except ImportError:
        tools = file_tools(shopcore_files())
        monkeypatch.setitem(sys.modules, "ragkit.agent.tools",
                            types.SimpleNamespace(TOOLS={t.name: t for t in tools}))
        monkeypatch.setitem(sys.modules, "ragkit.agent.gate",
                            types.SimpleNamespace(run_tool=executor(tools)))


def test_ragkit_ask_agent_against_a_loopback_server(tool_modules, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    trace = tmp_path / "run.jsonl"
    with standin.serve() as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert main(["ask", "--agent", "--root", str(SHOPCORE), "--trace", str(trace),
                     "Find the bug that stores a negative refund amount"]) == 0
    out, err = capsys.readouterr()
    assert "orders/cancel.py:68" in out and "[1] orders/cancel.py:68" in out
    assert "[2] payments/refund.py:39" in out
    assert "answered after 4 turns" in err
    assert len(trace.read_text().splitlines()) == 4
    assert main(["ask", "--agent", "q"]) == 2
    assert "needs both --agent and --root" in capsys.readouterr().err


@pytest.mark.parametrize("option, value", [("--trace", "t.jsonl"), ("--max-turns", "3")])
def test_an_agent_option_without_agent_is_refused_not_ignored(tmp_path, monkeypatch, capsys,
                                                             option, value):
    """`ask --index DIR --trace t.jsonl` answered from the index, exit 0, and wrote no trace."""
    monkeypatch.chdir(tmp_path)
    assert main(["ask", "--index", "idx", option, value, "refund deadline"]) == 2
    assert capsys.readouterr().err == (f"ragkit: error: {option} is for the agent: give it "
                                       f"with --agent --root DIR\n")
    assert list(tmp_path.iterdir()) == []


def test_ask_help_shows_the_loops_own_turn_limit(capsys):
    from ragkit.agent.loop import MAX_TURNS
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    assert f"agent turns at most (default: {MAX_TURNS}, the loop's MAX_TURNS)" in " ".join(
        capsys.readouterr().out.split())


def limit_script() -> Script:
    """Six greps in turn 1 (they run); four reads in turn 2, the limit with --max-turns 2."""
    return Script([use(f"g{i}", "grep", pattern=p) for i, p in enumerate(
                      ["refund", "order", "amount", "discount", "cancel", "total"])],
                  [use(f"r{i}", "read_file", path="pay/refund.py") for i in range(4)])


def test_ask_agent_at_the_turn_limit_counts_the_calls_that_ran(tmp_path):
    # before: "(max_turns after 2 turns, 10 tool calls, 6.0 per tool turn)" — 10 counted the
    # 4 reads of turn 2, which never ran
    (tmp_path / "root" / "pay").mkdir(parents=True)
    (tmp_path / "root" / "pay" / "refund.py").write_text("amount = total - discount\n")
    script = limit_script()
    env = {**os.environ, "RAGKIT_HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "x"}
    with standin.serve(script) as url:
        done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "ask", "--agent",
                               "--root", str(tmp_path / "root"), "--max-turns", "2",
                               "--api-retries", "0", "Where is the refund computed?"],
                              env={**env, "ANTHROPIC_BASE_URL": url}, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(script.requests) == 2
    assert done.stderr.splitlines()[-1] == (
        "(max_turns after 2 turns, 6 tool calls, 6.0 per tool turn; the 4 calls of turn 2 did "
        "not run because the turn limit was reached)")


def test_one_turn_and_one_file_are_counted_in_the_singular(tmp_path, capsys):
    """A run stopped at --max-turns 1 said "Stopped after 1 turns", a budget of 1 token "1
    tokens", and grep over one file "in the 1 files"."""
    (tmp_path / "root" / "pay").mkdir(parents=True)
    (tmp_path / "root" / "pay" / "refund.py").write_text("amount = total - discount\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    env["RAGKIT_HOME"] = str(tmp_path / "home")
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "ask", "--agent",
                           "--root", str(tmp_path / "root"), "--max-turns", "1",
                           "Where is the refund computed?"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("Stopped after 1 turn, the turn limit, without an answer. Ask a "
                           "narrower question, or allow more turns (max_turns; on the command "
                           "line --max-turns).\n")
    assert done.stderr.splitlines()[-1].startswith("(max_turns after 1 turn, 0 tool calls")
    script = Script(*[[use(f"t{i}", "grep", pattern="a")] for i in range(2)], usage=(100, 10))
    assert run(script, token_budget=1).answer.startswith(
        "Stopped after 1 turn: the token budget of 1 token was used up before an answer.")
    assert main(["tool", "grep", "--root", str(tmp_path / "root"), "--args",
                 '{"pattern": "zzq"}']) == 0
    assert json.loads(capsys.readouterr().out)["content"] == (
        "no lines match 'zzq' in the 1 file of '**/*'; try a shorter or more general pattern, "
        "(?i) to ignore case, or docs_search for a question in words")


def test_tool_runner_reaches_the_same_answer_as_the_manual_loop():
    from ragkit.agent.runner import run_with_tool_runner, runner_tools
    tools = file_tools(shopcore_files())
    question = "Find the bug that stores a negative refund amount"
    context = ToolContext(root=SHOPCORE)
    manual = run_agent(question, tools, context, llm=LLM(make_client(max_retries=0), cache=False),
                       run_tool=executor(tools))
    text, replies = run_with_tool_runner(question, tools, context,
                                         client=make_client(max_retries=0),
                                         run_tool=executor(tools))
    assert text == manual.answer and len(replies) == manual.turns == 4
    wrapped = runner_tools(tools, context, executor(tools))
    assert [w.to_dict()["name"] for w in wrapped] == ["grep", "glob", "read_file"]
    assert wrapped[2].to_dict()["input_schema"] == tools[2].input_schema


SLOW_JSONSCHEMA = """
import sys, time
class SlowImport:  # jsonschema's import built its RFC 3987 grammar in 1 to 6 s
    def find_spec(self, name, path=None, target=None):
        if name == "jsonschema":
            time.sleep(1.5)
        return None
sys.meta_path.insert(0, SlowImport())
from ragkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_no_tool_calls_seconds_include_loading_the_argument_checker(tmp_path):
    """Notebook 05's timeline showed the first grep at 3.2 s and every other call as a
    sliver: that grep's seconds were the import of jsonschema, the argument checker, on the
    run's first call. The loop loads it before its first turn; the trace times the tools."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([sys.executable, "-c", SLOW_JSONSCHEMA, "ask", "--agent", "--root",
                           str(SHOPCORE), "--trace", str(tmp_path / "trace.jsonl"),
                           "Find the bug that stores a negative refund amount"],
                          env={**env, "RAGKIT_HOME": str(tmp_path / "home")},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    from ragkit.agent.trace import read_trace
    calls = [call for record in read_trace(tmp_path / "trace.jsonl")
             for call in record["tool_calls"]]
    assert [c["name"] for c in calls[:2]] == ["grep", "grep"]
    assert max(c["seconds"] for c in calls) < 1.0, [c["seconds"] for c in calls]


@pytest.mark.parametrize("question, turns, said", [
    ("Find the bug", 0, "max_turns must be at least 1, got 0"),
    ("Find the bug", -3, "max_turns must be at least 1, got -3"),
    ("  ", 8, "the question is empty"),
    ("Find the bug", 8, "{root}/absent: the tools' root is not a folder"),
])
def test_run_agent_refuses_no_turns_or_no_question_before_any_call(tmp_path, question, turns,
                                                                    said):
    """0 turns made no call and wrote no trace: notebook 05 stopped a cell later on "no such
    trace file", where `ragkit ask --max-turns 0` was refused."""
    class NoCalls:
        def create(self, **params):
            raise AssertionError("no call may be made")
    root = tmp_path / "absent" if "{root}" in said else tmp_path
    with pytest.raises(RagkitError) as error:
        run_agent(question, [], ToolContext(root=root), llm=NoCalls(), max_turns=turns,
                  trace=tmp_path / "t.jsonl")
    assert str(error.value) == said.format(root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_notebook_05_with_no_turns_names_the_parameter(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    done = subprocess.run([str(Path(sys.executable).parent / "ragkit"), "cookbook", "run",
                           "--notebook", "05", "--out", str(tmp_path / "out"), "-p",
                           "max_turns=0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "RagkitError: max_turns must be at least 1, got 0" in done.stdout + done.stderr
