"""The agent's tools: the agentic-RAG notes' file tools, the hybrid retriever, SQL over the
reports, notes.

What it is: `TOOLS` (name → `Tool`) and `definitions()` for `messages.create(tools=...)`:
- `grep`, `glob`, `read_file` — the agentic-RAG notes' names and `path:line:text` format,
  sandboxed to `ToolContext.root` (`ragkit.agent.file_tools`);
- `docs_search` — the hybrid retriever (`ToolContext.pipeline`) with results as
  `search_result` blocks, citations enabled, as `ragkit.answer` sends them;
- `reports_sql` — one read-only SELECT over the reports' figures (`ragkit.agent.reports_db`);
- `notes_save` — the one write tool (`writes=True`): `ragkit.agent.gate` runs it only after
  the approval policy says yes.
The rules of Anthropic's tool-use docs for each: a description of 3–4+ sentences (what,
when, when not, each parameter, limits), `input_examples`, semantic ids in results (paths,
chunk ids, doc ids), and truncation messages that say how to search more narrowly. Source:
platform.claude.com "Define tools" and anthropic.com "Writing tools for agents".

What it is not: the approval gate, the schema check or the output cap — `gate.run_tool`
applies those to every call; call tools through it, not through `Tool.run` directly (the
gate imports this registry, never the other way round).
File content comes back verbatim inside the result: untrusted text is never rewritten,
summarised or moved out of its `tool_result` block.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragkit.agent import reports_db
from ragkit.agent.file_tools import MAX_HITS, run_glob, run_grep, run_read_file
from ragkit.agent.safe_open import short, shown_bytes, undecodable
from ragkit.agent.tool import Tool, ToolContext, ToolError, ToolResult, block_size
from ragkit.atomic import write_text
from ragkit.documents import RagkitError

COMPANIES = ("Brightwater Foods, Cedarline Health, Halvorsen Maritime, Northwind Robotics, "
             "Orchard Lane Retail, Quillmark Publishing, Solvara Energy, Tessellate "
             "Semiconductors")


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


# ---------------------------------------------------------------------------- search, SQL
def run_docs_search(args: dict[str, Any], ctx: ToolContext) -> ToolResult | str:
    pipeline = ctx.pipeline
    if pipeline is None:
        raise ToolError("docs_search is not available: no index was loaded; use grep, glob "
                        "and read_file on the files instead")
    # deferred: numpy, pandas, scipy; needed by docs_search on an index, never by file tools
    from ragkit.answer import search_result
    from ragkit.assemble import Passage, label, lift
    from ragkit.pipeline import SearchConfig
    mode = "hybrid" if pipeline.dense is not None else "bm25"
    hits = pipeline.search([args["query"]], args.get("k", 3), SearchConfig(mode=mode))[0]
    chunks = {c.id: c for c in pipeline.chunks}
    if pipeline.parents:
        hits, lifted = lift(hits, pipeline.parents)
        chunks.update(lifted)
    if not hits:
        return (f"no passages match {args['query']!r}; try other words or fewer of them, or "
                f"grep for an exact identifier")
    blocks, left_out, used = [], [], 0
    budget = ctx.max_output - 300  # room for the note on what was left out
    for rank, (ident, score) in enumerate(hits, start=1):
        chunk = chunks[ident]
        block = search_result(Passage(ident, chunk.doc_id, *label(chunk), chunk.text,
                                      float(score), rank))
        size = block_size(block)
        if blocks and used + size > budget:
            left_out.append(ident)
            continue
        if not blocks and size > budget:  # the best one alone is too long: cut it
            keep, total = [], len(block["title"])
            for piece in block["content"]:
                if keep and total + len(piece["text"]) > budget:
                    break
                keep.append(piece)
                total += len(piece["text"])
            block["content"] = keep
        blocks.append(block)
        used += size
    if left_out:
        blocks.append({"type": "text", "text": (
            f"[truncated: {len(left_out)} more result(s) did not fit in {ctx.max_output} "
            f"characters: {', '.join(left_out)}; open one with read_file on the path before "
            f"'#', or search again with a narrower query]")})
    return ToolResult(blocks)


def run_reports_sql(args: dict[str, Any], ctx: ToolContext) -> str:
    return reports_db.query(args["query"], ctx.database, max_chars=ctx.max_output - 300)


# ---------------------------------------------------------------------------- notes
# control and format characters (NUL, escape, bidi marks) have no place in a one-line title
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _note_path(folder: Path, title: str) -> Path:
    slug = re.sub(r"\W+", "-", title.lower()).strip("-")[:60] or "note"
    path, number = folder / f"{slug}.md", 2
    while path.exists() or path.is_symlink():
        path, number = folder / f"{slug}-{number}.md", number + 1
    return path


def _shown(path: Path, ctx: ToolContext) -> str:
    """`path` as the model may see it: relative to the root, else the notes folder's name and
    the file's (never the machine's absolute path)."""
    real = path.resolve()
    root = Path(ctx.root).resolve()
    return real.relative_to(root).as_posix() if real.is_relative_to(root) else \
        f"{path.parent.name}/{path.name}"


def _scrubbed(message: str, ctx: ToolContext) -> str:
    """`message` without the machine's folders above the root and the notes folder: paths
    under the root relative to it, others from the notes folder's name ("…/notes/x.md")."""
    roots = {str(Path(ctx.root)), str(Path(ctx.root).resolve())}
    for prefix in sorted(roots, key=len, reverse=True):
        message = message.replace(prefix + "/", "")
    notes = Path(ctx.notes or ".")
    for prefix in sorted({str(notes.parent), str(notes.resolve().parent)}, key=len,
                         reverse=True):
        if len(prefix) > 1:  # not "/" itself
            message = message.replace(prefix, "…")
    return message


