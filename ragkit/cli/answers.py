"""`ragkit ask` (cited answers from an index, or the agent over a folder) and `ragkit tool`."""
from __future__ import annotations

import argparse
import sys

from ragkit.agent.result import calls_summary
from ragkit.agent.tool import ToolContext  # light: the tools' context, no SDK
from ragkit.cli.argtypes import nonempty_path, written_path
from ragkit.cli.options import (DEFAULT_RERANK, Help, chosen_rerank, clamp_k, load_index,
                                positive_int, terminal_json, terminal_text)
from ragkit.cli.fusion import add_fusion_options, fusion_given, fusion_settings
from ragkit.documents import RagkitError, check_query_length, composed
from ragkit.index_owner import refuse_output_in_index
from ragkit.jsonl import parse_json
from ragkit.text_stats import counted


def cmd_ask(args: argparse.Namespace) -> None:
    """Search the index, answer with citations, print the numbered sources."""
    if not args.question.strip():
        raise RagkitError("the question is empty")
    args.question = composed(check_query_length(args.question, "the question"))
    given = [o for o, v in (("--trace", args.trace), ("--max-turns", args.max_turns)) if v]
    if given and not args.agent:  # an answer from --index has no turns: it was ignored
        raise RagkitError(f"{given[0]} is for the agent: give it with --agent --root DIR")
    if args.agent or args.root:
        if args.rerank is not None:  # docs_search ranks as its tool does; it was ignored
            raise RagkitError("--rerank is for an answer from --index; the agent's docs_search "
                              "does not rerank")
        if fusion_given(args):
            raise RagkitError("--fusion, --dense-weight and --rrf-k are for an answer from "
                              "--index; the agent's docs_search fuses as its tool does")
        return _ask_agent(args)
    if args.index is None:
        raise RagkitError("ask needs --index DIR, or --agent --root DIR")
    # deferred: numpy and the Anthropic client load only when a question is asked
    from ragkit.answer import Answer, answer, answer_stream, answers_with
    from ragkit.citation_tags import tags_place
    from ragkit.pipeline import SearchConfig
    pipeline = load_index(args.index)
    # the extractive answerer embeds the passages' sentences: only with the local model it
    # was calibrated for, so an answer never makes a paid embedding call (`answers_with`)
    local = pipeline.has_dense and answers_with(pipeline.config.embedder)
    mode = "hybrid" if pipeline.has_dense else "bm25"
    # the passages `ragkit search` ranks first: ask read the hybrid order unreranked, and a
    # user saw search put the answer first while ask declined on another file
    rerank = chosen_rerank(args.rerank, mode, pipeline)
    hits = pipeline.search([args.question], clamp_k(args.k, len(pipeline.chunks)),
                           SearchConfig(mode=mode, rerank=rerank,
                                        **fusion_settings(args, [mode])))[0]
    for stage in pipeline.rerank_stages.values():  # a fallback, or a stand-in for Claude
        if stage.fallbacks or rerank != DEFAULT_RERANK:
            print(stage.summary(), file=sys.stderr)
    llm = _llm("the offline extractive answerer answered (sentences ranked by a small fitted "
               "scorer over the index's embedder and term coverage; no language model, no "
               "cost)" if local else
               "the offline stand-in answered (extractive quotes, no cost)")
    ask = dict(parents=pipeline.parents, llm=llm, budget_tokens=args.budget,
               embedder=pipeline.embedder if local else None)
    if args.stream:
        shown = False
        try:
            for piece in answer_stream(args.question, hits, pipeline.chunks, **ask):
                if isinstance(piece, Answer):
                    result = piece
                else:
                    print(terminal_text(piece), end="", flush=True)
                    shown = True
        finally:  # the line ends, also before an error's line when the stream broke off
            if shown:
                print(flush=True)
    else:
        result = answer(args.question, hits, pipeline.chunks, **ask)
        print(terminal_text(result.text))
    if result.passages.over_budget:  # kept on purpose (`ragkit.assemble`), not silently
        left = len(result.passages.dropped)
        print(f"ragkit: the best passage alone is {result.passages.tokens} tokens, over "
              f"--budget {args.budget}; it was kept (an answer needs evidence)"
              + (f", {counted(left, 'less relevant passage')} left out" if left else ""),
              file=sys.stderr)
    if result.why:  # the offline answerer declined: say why, and what it read
        read = ", ".join(p.chunk_id for p in reversed(result.passages))  # assembled best last
        print(terminal_text(f"declined because {result.why}; the passages read, most relevant "
                            f"first: {read}"), file=sys.stderr)
    pages: dict[str, list[int]] = {}  # a PDF's cited pages, per source
    places: dict[str, list[str]] = {}  # the heading path over each cited sentence, per source
    for citation in result.citations:
        if citation.page is not None and citation.page not in pages.get(citation.chunk_id, []):
            pages.setdefault(citation.chunk_id, []).append(citation.page)
        places.setdefault(citation.chunk_id, []).append(citation.title)
    for number, (ident, tag) in enumerate(result.sources, start=1):
        # the tags of the cited sentences: their heading paths, not where the chunk starts
        cited = sorted(pages.get(ident, []))
        where = (f", p. {cited[0]}" if len(cited) == 1 else
                 f", pp. {', '.join(map(str, cited))}" if cited else "")
        shown = tags_place(places.get(ident) or [tag])  # the title once, then its sections
        print(terminal_text(f"[{number}] {ident} — {shown}{where}"))


