"""Run notebooks side by side: the worker pool behind `ragkit cookbook run --jobs N`.

What it is: `run_jobs(fn, calls, jobs)` calls `fn(*args)` for each tuple in `calls` and
returns the results in the order given: in this process when `jobs` is 1, else in `jobs`
worker processes, each call to the next free worker in order.

Why processes: a notebook's execution sets environment variables its kernel inherits (where
it writes its records), so two at once need two environments. Why two by default: a second
notebook fills the first one's one-threaded stretches (scoring, plots) beside its embedding.
The embedding cache and the run's index folder take lock files, so the two never embed one
text twice. `spawnable()`: whether spawned workers can start at all (not from `python -`).

`threads()` is the one thread pool (a worker per usable core) that in-process numpy
work shares for its parallel parts: BM25's second half of a long scan, dense search's
blocks of vectors.

`die_with_parent(pid)` is the initializer of every worker pool ragkit starts (here, the
BM25 tokenizing stage, the block-by-block index build): a worker ends as soon as the process
that started it ends, even by kill -9 or the OOM killer — through Linux's parent-death
signal, and elsewhere a watchdog thread that checks the parent pid twice a second — so an
interrupted build leaves no workers of several hundred MB each running on.
`worker_pool(n)` is every such pool: its workers finish writing a result before a Ctrl-C or
SIGTERM ends them (`_WholeResults`), so the pool is never left reading half a message.
`worker_block(default)` is the size of a worker task, which $RAGKIT_WORKER_BLOCK overrides:
a test knob (a small corpus then uses workers), not a tuning one.

What it is not: a scheduler that knows which notebook needs which index; order is the
numbered order, and a notebook that needs an index another one is building waits for it.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.queues
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from ragkit.documents import RagkitError

MAX_DEFAULT = 2  # more kernels than this on a laptop mostly wait for the embedding lock
BLOCK_ENV = "RAGKIT_WORKER_BLOCK"
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_THREADS: ThreadPoolExecutor | None = None


def usable_cores() -> int:
    """Cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def threads() -> ThreadPoolExecutor:
    """The process's shared thread pool, one worker per usable core, made on first use
    (a pool per call costs its threads' start; tasks given to it must not wait on it)."""
    global _THREADS
    if _THREADS is None:
        _THREADS = ThreadPoolExecutor(usable_cores(), thread_name_prefix="ragkit")
    return _THREADS


def default_jobs() -> int:
    """Notebooks run at once by default: two, or one on a one-core machine."""
    return max(1, min(MAX_DEFAULT, usable_cores()))


def check_jobs(jobs: int) -> int:
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise RagkitError(f"--jobs must be a whole number >= 1, got {jobs!r}")
    return jobs


def spawnable() -> bool:
    """Whether spawned workers can start: they re-import the main module by its path, which
    a script on standard input (`python - <<EOF`) has none of, so every worker died at once
    ("… died (out of memory?)"); the callers then work in this process."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return path is None or os.path.exists(path)


def run_jobs(fn: Callable[..., Any], calls: Sequence[tuple], jobs: int) -> list[Any]:
    """`[fn(*args) for args in calls]`, with up to `jobs` calls at once (module docstring);
    `fn` module-level and `args` picklable when `jobs` > 1 (workers are spawned, not forked:
    the parent may hold threads and open kernels)."""
    jobs = min(check_jobs(jobs), max(1, len(calls)))
    if jobs == 1 or not spawnable():
        return [fn(*args) for args in calls]
    with worker_pool(jobs, "spawn") as pool:
        futures = [pool.submit(fn, *args) for args in calls]
        return [f.result() for f in futures]


def worker_block(default: int) -> int:
    """Items per worker task: `default`, or a whole number > 0 in $RAGKIT_WORKER_BLOCK."""
    text = os.environ.get(BLOCK_ENV, "").strip()
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:  # "²" is a digit
        raise RagkitError(f"${BLOCK_ENV} must be a whole number >= 1, got {text!r}")
    return int(text)


_INTERRUPTED = threading.Event()  # set by `interrupts_in_main_only`'s handler in the main process
_TERMINATED = threading.Event()  # the same, when the signal was SIGTERM
STOPPING = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; `timeout`, `docker stop`, a CI cancel


def terminated() -> bool:
    """Whether the interruption `interrupts_in_main_only` raised came from SIGTERM."""
    return _TERMINATED.is_set()


def interrupted(grace: float = 0.2) -> bool:
    """Whether Ctrl-C reached this process: its handler ran, SIGINT is pending, or the handler
    runs within `grace` seconds (its KeyboardInterrupt is caught here). Why: a worker that
    Ctrl-C ended can break the pool before this process's own handler ran; the command line
    asks this before calling a broken pool a crash."""
    if _INTERRUPTED.is_set() or set(STOPPING) & signal.sigpending():
        return True
    try:
        time.sleep(grace)
    except KeyboardInterrupt:
        return True
    return _INTERRUPTED.is_set()


@contextmanager
def interrupts_in_main_only() -> Iterator[None]:
    """While open, Ctrl-C is KeyboardInterrupt in this process and a quiet exit (status 130)
    in any process forked from it; so is SIGTERM (status 143; `terminated()` then says so), so
    `timeout`, `docker stop` or a cancelled CI job leave no half-written output either (its
    default ended the process where it stood, leaving its temporary file). Forked workers
    inherit the handler at the instant of fork, so even one still starting up (before its pool
    initializer runs) prints no traceback; the process that opened it alone reports the
    interruption. A KeyboardInterrupt that lands where Python cannot raise it (an at-fork hook
    while a worker starts, a `__del__`), which would be printed as "Exception ignored …
    Traceback" and lost, is not printed but sent again, so it is raised in the command's own
    code and reported once. The command line opens this around each command; outside the main
    thread (where handlers cannot be set) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    main = os.getpid()

    def interrupt(signum: int, frame: object) -> None:
        if os.getpid() != main:
            os._exit(128 + signum)
        _INTERRUPTED.set()
        if signum == signal.SIGTERM:
            _TERMINATED.set()
        raise KeyboardInterrupt

    def again() -> None:  # once the hook has returned, so it is raised in the command's code
        time.sleep(0.01)
        if not done.is_set():
            os.kill(main, signal.SIGINT)

    def unraisable(report) -> None:
        if isinstance(report.exc_value, KeyboardInterrupt):
            threading.Thread(target=again, daemon=True).start()
        else:
            hook(report)

    done = threading.Event()
    _TERMINATED.clear()
    hook, sys.unraisablehook = sys.unraisablehook, unraisable
    previous = {number: signal.signal(number, interrupt) for number in STOPPING}
    try:
        yield
    finally:
        done.set()
        for number, handler in previous.items():
            signal.signal(number, handler)
        sys.unraisablehook = hook


