"""Agentic RAG: a model decides whether, how often and with which tool to search (after the
agentic-RAG notes: agentic search, CRAG, Self-RAG).

The package, one concept per module:
- `tool.py`: the `Tool` record every tool is, its `ToolResult`, and `ToolContext` (the
  sandbox root, the retriever, the approval policy, output limits);
- `safe_open.py`: files opened beneath the root one descriptor at a time, no link followed
  (regular, single-named files only); `sandbox.py`: bounded listings; `regex_search.py`:
  bounded regex search;
- `tools.py`: the tools — `grep`, `glob`, `read_file` (the agentic-RAG notes' names),
  `docs_search`, `reports_sql`, `notes_save` (the one write tool, behind the approval gate);
- `gate.py`: approval policies (read tools run automatically, write tools need a yes);
- `loop.py`: the agentic loop over `messages.create(tools=...)`, the rules of Anthropic's tool-use
  docs enforced;
- `trace.py`: JSONL traces, their tables and timelines, optional OpenTelemetry spans;
- `views.py`: notebook tables and figures of runs (tools, calls, tool choice, the cost of
  looping, `gate_result`: what the approval gate did with a writing call); `result.py`:
  a run's `AgentResult` and its tool calls in words (those that ran; unrun calls named);
  `injection.py`: where untrusted text went and whether it changed the next action;
- `crag.py`, `self_rag.py`: corrective RAG and Self-RAG-style reflection; `grep_fallback.py`:
  CRAG's default "search elsewhere", a plain grep over the raw corpus;
- `long_context.py`: the whole corpus in one cached prompt, the baseline Anthropic's Contextual
  Retrieval article names;
- `compare.py`: plain RAG, CRAG, Self-RAG and long context on golden questions (accuracy,
  calls, tokens, latency, projected cost).

Offline, the offline stand-in (`ragkit.standin`) answers the loop's requests through the
same SDK code path; it is a documented deterministic program, never presented as a model.

The face: `from ragkit.agent import name`, in the order a run goes —
- tools: `Tool`, `ToolResult`, `ToolContext`, `TOOLS` (the tools above, by name);
- approval: `DenyAll` (the default), `AllowAll`, `Scripted` (answers fixed in advance);
- run: `run_agent` (the loop) and its `AgentResult`; `run_with_tool_runner` (the SDK's Tool
  Runner on the same tools, for comparison);
- read a run: `read_trace`, `trace_table`, `caching_table`, `timeline`; `calls_summary`,
  `calls_table`, `calls_per_turn_sentence`, `tool_table`, `tool_choice`, `caching_summary`,
  `caching_effect`, `caching_prose`, `loop_vs_runner`, `tokens_figure`, `agent_finding`;
  injected text: `locate`, `next_actions`, `injection_outcome`, `off_the_bug`;
- compare methods: the modules `compare`, `crag`, `self_rag`, `long_context` (used as
  `compare.run_methods(...)`, `crag.GrepCorpus(...)`).

What the face is not: a place the package's own modules import from — they import each other
by module path, so a submodule never loads the face's other parts.
Why lazy: every name loads from its home module on first use (`ragkit.lazy`), so importing a
light module such as `ragkit.agent.tool` does not load the loop, the Anthropic SDK or pandas.
"""
from ragkit.lazy import attach as _attach

_LAZY = {
    "ragkit.agent.tool": ["Tool", "ToolContext", "ToolResult"],
    "ragkit.agent.tools": ["TOOLS"],
    "ragkit.agent.gate": ["AllowAll", "DenyAll", "Scripted"],
    "ragkit.agent.loop": ["run_agent"],
    "ragkit.agent.result": ["AgentResult", "calls_summary"],
    "ragkit.agent.runner": ["run_with_tool_runner"],
    "ragkit.agent.trace": ["caching_table", "read_trace", "timeline", "trace_table"],
    "ragkit.agent.views": ["agent_finding", "caching_effect", "caching_prose", "caching_summary",
                           "calls_per_turn_sentence", "calls_table", "gate_result",
                           "loop_vs_runner", "tokens_figure", "tool_choice", "tool_table"],
    "ragkit.agent.injection": ["injection_outcome", "locate", "next_actions", "off_the_bug"],
}
_MODULES = ["ragkit.agent.compare", "ragkit.agent.crag", "ragkit.agent.long_context",
            "ragkit.agent.self_rag"]
__getattr__, __dir__ = _attach(__name__, _LAZY, _MODULES)

__all__ = [
    "AgentResult", "AllowAll", "DenyAll", "Scripted", "TOOLS", "Tool", "ToolContext",
    "ToolResult", "agent_finding", "caching_effect", "caching_prose", "caching_summary",
    "caching_table", "calls_per_turn_sentence", "calls_summary", "calls_table", "compare", "crag",
    "gate_result", "injection_outcome", "locate", "long_context", "loop_vs_runner",
    "next_actions", "off_the_bug", "read_trace", "run_agent", "run_with_tool_runner",
    "self_rag", "timeline", "tokens_figure", "tool_choice", "tool_table", "trace_table",
]