def run_notes_save(args: dict[str, Any], ctx: ToolContext) -> str:
    """Save a new note (never over another file); the title one line of printable text."""
    if ctx.notes is None:
        raise ToolError("notes_save is not available: no notes folder was configured; give "
                        "the note's content in your answer instead")
    for field in ("title", "text"):
        if undecodable(args[field]):  # no file, request or trace can carry it
            shown = short(shown_bytes(args[field]))
            raise ToolError(f"the {field} holds a lone surrogate ('{shown}'), which is not "
                            f"Unicode text; send it as plain text")
    title = " ".join(_UNPRINTABLE.sub(" ", args["title"]).split())  # NUL, escape, bidi ...
    if not title:
        raise ToolError("the title is empty; give a short title such as 'Refund bug'")
    path = _note_path(Path(ctx.notes), title)
    try:
        write_text(path, f"# {title}\n\n{args['text'].strip()}\n", is_ours=lambda _: False,
                   what="a new note")
    except RagkitError as exc:
        raise ToolError(f"the note was not saved: {_scrubbed(str(exc), ctx)}") from None
    return f"saved the note '{title}' as {_shown(path, ctx)} ({len(args['text'])} characters)"


# ---------------------------------------------------------------------------- definitions
def _tool(name: str, run, description: str, properties: dict[str, Any], required: list[str],
          examples: list[dict[str, Any]], writes: bool = False) -> Tool:
    return Tool(name, " ".join(description.split()), _schema(properties, required), run,
                tuple(examples), writes)


