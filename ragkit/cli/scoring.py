"""`ragkit eval`: score retrieval on a data set or a TREC run (`tune` is `ragkit.cli.tuning`)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import nullcontext, redirect_stdout

from ragkit.atomic import check_target, write_text
from ragkit.cli.argtypes import check_stdout, nonempty_path
from ragkit.cli.options import (DEFAULT_RERANK, Help, add_index_options, add_search_options,
                                check_index_covers, check_same_options, clamp_k, index_config,
                                load_index, print_rerank_summary, terminal_text)
from ragkit.cli.fusion import fusion_given, fusion_settings
from ragkit.cli.golden import check_questions, warn_unsplit, with_questions
from ragkit.cli.retrieval import batch_size, held_per_query
from ragkit.errors import RagkitError, not_a_file
from ragkit.index_owner import refuse_output_in_index
from ragkit.sheet_cells import csv_text
from ragkit.text_stats import counted


def cmd_eval(args: argparse.Namespace) -> None:
    from ragkit.eval_runs import is_per_query_csv  # deferred: numpy, pandas (eval only)
    if (args.run is None) != (args.qrels is None):
        raise RagkitError("--run and --qrels go together: ragkit eval --run RUN --qrels QRELS")
    if (args.dataset is None) == (args.run is None):
        raise RagkitError("give a DATASET folder, or --run RUN --qrels QRELS" +
                          (" (not both)" if args.dataset is not None else ""))
    # '-' (it wrote a file named "-"): the CSV alone on stdout, every other line on stderr
    args.stdout = sys.stdout if str(args.per_query) == "-" else None
    if args.stdout is not None:
        check_stdout("--per-query")
    elif args.per_query:
        refuse_output_in_index(args.per_query, "--per-query")
        check_target(args.per_query, is_per_query_csv, "a per-query CSV", folder=False)
    with redirect_stdout(sys.stderr) if args.stdout is not None else nullcontext():
        if args.run:
            _eval_run_file(args)
        else:
            _eval_dataset(args)


def _eval_run_file(args: argparse.Namespace) -> None:
    """Score a TREC run against qrels: every relevant id is one golden item."""
    # deferred: numpy and pandas load only when a command scores
    from ragkit.datasets import read_qrels, relevant
    from ragkit.eval_runs import as_judged, check_run, first_ranks, qrels_judgments, score_run
    asked = [*(["--mode"] if args.mode else []), *(["--rerank"] if args.rerank else []),
             *fusion_given(args)]
    if asked:  # they were silently ignored
        raise RagkitError(f"{asked[0]} sets how ragkit searches; --run scores a run file as it "
                          f"was written")
    if not args.run.is_file():
        raise not_a_file(args.run)
    qrels = read_qrels(args.qrels)
    run = as_judged(args.run, qrels)
    judgments = qrels_judgments(relevant(qrels))
    ignored, missing = check_run(run, qrels, judgments, str(args.run), str(args.qrels))
    name = args.run.stem
    tables = {name: score_run(run, judgments, args.k)}
    print(f"{args.run}: {counted(len(judgments), 'judged query', 'judged queries')} "
          f"({len(missing)} without results, scored 0), "
          f"{counted(len(ignored), 'run query', 'run queries')} without judgments ignored")
    _print_and_save(args, {name: first_ranks(run, judgments, args.k)}, tables)


def _split(data, asked: str | None):
    """The data set cut to the split to score, and how to name it: `asked`; else `test` when
    there is one (dev is where the reranker and the fusion weights were fitted); `all` keeps
    every query."""
    if asked == "all" or (asked is None and not any(q.split == "test" for q in data.queries)):
        return data, all_splits(data)
    split = asked or "test"
    warn_unsplit(data, split)
    return data.split(split), f"split {split}"


def all_splits(data) -> str:
    """How to name a data set scored whole: the judgment files read (a BEIR folder's
    `qrels/*.tsv`), else the splits its questions name; "all splits (test)" named a BEIR set
    of which only qrels/test.tsv had been read."""
    names = list(data.judged_by) or sorted({q.split for q in data.queries if q.split})
    return "all splits" + (f" ({', '.join(names)})" if names else "")


NO_QUESTIONS = (" (give labelled questions with --questions FILE, e.g. made by `ragkit "
                "questions generate`)")


def _mode_rerank(mode: str, asked: str | None) -> str:
    """The reranker of one mode's row: --rerank if given, else what `ragkit search` uses."""
    return asked or (DEFAULT_RERANK if mode == "hybrid" else "none")