def worker_pool(workers: int, method: str | None = None,
                initializer: Callable[[int], None] | None = None) -> ProcessPoolExecutor:
    """A ProcessPoolExecutor of `workers` processes started by `method` (None: the platform's
    default), each set up by `initializer(parent pid)` (default `die_with_parent`), whose
    workers finish writing a result before a signal ends them (`_WholeResults`)."""
    return _Pool(workers, mp_context=_Context(method), initializer=initializer or die_with_parent,
                 initargs=(os.getpid(),))


class _Pool(ProcessPoolExecutor):
    """A ProcessPoolExecutor whose shutdown survives a Ctrl-C that landed while its first
    `submit` started the pool's manager thread: the thread was made but never started, so
    the `with` block's shutdown raised "cannot join thread before it is started" over the
    KeyboardInterrupt — a traceback and status 1 where a one-line status 130 was due. Then
    its workers are ended instead, and the interruption goes on."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            super().shutdown(wait, cancel_futures=cancel_futures)
        except RuntimeError:
            if not _INTERRUPTED.is_set():
                raise
            for process in list((self._processes or {}).values()):
                process.terminate()


class _Context:
    """A multiprocessing context that is `method`'s but for its result queue."""

    def __init__(self, method: str | None) -> None:
        self._base = multiprocessing.get_context(method)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def SimpleQueue(self) -> _WholeResults:  # noqa: N802 (multiprocessing's name)
        return _WholeResults(ctx=self._base)


SEND_GRACE = 2.0  # seconds a signalled worker may take to finish writing a result
_SENDING = False  # in a worker: a result is being written to the parent
_STOP = 0  # in a worker: the exit status of a signal that came meanwhile


class _WholeResults(multiprocessing.queues.SimpleQueue):
    """The queue a pool's workers send their results through, never cut mid-message.

    Why: Ctrl-C or SIGTERM sent to the process group ends each worker at once (`_stop`); one
    ended while writing a result larger than the pipe holds (a block of chunk rows) left half a
    message, and the parent's pool read the rest of it forever: the command, told to stop,
    never ended (Python 3.11's ProcessPoolExecutor; about one SIGTERM'd index build in four). A
    signal that comes while a worker writes now ends it once the message is whole."""

    def put(self, obj: Any) -> None:
        global _SENDING
        _SENDING = True
        try:
            super().put(obj)
        finally:
            _SENDING = False
            if _STOP:
                os._exit(_STOP)


def _stop(signum: int, frame: object) -> None:
    """A worker's Ctrl-C and SIGTERM: exit quietly (128 + the signal), after the result it is
    writing, if any (`_WholeResults`), but within `SEND_GRACE` seconds whatever happens: a
    pool that saw another worker end stops reading and signals the rest, and a worker waiting
    for its message to be read would then be waited for forever."""
    global _STOP
    if not _SENDING:
        os._exit(128 + signum)
    _STOP = 128 + signum
    timer = threading.Timer(SEND_GRACE, os._exit, (_STOP,))
    timer.daemon = True
    timer.start()


def die_with_parent(parent: int) -> None:
    """In a new worker process: end it when process `parent` (the one that started it) ends.

    Linux: the parent-death signal (SIGKILL) through prctl; everywhere: a daemon thread that
    ends the worker within half a second of its parent pid changing (the parent died and the
    worker was handed to another). Also ends it at once if the parent is already gone.
    Ctrl-C reaches the whole terminal group: a worker then exits quietly (status 130; SIGTERM
    sent to the group, 143) and the parent alone says it was interrupted, instead of one
    traceback per worker."""
    for number in STOPPING:
        signal.signal(number, _stop)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # died before the signal was set
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="ragkit-parent-watch",
                     daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
