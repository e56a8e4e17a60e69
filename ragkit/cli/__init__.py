"""The `ragkit` command line: a thin layer over the public API.

    ragkit index DOCS --out DIR [--chunk-size N --overlap N --contextualizer NAME
                                 --context-model M --context-prompt FILE
                                 --tokenizer NAME --embedder NAME|none
                                 --store memory|milvus|milvus:URI --update --skip-bad]
    ragkit search DIR --queries Q.jsonl [--k 20 --mode hybrid --fusion rrf --level doc
                                         --rerank offline|none|NAME --rerank-candidates 150]
                                        --out RUN
    ragkit eval DATASET [--mode bm25|dense|hybrid ...] [--rerank NAME] [--split test] [--k 20]
                        [--per-query F]
    ragkit eval --run RUN --qrels QRELS [--k 20] [--per-query F]
    ragkit ask --index DIR "question" [--k 5 --stream --budget 8000]
    ragkit tool NAME --root DIR --args JSON [--index DIR --notes DIR --approve]
    ragkit ask --agent --root DIR [--index DIR --trace FILE --max-turns N] "question"
    ragkit tune DATASET [--split dev] [--metric Pass@5] [--alphas 0:1:0.1] [--rrf-ks 1,5,...]
    ragkit models install
    ragkit cache stats | clear [--model M]
    ragkit cookbook run|sweep|refresh ...
    ragkit questions generate DOCS --out golden.jsonl [--n 100 --kinds K --model M --seed 0]
    ragkit questions review golden.jsonl --out review.csv
    ragkit questions accept review.csv --golden golden.jsonl --out accepted.jsonl

Every user error is one line on stderr naming the file, line and field, and exit status 2.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import warnings
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool

from ragkit.cli import answers, manage, questions, retrieval, scoring, tuning
from ragkit.cli.api_options import COMMANDS as API_COMMANDS
from ragkit.cli.api_options import add_api_options, apply_api_options
from ragkit.cli.argtypes import CLOSED
from ragkit.cli.options import Help, said
from ragkit.documents import RagkitError, RagkitWarning
from ragkit.jobs import interrupted, interrupts_in_main_only, terminated, usable_cores
from ragkit.memory import blas_threads, describe, out_of_memory
from ragkit.online import scrub


# For the resource tracker multiprocessing starts beside a spawned pool (a folder's files read
# by worker processes, `cookbook run --jobs`): it takes the -W options in `sys.warnoptions`
# when it starts (`subprocess._args_from_interpreter_flags`), and this one only.
QUIET_TRACKER = "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker"
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")  # OpenBLAS reads
STEPS = {"index": "building the index", "search": "searching", "eval": "evaluating",
         "tune": "tuning", "ask": "answering", "tool": "running the tool",
         "questions": "making questions", "cookbook": "running the notebooks"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragkit", description=__doc__.split("\n\n")[0],
                                     formatter_class=Help)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (retrieval, scoring, tuning, answers, manage, questions):
        module.add_parsers(sub)
    for name in API_COMMANDS:
        add_api_options(sub.choices[name])
    return parser


def _warnings_to_stderr(default):
    """A `warnings.showwarning` printing each `RagkitWarning` as one `ragkit: warning:` line."""
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, RagkitWarning):
            print(f"ragkit: warning: {said(scrub(str(message)))}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)
    return show


@contextlib.contextmanager
def quiet_tracker() -> Iterator[None]:
    """While a command runs, keep a killed command's resource tracker from warning of "leaked
    semaphore objects".

    A pool of spawned workers names its queues' semaphores, and multiprocessing starts a
    tracker process that unlinks any left when the command ends. After `kill -9` the workers
    end with the command (`ragkit.jobs.die_with_parent`) and the tracker, still writing to
    the same terminal, unlinks the pool's five semaphores with a UserWarning that appeared
    under the next command's output as if that one had leaked them. The unlinking is the
    cleanup itself and still happens; only the warning is left out, and only in the tracker
    (its message and module named), not in this process or in any warning ragkit prints.
    The option is taken out of `sys.warnoptions` when the command ends (unless the caller
    had put it there): a program calling `main` in-process keeps its own -W options for the
    interpreters and workers it starts afterwards, and each call scopes its own."""
    added = QUIET_TRACKER not in sys.warnoptions
    if added:
        sys.warnoptions.append(QUIET_TRACKER)
    try:
        yield
    finally:
        if added and QUIET_TRACKER in sys.warnoptions:
            sys.warnoptions.remove(QUIET_TRACKER)


@contextlib.contextmanager
def fitting_blas() -> Iterator[None]:
    """While a command runs under an address-space limit (`ulimit -v`), start OpenBLAS with
    one thread per GiB of it (`ragkit.memory.blas_threads`) unless a thread count is set.

    Why: when numpy loads, OpenBLAS starts a thread per core, each reserving about 40 MB of
    address space; one that cannot start makes OpenBLAS send its own process SIGINT, which
    read as "ragkit: interrupted" (Ctrl-C) under `prlimit --as=150M`. Fewer threads fit, and
    a shortage later is a MemoryError, said as one. Without a limit nothing changes; the
    variable is taken back when the command ends (its workers have inherited it)."""
    threads = blas_threads(usable_cores())
    added = threads is not None and not any(os.environ.get(name) for name in BLAS_ENV)
    if added:
        os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    try:
        yield
    finally:
        if added:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


def main(argv: list[str] | None = None) -> int:
    with quiet_tracker(), fitting_blas():  # before any pool starts, before numpy loads
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    """`main` within `quiet_tracker`: one command, its errors as one line each."""
    usage = sys.modules.get("ragkit.usage_log")
    if usage is not None:  # one command, one run: what an earlier `main` call spent is not this
        usage.RUN.reset()
    if sys.stdout is None:  # started with stdout closed (`>&-`): its output goes nowhere
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the run)
        setattr(sys.stdout, CLOSED, True)  # an output asked for as '-' is refused (argtypes)
    args = build_parser().parse_args(argv)
    apply_api_options(args)
    with warnings.catch_warnings(), interrupts_in_main_only():
        warnings.simplefilter("always", RagkitWarning)
        warnings.showwarning = _warnings_to_stderr(warnings.showwarning)
        try:
            status = args.func(args)
            sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        except RagkitError as exc:
            # never a key; an id or title from a file may hold a terminal's escape sequence
            print(f"ragkit: error: {said(scrub(str(exc)))}", file=sys.stderr)
            _spent_before_the_error()
            return 2
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM: one line, not a traceback; outputs atomic
            return _interrupted()
        except BrokenProcessPool:  # workers ended by the same Ctrl-C a moment earlier
            if not interrupted():
                raise
            return _interrupted()
        except BrokenPipeError:  # `ragkit eval … | head -1`: the reader has what it wanted
            return _pipe_closed()
        except OSError as exc:  # a file no step said in its own words: an input it cannot read
            line = _file_error(exc)
            if line is None:
                raise
            print(f"ragkit: error: {said(scrub(line))}", file=sys.stderr)
            _spent_before_the_error()
            try:  # what stdout still buffers: the exit's flush must not fail again
                sys.stdout.flush()
            except OSError:
                _stdout_to_devnull()
            return 2
        except Exception as exc:  # MemoryError, or an import or thread it made fail
            if not out_of_memory(exc):
                raise
            step = STEPS.get(args.command, f"running ragkit {args.command}")
            print(f"ragkit: error: {describe(exc, step)}", file=sys.stderr)
            return 2
    return status or 0


def _file_error(exc: OSError) -> str | None:
    """One line for an OSError no step worded: the file it names (an input without read
    permission was a traceback in `eval --run`, `search --queries`, a golden file), or the
    output a write to failed for want of room (`> /dev/full`); None for another (a
    traceback)."""
    why = exc.strerror or str(exc)
    if isinstance(exc.filename, (str, bytes, os.PathLike)):  # not a descriptor's number
        return f"{os.fsdecode(exc.filename)}: {why}"
    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):  # a write's, never a read's
        return f"cannot write the output ({why})"  # (an EIO may be a read's: a traceback)
    return None


def _spent_before_the_error() -> None:
    """The Claude usage a command paid for before it failed (5 contexts before a 529 were
    paid and never shown): the run's summary lines on stderr, when a paid call was made."""
    usage = sys.modules.get("ragkit.usage_log")  # loaded only by a command that calls Claude
    rows = usage.RUN.models.values() if usage is not None else ()
    if any(row.requests > row.standin for row in rows):
        print("ragkit: paid before the error (replies kept in the call cache are not paid for "
              "again):\n" + usage.RUN.summary(), file=sys.stderr)


def _pipe_closed() -> int:
    """The reader of stdout went away: end quietly as `head`'s other writers do (status 141,
    128 + SIGPIPE), with stdout pointed at /dev/null so the exit's flush cannot fail too."""
    _stdout_to_devnull()
    return 141


def _stdout_to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _interrupted() -> int:
    """Ctrl-C's line and status 130 (after a new line: the terminal has echoed ^C), or
    SIGTERM's (`timeout`, `docker stop`), `terminated`, and 143: 128 + the signal, as a shell
    reports a process that signal ended."""
    stop = terminated()
    print(f"{'' if stop else chr(10)}ragkit: {'terminated' if stop else 'interrupted'}; "
          f"nothing half-written was kept (paid calls and embeddings made so far are cached, "
          f"so re-running resumes)", file=sys.stderr)
    return 143 if stop else 130