def _eval_dataset(args: argparse.Namespace) -> None:
    """Build (or load) an index of a data set, run each mode on its judged queries, score."""
    # deferred: numpy, pandas and scipy load only when a command builds or reads an index
    from ragkit.datasets import load_dataset
    from ragkit.eval_runs import score_batches
    from ragkit.evaluate import judge
    from ragkit.pipeline import Pipeline, SearchConfig
    fusion_settings(args, args.mode or ["hybrid"])  # a mismatched option: before any work
    check_questions(args.questions)
    data = load_dataset(args.dataset, args.split, skip_bad=args.skip_bad)
    if args.questions:  # e.g. from `ragkit questions accept`: they replace golden/
        data = with_questions(data, args.questions)
    data, scored = _split(data, args.split)
    if not data.queries:
        raise RagkitError(f"{args.dataset}: no queries to evaluate{NO_QUESTIONS}")
    if args.index:
        pipeline = load_index(args.index)
        check_same_options(args, pipeline.config, args.index, "--index is searched as built")
        check_index_covers(pipeline, data, args)
    else:
        pipeline = Pipeline.build(data.documents, index_config(args), chunks=data.chunks)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    if not judged:  # all unanswerable: nothing to rank against (it printed an empty table)
        raise RagkitError(f"{args.dataset}: no question with golden items to score (all "
                          f"{len(data.queries)} are unanswerable)")
    modes = args.mode or (["bm25", "dense", "hybrid"] if pipeline.has_dense else ["bm25"])
    fusion = fusion_settings(args, modes)
    rerank = {m: _mode_rerank(m, args.rerank) for m in modes}
    for name in set(rerank.values()) - {"none"}:
        pipeline.rerank_stage(name)  # an unknown reranker is refused before any warning
    depth = clamp_k(args.k, len(pipeline.chunks))  # scored at --k: there is no more to rank
    tables, ranks = {}, {}
    for m in modes:  # scored a batch of questions at a time, as `ragkit search` searches
        config = SearchConfig(mode=m, **fusion, rerank=rerank[m],
                              rerank_candidates=args.rerank_candidates)
        name = m if rerank[m] == "none" else f"{m}+{rerank[m]}"
        tables[name], ranks[name] = score_batches(_runs(pipeline, judged, depth, config),
                                                  judgments, args.k)
    print(f"{data.name}: {counted(len(judgments), 'judged query', 'judged queries')} of "
          f"{scored}, {counted(len(pipeline.chunks), 'chunk')}{unscored(data.queries, judged)}")
    _print_and_save(args, ranks, tables, data.queries)
    print_rerank_summary(pipeline)


def unscored(queries: list, judged: list) -> str:
    """"; 2 unanswerable questions (no golden items) not scored" when some of `queries` are
    not `judged` (why "9 judged queries" of a file of 11); empty when every one is."""
    n = len(queries) - len(judged)
    return f"; {counted(n, 'unanswerable question')} (no golden items) not scored" if n else ""


def metrics_text(table) -> str:
    """`table` as text, each column at its metric's decimals in every row (Pass@k 1, MRR and
    R@k 3): pandas alone printed a column of 1.0 and 0.98 as "1.00" / "0.98"."""
    from ragkit.evaluate import metric_decimals  # deferred: pandas
    return table.to_string(formatters={c: f"{{:.{metric_decimals(str(c))}f}}".format
                                       for c in table.columns})


def wide_text(table) -> str:
    """`table` as text, a wide character (Hangul, CJK) counted as the two columns a terminal
    draws it in (a Korean label pushed its row's numbers right)."""
    import pandas as pd  # deferred: pandas (eval only)
    with pd.option_context("display.unicode.east_asian_width", True):
        return table.to_string()


