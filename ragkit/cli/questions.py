"""`ragkit questions generate | review | accept`: a golden set out of a folder of documents.

    ragkit questions generate DOCS --out golden.jsonl [--n 100 --kinds K --model M --seed 0]
    ragkit questions review golden.jsonl --out review.csv
    ragkit questions accept review.csv --golden golden.jsonl --out accepted.jsonl
    ragkit eval DOCS --questions accepted.jsonl

The work is `ragkit.questions`; this module reads options, prints the projection, the
filter table and the measured cost, and maps bad input to one line and exit status 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragkit import questions as api  # a lazy face: each name loads on first use
from ragkit.atomic import check_target
from ragkit.cli.argtypes import nonempty_path, written_path
from ragkit.cli.api_options import add_api_options
from ragkit.cli.retrieval import print_skipped
from ragkit.cli.options import Help, positive_int
from ragkit.documents import RagkitError
from ragkit.index_owner import refuse_output_in_index
from ragkit.pricing import price
from ragkit.questions import defaults  # constants only: no SDK, no numpy
from ragkit.questions.sample import parse_kinds  # no SDK, no numpy
from ragkit.text_stats import counted

GENERATE_HELP = """Write test questions with exact answer spans about sampled chunks of DOCS
(chunked as `ragkit index` chunks them), check them — the span verbatim in its passage and
in no other document, the question answered back from the passage alone, not answerable
from itself, not a near-duplicate — and write the kept ones as golden JSONL that `ragkit eval --questions`
reads. Claude writes them with ANTHROPIC_API_KEY (every call through the paid-call cache,
the cost projected first and measured after); without it the offline stand-in does, by a
documented template rule (not a model)."""


def _unit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a cosine in (0, 1], got '{text}'")
    return value


def cmd_generate(args: argparse.Namespace) -> None:
    refuse_output_in_index(args.out, "--out")
    check_target(args.out, api.is_golden_file, "a golden questions file", folder=False)
    if args.out.resolve() == Path(args.docs).resolve():
        raise RagkitError(f"{args.out}: is the input DOCS; choose another --out")
    parse_kinds(args.kinds)  # a bad kind or an unknown model is refused before any work
    price(args.model)
    documents, chunks = api.documents_of(args.docs, skip_bad=args.skip_bad)
    questions, report = api.generate(
        documents, n=args.n, kinds=args.kinds, model=args.model, seed=args.seed,
        chunk_size=args.chunk_size, overlap=args.overlap, chunks=chunks,
        embedder=None if args.embedder == "none" else args.embedder,
        dup_threshold=args.dup_threshold, log=lambda line: print(line, file=sys.stderr),
        progress=True)
    print(report.table())
    print("\n".join(report.cost_lines()))
    print(report.usage)
    if not questions:  # an empty golden file to "review" helps no one
        raise RagkitError(f"no question was kept (see the table and any warning above); "
                          f"nothing was written to {args.out}")
    api.write_golden(questions, args.out)
    print(f"wrote {counted(len(questions), 'question')} to {args.out}; review them with `ragkit "
          f"questions review {args.out} --out review.csv`")
    print_skipped(documents)  # as `ragkit index` lists them


def cmd_review(args: argparse.Namespace) -> None:
    refuse_output_in_index(args.out, "--out")
    check_target(args.out, api.is_review_csv, "a review sheet", folder=False)
    questions = api.read_golden(args.golden)
    _, how = api.review_sheet(questions, args.out)
    done = (f"kept {args.out}: it already reviews these {len(questions)} questions (delete it "
            f"to start over)" if how == "kept" else
            f"wrote {counted(len(questions), 'row')} to {args.out}"
            + how.removeprefix("written"))  # "; the sheet a reviewer had edited … moved to …"
    print(f"{done}: mark keep yes or no, edit a question or span if needed, then `ragkit "
          f"questions accept {args.out} --golden {args.golden} --out accepted.jsonl`")


def cmd_accept(args: argparse.Namespace) -> None:
    refuse_output_in_index(args.out, "--out")
    check_target(args.out, api.is_golden_file, "a golden questions file", folder=False)
    if args.out.resolve() == Path(args.golden).resolve():  # the set the sheet's rows name
        raise RagkitError(f"{args.out}: is the input --golden; its questions marked no or "
                          f"without a row would be lost; choose another --out")
    kept = api.accept(args.review, args.golden)  # a missing sheet: `sheet_missing`'s line
    total = len(api.read_golden(args.golden))
    if not kept:  # an empty golden file, which `eval --questions` then refused
        raise RagkitError(f"{args.review}: no row is marked keep yes (0 of {total} questions "
                          f"kept); nothing was written to {args.out}")
    api.write_golden(kept, args.out)
    print(f"kept {len(kept)} of {total} questions into {args.out}; score them with `ragkit "
          f"eval DOCS --questions {args.out}`")


def add_parsers(sub) -> None:
    """Add `ragkit questions` and its three subcommands to the `ragkit` parser."""
    group = sub.add_parser("questions", help="generate, review and accept a golden set",
                           formatter_class=Help)
    commands = group.add_subparsers(dest="questions_command", required=True)
    p = commands.add_parser("generate", help="write and filter questions about DOCS",
                            description=GENERATE_HELP, formatter_class=Help)
    p.add_argument("docs", type=nonempty_path,
                   help="documents JSONL, a folder, or a data set folder (anything `ragkit "
                        "index` reads)")
    p.add_argument("--out", type=written_path, required=True, help="the golden JSONL to write")
    p.add_argument("--skip-bad", action="store_true",
                   help="leave out a folder's files that cannot be read, as `ragkit index "
                        "--skip-bad` does, and list them at the end")
    p.add_argument("--n", type=positive_int, default=100, help="questions to write (the "
                                                                "filters keep fewer)")
    shares = ",".join(f"{k}={v}" for k, v in defaults.DEFAULT_SHARES.items())
    p.add_argument("--kinds", default=None,
                   help=f"kinds and their shares: 'lexical,contextual' (equal) or "
                        f"'lexical=3,contextual=1' (default: {shares})")
    p.add_argument("--model", default="claude-haiku-4-5", help="Claude model")
    p.add_argument("--seed", type=int, default=0, help="seed of the chunk sample (default 0)")
    p.add_argument("--chunk-size", type=int, default=512,
                   help="tokens per chunk: the index's, so spans map onto its chunks")
    p.add_argument("--overlap", type=int, default=64, help="tokens shared by neighbours")
    p.add_argument("--embedder", default="e5-small",
                   help="local embedder of the near-duplicate filter, or none to skip it")
    p.add_argument("--dup-threshold", type=_unit, default=defaults.DUP_THRESHOLD,
                   help="drop a question whose cosine with an earlier one is at least this")
    add_api_options(p)
    p.set_defaults(func=cmd_generate)

    p = commands.add_parser("review", help="a CSV sheet for a domain expert (keep yes/no)",
                            formatter_class=Help)
    p.add_argument("golden", type=nonempty_path,
                   help="golden JSONL from `ragkit questions generate`")
    p.add_argument("--out", type=written_path, required=True, help="the review CSV to write")
    p.set_defaults(func=cmd_review)

    p = commands.add_parser("accept", help="fold a reviewed sheet back into golden JSONL",
                            formatter_class=Help)
    p.add_argument("review", type=nonempty_path, help="the review CSV, keep column filled in")
    p.add_argument("--golden", type=nonempty_path, required=True,
                   help="the golden JSONL the sheet was made from")
    p.add_argument("--out", type=written_path, required=True, help="the accepted golden JSONL")
    p.set_defaults(func=cmd_accept)