_TEXT = {"type": "string"}
TOOLS: dict[str, Tool] = {t.name: t for t in (
    _tool("grep", run_grep, """
        Search the text files under the root for lines matching a regular expression
        (Python `re` syntax, case-sensitive; start the pattern with (?i) to ignore case).
        Use it when you know an exact word, identifier, function name, error code or clause
        number — for example to find where a function is defined and every place that calls
        it. Do not use it for questions in ordinary language (use docs_search) or for figures
        that must be added up or compared across reports (use reports_sql). `pattern` is
        matched against each line; `path_glob` limits the search to files whose path
        relative to the root matches it (default '**/*', every file; e.g. 'code/**/*.py');
        `max_hits` caps the lines returned (default 50, at most 200). Results are
        'path:line:text' lines sorted by path then line, paths relative to the root, ready
        for read_file. A search is stopped after 2 seconds (avoid nested repetition such as
        (a+)+), each line is cut at 300 characters, and binary, non-UTF-8, over-1-MB and
        hard-linked files are skipped and named. Symbolic links are never followed, FIFOs and
        devices are never opened, and finding the files stops after 50,000 entries or 2
        seconds; the result says what was left out and how to narrow path_glob.""",
          {"pattern": {**_TEXT, "description": "regular expression matched against each line"},
           "path_glob": {**_TEXT, "description": "glob of the files to search, relative to "
                                                 "the root (default '**/*')"},
           "max_hits": {"type": "integer", "minimum": 1, "maximum": MAX_HITS,
                        "description": "most matching lines to return (default 50)"}},
          ["pattern"],
          [{"pattern": "calculate_refund"},
           {"pattern": r"def \w+_refund\(", "path_glob": "code/**/*.py", "max_hits": 20}]),
    _tool("glob", run_glob, """
        List the files under the root whose relative paths match a glob pattern. Use it to
        find files by name or location — '**/refund*.py' for every refund module,
        'policies/en/*.md' for one folder — before reading them with read_file or narrowing
        grep with path_glob. Do not use it to search inside files (use grep for that).
        `pattern`:
        '*' matches within one folder or file name, '**/' any number of folders (none
        included), '?' one character, '[abc]' one of a set; paths are relative to the root
        and use '/'. Returns matching regular files (never folders), sorted, one per line, at
        most 200; hidden files and __pycache__ are not listed. Symbolic links are never
        followed (not even to files inside the root): links the pattern reaches are named on a
        '[not followed: ...]' line, as are FIFOs and devices. The walk stops after 50,000
        entries or 2 seconds, 64 folder levels deep at most, and then says so: narrow the
        pattern to a folder.""",
          {"pattern": {**_TEXT, "description": "glob relative to the root, e.g. '**/*.md'"}},
          ["pattern"],
          [{"pattern": "**/refund*.py"}, {"pattern": "policies/en/*.md"}]),
    _tool("read_file", run_read_file, """
        Read one text file under the root as numbered lines ('  12 | text'), after a header
        naming the file, the range shown and its total number of lines. Use it once grep,
        glob or docs_search has told you which file (and which lines) matter, to see the
        surrounding code or text; cite the path and line numbers you relied on. Do not use it
        to look for something across many files (use grep or docs_search). `path` is
        relative to the root, as grep and glob print it (e.g.
        'code/shopcore/payments/refund.py'); `start_line` (default 1) and `end_line`
        (default: the last line) are 1-based and inclusive. At most 200 lines or about 4,000
        characters come back per call; a longer range ends with the lines to read next.
        Only regular text files are read: binary files, files over 1 MB, files that are not
        UTF-8, FIFOs, devices and files with several names (hard links) are refused. Paths
        cannot leave the root: no absolute paths, no '..' above it, and no symbolic link is
        followed, even one pointing inside (the error names the path it points to).""",
          {"path": {**_TEXT, "description": "file path relative to the root"},
           "start_line": {"type": "integer", "minimum": 1, "description": "first line (1)"},
           "end_line": {"type": "integer", "minimum": 1, "description": "last line shown"}},
          ["path"],
          [{"path": "code/shopcore/payments/refund.py"},
           {"path": "code/shopcore/orders/cancel.py", "start_line": 20, "end_line": 60}]),
    _tool("docs_search", run_docs_search, """
        Search the indexed documents (quarterly reports, manuals, policies, notes and code)
        by meaning and keywords with the hybrid retriever (BM25 + dense embeddings), and get
        the best passages back as search results you can cite. Use it for questions in
        ordinary language, including paraphrases that share no words with the text, and when
        you do not know which file to look in. Do not use it to find every occurrence of an
        identifier (use grep) or to compute totals, rankings or growth across many reports
        (use reports_sql). `query`: a short, specific query — one question or topic per call,
        naming the company, product, policy or quarter it concerns; `k`: passages to return
        (default 3, at most 8). Each result's source is its chunk id ('<document path>#<n>';
        read_file opens the path before '#') and its title names the document and section;
        results are cut to about 4,000 characters in all, and the result lists the passages
        left out.""",
          {"query": {**_TEXT, "description": "the search query, in words"},
           "k": {"type": "integer", "minimum": 1, "maximum": 8,
                 "description": "passages to return (default 3)"}},
          ["query"],
          [{"query": "cooling-off period for refunds"},
           {"query": "Northwind Robotics acquisition of Gantry Optics", "k": 5}]),
    _tool("reports_sql", run_reports_sql, f"""
        Run one read-only SQL query (SQLite) over the figures stated in the quarterly reports
        of eight companies, 2024 Q1 to 2025 Q4. Use it for questions that combine numbers
        across reports: totals, averages, rankings, growth between years or quarters, "which
        company ... the most or the fastest". Do not use it for the reports' wording, events
        or explanations (use docs_search, or grep on reports/), nor for anything else.
        `query`: a single SELECT or WITH ... SELECT statement over two tables —
        reports(company, year, quarter, doc_id, revenue, prev_revenue, growth_pct, yoy_pct,
        gross_margin, operating_expenses, rd_expense, operating_income, operating_margin,
        headcount, operating_cash_flow, capex, free_cash_flow, cash, debt, order_intake,
        guidance_low, guidance_high), one row per company and quarter (quarter is 1-4), and
        segments(company, year, quarter, segment, revenue, change_pct, operating_margin).
        Money is in $ million; percentages and margins are as the reports round them;
        doc_id is the report's path for read_file; companies: {COMPANIES}. At most 50 rows
        come back, a query is stopped after 2 seconds, and anything that is not a read
        (INSERT, PRAGMA, ATTACH, ...) is refused.""",
          {"query": {**_TEXT, "description": "one SQLite SELECT statement"}},
          ["query"],
          [{"query": "SELECT company, SUM(revenue) AS revenue_2025 FROM reports "
                     "WHERE year = 2025 GROUP BY company ORDER BY revenue_2025 DESC"},
           {"query": "SELECT quarter, segment, revenue FROM segments WHERE company = "
                     "'Cedarline Health' AND year = 2025 ORDER BY quarter, segment"}]),
    _tool("notes_save", run_notes_save, """
        Save a Markdown note — a finding, a summary or a proposed code fix — in the notes
        folder for the user to read later. It is the only tool that writes anything, so it
        runs only after the user approves the call; if the result says it was not approved,
        do not retry it: give the note's content in your answer instead. Do not use it for
        scratch work or to store text copied from documents without comment. `title`: a
        short title that also names the file (e.g. 'Refund double-discount bug'); `text`:
        the Markdown body, at most 20,000 characters — for a proposed fix, name the file and
        lines and show the change. It never overwrites a note (a title used before gets a
        numbered file name) and returns the saved note's path.""",
          {"title": {**_TEXT, "minLength": 1, "maxLength": 120, "description": "note title"},
           "text": {**_TEXT, "maxLength": 20000, "description": "Markdown body"}},
          ["title", "text"],
          [{"title": "Refund double-discount bug",
            "text": "`orders/cancel.py` subtracts the discount that `calculate_refund()` "
                    "already subtracted; remove the second subtraction."}],
          writes=True),
)}


def definitions(names: list[str] | None = None) -> list[dict[str, Any]]:
    """The definitions of `names` (default: every tool) for `messages.create(tools=...)`."""
    unknown = [n for n in names or () if n not in TOOLS]
    if unknown:
        raise RagkitError(f"unknown tool(s) {', '.join(unknown)} (known: {', '.join(TOOLS)})")
    return [TOOLS[n].definition() for n in (names or TOOLS)]