def _runs(pipeline, queries: list, depth: int, config) -> Iterator[dict[str, list[str]]]:
    """The run of `queries` at `depth`, made `batch_size` of the deepest list a query holds
    (its top `depth`, a hybrid's or a reranker's candidates) at a time: never every ranking."""
    step = batch_size(held_per_query(depth, config))
    for start in range(0, len(queries), step):
        yield pipeline.run(queries[start:start + step], depth, config)


def _print_and_save(args: argparse.Namespace, ranks: dict, tables: dict,
                    queries: list = ()) -> None:
    """Print the summary table (by query kind too if asked); write the per-query CSV if asked
    (`ranks`: each method's `eval_runs.first_ranks`)."""
    # deferred: numpy and pandas load only when a command scores
    from ragkit.eval_runs import cutoffs, is_per_query_csv, per_query_rows
    from ragkit.evaluate import by_kind, summary_table
    print(metrics_text(summary_table(tables)))
    if args.by_kind and queries:
        ks = cutoffs(args.k)[0]
        for metric in dict.fromkeys((f"Pass@{ks[0]}", f"Pass@{ks[-1]}")):
            print(f"\n{metric} by query kind")
            # a kind label from a golden file may hold a terminal's escape sequence
            print(terminal_text(wide_text(by_kind(tables, queries, metric).round(1))))
    if args.per_query:
        kinds = {q.id: q.kind for q in queries}
        rows = per_query_rows(ranks, tables, kinds)
        if args.stdout is not None:  # a pipe or `> f.csv` gets the CSV alone
            args.stdout.write(csv_text(rows))
            args.stdout.flush()
        else:
            write_text(args.per_query, csv_text(rows), is_ours=is_per_query_csv,
                       what="a per-query CSV")
        print(f"per-query metrics: "
              f"{'standard output' if args.stdout is not None else args.per_query}")


EVAL_HELP = """Score retrieval, either of each mode on a data set (its index built here, or
--index DIR), or of any TREC run against TREC or BEIR qrels (--run RUN --qrels QRELS).
Pass@k and R@k are shown at 5, 10, 20 up to --k and at --k itself, nDCG at 10 (at --k
when smaller); MRR is over the top --k results."""


def add_parsers(sub) -> None:
    """Add this module's subcommands to the `ragkit` parser."""
    p = sub.add_parser("eval", help="Pass@k, recall, MRR, nDCG of each mode or of a run",
                       description=EVAL_HELP, formatter_class=Help)
    p.add_argument("dataset", type=nonempty_path, nargs="?",
                   help="shipped data, cookbook or BEIR folder (or use --run and --qrels)")
    p.add_argument("--split", default=None,
                   help="queries of this split, or all (default: test when the data set has "
                        "one, else all; the offline reranker and the fusion weights were "
                        "fitted on dev); a BEIR folder reads qrels/SPLIT.tsv (default: test; "
                        "all: every qrels/*.tsv, a query judged in two by their union)")
    p.add_argument("--index", type=nonempty_path, help="use a saved index instead of building one")
    p.add_argument("--questions", type=nonempty_path, metavar="FILE.jsonl",
                   help="score these labelled questions (golden JSONL, e.g. from `ragkit "
                        "questions accept`) instead of DATASET's golden/")
    p.add_argument("--run", type=nonempty_path, help="score this TREC run instead of a data set")
    p.add_argument("--qrels", type=nonempty_path,
                   help="judgments for --run: TREC qrels (qid iter docid rel) or BEIR TSV "
                        "(query-id, corpus-id, score); grades > 0 are relevant")
    p.add_argument("--per-query", type=nonempty_path, metavar="FILE.csv",
                   help="also write one row per query and method: query, method, kind, "
                        "first_relevant_rank, then each metric; '-' writes the CSV to "
                        "standard output (and the other lines to stderr)")
    p.add_argument("--by-kind", action="store_true", help="also break Pass@k down by query kind")
    p.add_argument("--skip-bad", action="store_true",
                   help="leave out a folder's files that cannot be read, as `ragkit index "
                        "--skip-bad` does (a warning each)")
    add_index_options(p)
    add_search_options(p, multiple=True)
    p.set_defaults(func=cmd_eval)
