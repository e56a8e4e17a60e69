"""Progress of a notebook while `ragkit cookbook run` executes it: cells done out of the total.

What it is: a papermill engine (`ENGINE`, nbclient's engine plus a hook on papermill's
`cell_complete`) and a heartbeat thread that writes one line every
`RAGKIT_PROGRESS_SECONDS` (default 30) while the notebook runs (on stderr; in a Jupyter kernel,
as the running cell's plain output: `ragkit.progress.note`), e.g.
`[2/8] 02_contextual_retrieval.ipynb: 7/26 cells done (3 min 05 s)`. Cells are all of the
notebook's cells, Markdown included, as papermill counts them (plus its injected parameters
cell when parameters are given).

Why lines and not a tqdm bar: notebooks run in two worker processes at once (`ragkit.jobs`),
and the run is often logged (`make cookbook | tee`, CI); whole lines, each flushed at once,
interleave cleanly from several processes where two bars redrawing one terminal do not.
Why a heartbeat rather than a line per cell: one cell can take minutes, and a notebook can
have a hundred quick ones; a line every half minute says both "alive" and "how far".

What it is not: an estimate of time left (cells differ too much in cost).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from ragkit.documents import RagkitError
from ragkit.progress import note_writer

ENV = "RAGKIT_PROGRESS_SECONDS"
DEFAULT_SECONDS = 30.0
ENGINE = "ragkit-progress"


def progress_seconds() -> float:
    """Seconds between progress lines: `$RAGKIT_PROGRESS_SECONDS`, else 30."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise RagkitError(f"{ENV}: expects a number of seconds > 0, got {text!r}")
    return seconds


def _elapsed(seconds: float) -> str:
    """`45 s`, `3 min 05 s`."""
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


class CellProgress:
    """Counts completed cells; a daemon thread writes `label: done/total cells done (t)`
    every `every` seconds until `stop()`, as a note (`ragkit.progress.note_writer`, chosen
    when this is made, in the caller's thread): on stderr in a terminal, above sweep's bar
    (stdout is the command's data), and in a Jupyter kernel (`sweep` called from a cell) the
    cell's plain output, where stderr would be a pink strip, the colour of an error."""

    def __init__(self, label: str, total: int, every: float) -> None:
        self.label, self.total, self.every = label, total, every
        self._write = note_writer()
        self.done = 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True,
                                        name=f"progress {label}")

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread.start()

    def cell_done(self) -> None:
        self.done += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def line(self) -> str:
        return (f"{self.label}: {self.done}/{self.total} cells done "
                f"({_elapsed(time.monotonic() - self._started)})")

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self._write(self.line())


def register() -> tuple[str, type]:
    """Register the engine with papermill (in this process); return its name and the kernel
    manager class to run with, `QuietKernel` (subclass it with a `stderr` file to use)."""
    from jupyter_client import AsyncKernelManager
    from papermill.engines import NBClientEngine, papermill_engines

    class QuietKernel(AsyncKernelManager):
        """A kernel whose own stderr goes to the class's `stderr` file, not the terminal:
        stopping a kernel after a failed cell printed "[IPKernelApp] ERROR |
        KeyboardInterrupt caught in kernel" and a zmq traceback between ragkit's lines.
        What a cell prints still reaches the notebook (over the kernel's channels)."""

        stderr: Any = None

        async def start_kernel(self, **kw: Any) -> None:
            kw.setdefault("stderr", self.stderr)
            await super().start_kernel(**kw)

    class ProgressEngine(NBClientEngine):
        """nbclient's engine, counting completed cells for `CellProgress`."""

        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str,
                                     progress_label: str | None = None, **kwargs: Any):
            if progress_label is None:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            progress = CellProgress(progress_label, len(nb_man.nb.cells), progress_seconds())
            complete = nb_man.cell_complete

            def cell_complete(cell: Any, cell_index: int | None = None, **kw: Any) -> None:
                complete(cell, cell_index=cell_index, **kw)
                progress.cell_done()

            nb_man.cell_complete = cell_complete
            progress.start()
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                progress.stop()

    papermill_engines.register(ENGINE, ProgressEngine)  # registering again replaces it
    return ENGINE, QuietKernel
