"""How hybrid search fuses its two lists, as options: --fusion, --dense-weight, --rrf-k.

What it is: `add_fusion_options(parser)` for `ragkit search`, `eval` and `ask`, and
`fusion_settings(args, modes)`, the `SearchConfig` fields they set — so the α or k that
`ragkit tune` picks on a user's questions can be used where they search. What it is not: the
fusion itself (`ragkit.fusion`) nor its defaults (`ragkit.config.SearchConfig`).
"""
from __future__ import annotations

import argparse

from ragkit import config
from ragkit.cli.argtypes import positive_int, share
from ragkit.documents import RagkitError


def add_fusion_options(parser: argparse.ArgumentParser) -> None:
    """--fusion, --dense-weight and --rrf-k: how hybrid search fuses its two lists."""
    parser.add_argument("--fusion", default="weighted", choices=config.FUSIONS,
                        help="weighted: min-max scores, dense 0.6 / BM25 0.4; "
                             "rrf: reciprocal rank fusion, k = 60; weighted_rank: the "
                             "cookbook's sum of weight / rank, with the same 0.6 / 0.4 "
                             "(notebook 03 compares the cookbook's 0.8 / 0.2)")
    parser.add_argument("--dense-weight", type=share, default=None, metavar="ALPHA",
                        help="the dense list's weight in the weighted fusions, BM25's 1 - ALPHA "
                             "(default 0.6; `ragkit tune` picks one on your questions)")
    parser.add_argument("--rrf-k", type=rrf_k, default=None, metavar="K",
                        help="RRF's k, with --fusion rrf, 1 to 1,000 (default 60; `ragkit tune` "
                             "picks one)")


def rrf_k(text: str) -> int:
    """argparse type of --rrf-k: a whole number from 1 to `config.MAX_RRF_K` (why a ceiling:
    `ragkit.config.check_rrf_k`)."""
    value = positive_int(text)
    try:
        config.check_rrf_k(value, "K")
    except RagkitError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("K ")) from None
    return value


def fusion_given(args: argparse.Namespace) -> list[str]:
    """The fusion options written on the command line (each differing from its default): a
    command that would ignore them refuses them."""
    return [option for option, given in (("--fusion", args.fusion != "weighted"),
                                         ("--dense-weight", args.dense_weight is not None),
                                         ("--rrf-k", args.rrf_k is not None)) if given]


def fusion_settings(args: argparse.Namespace, modes: list[str]) -> dict:
    """The `SearchConfig` fields --fusion, --dense-weight and --rrf-k set. One the search would
    ignore is refused (a weight for RRF, a k for a weighted fusion, either without a hybrid
    mode among `modes`): the tuned value would silently not be used."""
    settings: dict = {"fusion": args.fusion}
    for option, value, applies in (("--dense-weight", args.dense_weight, args.fusion != "rrf"),
                                   ("--rrf-k", args.rrf_k, args.fusion == "rrf")):
        if value is None:
            continue
        if "hybrid" not in modes:
            raise RagkitError(f"{option} sets how hybrid search fuses; this search is "
                              f"{' / '.join(modes)}")
        if not applies:
            raise RagkitError(f"{option} does not apply to --fusion {args.fusion}"
                              + (" (add --fusion rrf)" if option == "--rrf-k" else
                                 " (RRF has no weights: --rrf-k sets its k)"))
    if args.dense_weight is not None:
        settings["weights"] = {"dense": args.dense_weight, "bm25": 1 - args.dense_weight}
    if args.rrf_k is not None:
        settings["rrf_k"] = args.rrf_k
    return settings
