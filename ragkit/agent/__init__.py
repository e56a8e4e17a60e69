"""Agentic RAG: a model decides whether, how often and with which tool to search (after the
agentic-RAG notes: agentic search, CRAG, Self-RAG).

The package, one concept per module:
- `tool.py`: the `Tool` record every tool is, its `ToolResult`, and `ToolContext` (the
  sandbox root, the retriever, the approval policy, output limits);
- `safe_open.py`: files opened beneath the root one descriptor at a time, no link followed
  (regular, single-named files only); `sandbox.py`: bounded listings and regex search;
- `tools.py`: the tools — `grep`, `glob`, `read_file` (the agentic-RAG notes' names),
  `docs_search`, `reports_sql`, `notes_save` (the one write tool, behind the approval gate);
- `gate.py`: approval policies (read tools run automatically, write tools need a yes);
- `loop.py`: the agentic loop over `messages.create(tools=...)`, the rules of Anthropic's tool-use
  docs enforced;
- `trace.py`: JSONL traces, their tables and timelines, optional OpenTelemetry spans;
- `views.py`: notebook tables and figures of runs (tools, calls, tool choice, the cost of
  looping); `injection.py`: where untrusted text went and whether it changed the next action;
- `crag.py`, `self_rag.py`: corrective RAG and Self-RAG-style reflection; `grep_fallback.py`:
  CRAG's default "search elsewhere", a plain grep over the raw corpus;
- `long_context.py`: the whole corpus in one cached prompt, the baseline Anthropic's Contextual
  Retrieval article names;
- `compare.py`: plain RAG, CRAG, Self-RAG and long context on golden questions (accuracy,
  calls, tokens, latency, projected cost).

Offline, the offline stand-in (`ragkit.standin`) answers the loop's requests through the
same SDK code path; it is a documented deterministic program, never presented as a model.
"""
