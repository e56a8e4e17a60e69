"""`ragkit tune`: sweep the dense weight α and RRF's k on a data set's labelled queries."""
from __future__ import annotations

import argparse

from ragkit.cli.argtypes import nonempty_path
from ragkit.cli.golden import check_questions, warn_unsplit, with_questions
from ragkit.cli.options import (Help, add_index_options, check_index_covers,
                                check_same_options, index_config, load_index, positive_int)
from ragkit.cli.scoring import NO_QUESTIONS, all_splits, metrics_text, unscored
from ragkit.config import fetch_depth
from ragkit.errors import RagkitError
from ragkit.text_stats import counted


def cmd_tune(args: argparse.Namespace) -> None:
    """Sweep the dense weight α and RRF's k on a data set's labelled queries; print the best."""
    # deferred: numpy, pandas and scipy load only when a command builds or reads an index
    from ragkit.datasets import beir_splits, load_dataset
    from ragkit.evaluate import judge
    from ragkit.pipeline import Pipeline, SearchConfig
    from ragkit.tune import (best_alpha, best_rrf_k, candidate_lists, check_sweep_points,
                             check_metric, parse_grid, sweep_alpha, sweep_rrf_k, sweep_table)
    check_metric(args.metric, args.k)  # bad options are refused before any work
    alphas, rrf_ks = parse_grid(args.alphas), parse_grid(args.rrf_ks, integer=True)
    check_sweep_points(alphas, rrf_ks, "--rrf-ks: each k")  # before any work
    check_questions(args.questions)
    # a BEIR folder is read by split: dev, as the other layouts default, else every qrels file
    # (it tuned on qrels/test.tsv alone, whatever --split said)
    loaded = args.split or ("dev" if "dev" in beir_splits(args.dataset) else "all")
    data = load_dataset(args.dataset, loaded, skip_bad=args.skip_bad)
    if args.questions:  # e.g. from `ragkit questions accept`: they replace golden/
        data = with_questions(data, args.questions)
    # "all" as in `ragkit eval`: every question, whatever its split
    split = (None if args.split == "all" else
             args.split or ("dev" if any(q.split == "dev" for q in data.queries) else None))
    warn_unsplit(data, split)
    data = data.split(split)
    pipeline = load_index(args.index) if args.index else None
    if pipeline is not None:
        check_same_options(args, pipeline.config, args.index, "--index is searched as built")
    config = None if pipeline else index_config(args)
    if not (pipeline.has_dense if pipeline else config.embedder):  # refuse before building
        raise RagkitError("tune weighs BM25 against dense retrieval: build the index with an "
                          "embedder (not --embedder none)")
    if pipeline is not None:
        check_index_covers(pipeline, data, args)
    else:
        pipeline = Pipeline.build(data.documents, config, chunks=data.chunks)
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    judged = [q for q in data.queries if q.id in judgments]
    if not judged:
        raise RagkitError(f"{args.dataset}: no query with golden items to tune on{NO_QUESTIONS}")
    lists = candidate_lists(pipeline, judged, fetch_depth(args.k, SearchConfig().candidates))
    scored = f"split {split}" if split else all_splits(data)
    print(f"{data.name}: {counted(len(judged), 'judged query', 'judged queries')} of {scored}, "
          f"{counted(len(pipeline.chunks), 'chunk')}{unscored(data.queries, judged)}")
    for name, tables, best in (("dense weight α", sweep_alpha(lists, judgments, alphas, args.k),
                                best_alpha),
                               ("RRF k", sweep_rrf_k(lists, judgments, rrf_ks, args.k),
                                best_rrf_k)):
        choice = best(tables, args.metric)
        print(f"\n{name}")
        print(metrics_text(sweep_table(tables, choice)))
        advice = (choice.advice(SearchConfig().weights["dense"], "--dense-weight")
                  if name.startswith("dense") else
                  choice.advice(SearchConfig().rrf_k, "--rrf-k", "--fusion rrf"))
        print(f"{name}: {choice}\n  {advice} "
              f"(swept without reranking: add --rerank none to reproduce this table)")


def add_parsers(sub) -> None:
    """Add this module's subcommand to the `ragkit` parser."""
    p = sub.add_parser("tune", help="sweep fusion weights and RRF k on labelled queries",
                       formatter_class=Help)
    p.add_argument("dataset", type=nonempty_path, help="shipped-layout, cookbook or BEIR folder")
    p.add_argument("--split", default=None,
                   help="queries of this split, or all (default: dev when there is one, else "
                        "all); a BEIR folder reads qrels/SPLIT.tsv, or every qrels/*.tsv for all")
    p.add_argument("--metric", default="Pass@5", help="pick the best point by this mean")
    p.add_argument("--alphas", default="0:1:0.1",
                   help="dense weights α (BM25 gets 1 − α): START:STOP:STEP or V1,V2,...")
    p.add_argument("--rrf-ks", default="1,5,10,20,40,60,100,200", help="RRF k values")
    p.add_argument("--k", type=positive_int, default=20, help="results per query")
    p.add_argument("--index", type=nonempty_path, help="use a saved index instead of building one")
    p.add_argument("--questions", type=nonempty_path, metavar="FILE.jsonl",
                   help="tune on these labelled questions (golden JSONL, e.g. from `ragkit "
                        "questions accept`) instead of DATASET's golden/")
    p.add_argument("--skip-bad", action="store_true",
                   help="leave out a folder's files that cannot be read, as `ragkit index "
                        "--skip-bad` does (a warning each)")
    add_index_options(p)
    p.set_defaults(func=cmd_tune)