def _ask_agent(args: argparse.Namespace) -> None:
    """The agentic loop over the read-only tools (docs_search too with --index)."""
    # deferred: ragkit.agent (the loop loads the Anthropic client), only for ask --agent
    from ragkit.agent.loop import run_agent
    from ragkit.agent.tools import TOOLS
    if not (args.agent and args.root):
        raise RagkitError("the agent needs both --agent and --root DIR")
    if not args.root.is_dir():
        raise RagkitError(f"{args.root}: --root: " + ("a file, not a folder" if args.root.exists()
                                                        else "no such folder"))
    if args.trace is not None:
        refuse_output_in_index(args.trace, "--trace")
    pipeline = load_index(args.index) if args.index is not None else None
    names = ["grep", "glob", "read_file"] + (["docs_search"] if pipeline is not None else [])
    llm = _llm("the offline stand-in program drives the loop (a fixed search-read-answer "
               "heuristic, no cost)")
    turns = {"max_turns": args.max_turns} if args.max_turns else {}  # else the loop's own
    result = run_agent(args.question, [TOOLS[n] for n in names],
                       ToolContext(root=args.root.resolve(), pipeline=pipeline), llm=llm,
                       trace=args.trace, **turns)
    print(terminal_text(result.answer))
    for number, source in enumerate(result.sources, start=1):
        print(terminal_text(f"[{number}] {source}"))
    # the calls that ran: at --max-turns or the token budget the last turn's never do
    print(f"({result.stop_reason} after {counted(result.turns, 'turn')}, "
          f"{calls_summary(result)})", file=sys.stderr)


def cmd_tool(args: argparse.Namespace) -> int:
    """Run one agent tool through the gate and print its tool_result block as JSON."""
    # deferred: ragkit.agent (its tools load sqlite3 and tabulate), only for ragkit tool
    from ragkit.agent.gate import AllowAll, DenyAll, run_tool
    if not args.root.is_dir():
        raise RagkitError(f"--root {args.root}: not a folder")
    arguments = parse_json(args.args, "--args")
    context = ToolContext(root=args.root, notes=args.notes,
                          pipeline=load_index(args.index) if args.index else None,
                          policy=AllowAll() if args.approve else DenyAll())
    result = run_tool(args.name, arguments, context)
    print(terminal_json(result.block("toolu_cli")))
    return 1 if result.is_error else 0


def _llm(offline: str):
    """The Claude client of `ragkit.llm`; without ANTHROPIC_API_KEY, one stderr line saying
    what answers instead (`offline`)."""
    from ragkit.llm import LLM  # deferred: the Anthropic client, only for ask
    llm = LLM()
    if llm.offline:
        print(f"ragkit: ANTHROPIC_API_KEY is not set, so {offline}", file=sys.stderr)
    return llm


def add_parsers(sub) -> None:
    """Add this module's subcommands to the `ragkit` parser."""
    p = sub.add_parser("ask", help="answer a question from an index, with numbered sources",
                       formatter_class=Help)
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--index", type=nonempty_path,
                   help="index folder (with --agent: for docs_search)")
    p.add_argument("--agent", action="store_true",
                   help="let a model search --root with grep, glob and read_file in a loop")
    p.add_argument("--root", type=nonempty_path, help="folder the agent's file tools may read")
    p.add_argument("--trace", type=nonempty_path, metavar="FILE.jsonl",
                   help="write the agent's turns as a JSONL trace")
    p.add_argument("--max-turns", type=positive_int,
                   help="agent turns at most (default: 8, the loop's MAX_TURNS)")
    p.add_argument("--k", type=positive_int, default=5,
                   help="passages retrieved (before the budget)")
    p.add_argument("--rerank", default=None,
                   help="reranker of the hybrid top 150, as `ragkit search` ranks: offline, "
                        f"none, claude, voyage:MODEL (default: {DEFAULT_RERANK}; none on an "
                        f"index without vectors)")
    add_fusion_options(p)
    p.add_argument("--budget", type=positive_int, default=8000,
                   help="prompt tokens for the passages (the best passage is kept even when "
                        "alone over it)")
    p.add_argument("--stream", action="store_true", help="print the answer as it is written")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("tool", help="run one agent tool, print its tool_result block",
                       formatter_class=Help)
    p.add_argument("name", help="tool name: grep, glob, read_file, docs_search, reports_sql, "
                                "notes_save")
    p.add_argument("--root", type=nonempty_path, required=True,
                   help="the folder file tools may read")
    p.add_argument("--args", default="{}", help='the tool input as JSON, e.g. \'{"pattern": '
                                                '"calculate_refund"}\'')
    p.add_argument("--index", type=nonempty_path, help="index folder for docs_search")
    p.add_argument("--notes", type=written_path, help="folder notes_save writes to")
    p.add_argument("--approve", action="store_true",
                   help="approve write tools (default: every write is refused)")
    p.set_defaults(func=cmd_tool)
