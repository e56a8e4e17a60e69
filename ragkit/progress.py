"""Progress bars that leave a notebook clean: the bar a long ragkit step shows.

What it is: `progress_bar(iterable, **options)`, a tqdm bar (tqdm's options, iteration and
`update`). In a terminal it is tqdm's own bar on stderr. In a Jupyter kernel (stderr is the
kernel's stream) it is drawn in one output of the running cell instead, redrawn in place
(`CellLine`). Why: JupyterLab draws stderr in a pink strip, the colour of an error, and keeps
every character written to it, so a bar that cleared itself at the end (`leave=False`) left a
pink strip of spaces, an empty error box, under the cell (notebook 01's index build, 04's
offline answers, 08's folder load), and a kept bar stayed pink. In the cell's own output a
cleared bar ends as an empty output (nothing shows) and a kept one (`leave=True`) as its last
line in plain text: what ran, how many, how long. A bar may be updated from worker threads
(the `contextualize` and `questions` bars count calls made by a thread pool): the output is
drawn as the cell the bar was made in, whichever thread updates it. Why: a Jupyter kernel
sends output from a thread that has no request of its own as output of the last request
that reached it, which may be another cell's (a subshell's) or a widget's message, not this
cell, so JupyterLab drew those updates elsewhere or nowhere.

A note (`note(line)`, `note_writer()`): one line a long step says on the way (the
`claude` contextualizer's documents run uncached, a running notebook's cells done). In a
terminal it is a line on stderr, written above any bar there (`tqdm.write`); stdout stays
the command's data. In a Jupyter kernel it is a plain-text output of the running cell, for
the same pink-strip reason, sent in that cell's context so a line a heartbeat thread writes
reaches the cell (`CellNotes`).

What it is not: ipywidgets' bar (`tqdm.notebook`), which needs one more package and its
JupyterLab extension; nor a bar in notebooks that papermill or nbval run: their steps are
called with `progress` off (`ragkit.notebook_params.live`), so committed outputs hold none;
nor a log: notes are not kept anywhere (a caller keeps its own, e.g. the contextualizer's
`notes`).
"""
from __future__ import annotations

import contextvars
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm

KERNEL_STREAM = "ipykernel.iostream"  # the module of a Jupyter kernel's sys.stderr
SESSION_ENV = "JPY_SESSION_NAME"  # the notebook a Jupyter server started this kernel for


class CellLine:
    """A file tqdm draws into, shown as one output of the running cell.

    tqdm redraws its line as "\\r" + the bar, and ends with "\\n" (a kept bar) or "\\r", spaces
    and "\\r" (a cleared one). Only the text after the last "\\r" is the bar as it stands, so
    that is what the output shows: the bar, its last line, or nothing (no output is made for a
    bar that never drew, e.g. one under its `delay`). Each output is sent in the context
    variables of the thread that made the line (the kernel's parent request is one), so
    updates from worker threads reach the same cell (module docstring)."""

    encoding = "utf-8"  # tqdm draws Unicode blocks, not '#', on a file that says so

    def __init__(self, display: Callable[..., Any]) -> None:
        self._display = display  # IPython's `display`
        self._context = contextvars.copy_context()  # the running cell's request, among others
        self._handle: Any = None
        self._text = ""
        self.shown = ""  # the line the output shows now

    def write(self, text: str) -> int:
        self._text = (self._text + text).rsplit("\r", 1)[-1]
        line = self._text.strip()
        if line != self.shown:
            # a copy each time: one context cannot be entered by two threads at once
            self._context.copy().run(self._show, {"text/plain": line})
            self.shown = line
        return len(text)

    def _show(self, data: dict[str, str]) -> None:
        """Make the output, or redraw it, with `data`."""
        if self._handle is None:
            self._handle = self._display(data, raw=True, display_id=True)
        else:
            self._handle.update(data, raw=True)

    def flush(self) -> None:
        """Nothing waits: each write is shown at once."""


def cell_display() -> Callable[..., Any] | None:
    """IPython's `display` when stderr is a Jupyter kernel's stream, else None. A kernel has
    imported IPython.display already; a terminal never pays for importing it."""
    if type(sys.stderr).__module__ != KERNEL_STREAM:
        return None
    return getattr(sys.modules.get("IPython.display"), "display", None)


def unwatched_kernel() -> bool:
    """True in a Jupyter kernel without a session (`SESSION_ENV`): papermill's or nbval's,
    whose outputs are kept and compared, so a bar or a note a step shows on its own (not asked
    for by a `progress` argument) stays out. False in a terminal, in a kernel JupyterLab
    started, and for a command whose stderr is a file or a pipe (a first reranked search of
    100 queries embedded for 4.5 minutes with nothing on a redirected stderr)."""
    return cell_display() is not None and not os.environ.get(SESSION_ENV)


def progress_bar(iterable: Iterable[Any] | None = None, **options: Any) -> "tqdm":
    """A tqdm bar over `iterable` with tqdm's `options`, drawn in the running cell's output in
    a Jupyter kernel and on stderr elsewhere (module docstring). An explicit `file` is kept."""
    from tqdm import TqdmMonitorWarning, tqdm  # deferred: commands that show no bar start
    display = None if options.get("disable") or "file" in options else cell_display()
    if display is not None:
        options["file"] = CellLine(display)
    with warnings.catch_warnings():  # no thread left to start (out of memory): the bar works,
        warnings.simplefilter("ignore", TqdmMonitorWarning)  # and the error is one line
        return tqdm(iterable, **options)


class CellNotes:
    """Note lines, each shown as one plain-text output of the cell running when this was made.

    Each output is sent in the context variables of the thread that made it, as `CellLine`
    sends a bar's, so a line written from another thread (a heartbeat) reaches that cell. Not
    redrawn: every line stays, as it does on a terminal."""

    def __init__(self, display: Callable[..., Any]) -> None:
        self._display = display  # IPython's `display`
        self._context = contextvars.copy_context()

    def __call__(self, line: str) -> None:
        # a copy each time: one context cannot be entered by two threads at once
        self._context.copy().run(self._display, {"text/plain": line}, raw=True)


def stderr_note(line: str) -> None:
    """`line` on stderr, above a tqdm bar drawn there (cleared, the line, redrawn)."""
    from tqdm import tqdm  # deferred: commands that show no bar start without tqdm
    # the line and its newline in one write: tqdm writes its `end` apart, and two notebooks'
    # worker processes wrote "… (1 s)[1/2] 01_a.ipynb: … (1 s)" and two newlines
    tqdm.write(line + "\n", file=sys.stderr, end="")
    sys.stderr.flush()  # a whole line at once, also when stderr is a pipe (`| tee`)


def note_writer() -> Callable[[str], None]:
    """Where note lines go, decided now, in the thread of the running cell: its output in a
    Jupyter kernel (`CellNotes`), else stderr (`stderr_note`). Make it before handing it to
    another thread; a thread of the kernel's own has no cell to find."""
    display = cell_display()
    return stderr_note if display is None else CellNotes(display)


def note(line: str) -> None:
    """One note line, now, from the running cell's thread (module docstring)."""
    note_writer()(line)
