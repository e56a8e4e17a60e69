"""Progress bars in a notebook leave nothing behind; in a terminal they are tqdm's own.

JupyterLab draws a kernel's stderr in a pink strip and keeps every character written to it:
a bar that cleared itself at the end (`leave=False`: the `windows`, `contextualize`,
`answer offline` and `loading` bars) left a pink strip of spaces, an empty error box, under
notebook 01's index cell, 04's offline answers and 08's folder load.
"""
from __future__ import annotations

import io
import os
import re
import sys
import textwrap

import nbformat
import tqdm as tqdm_module
from nbclient import NotebookClient
from tqdm import _monitor

from ragkit.progress import CellLine, progress_bar

# A notebook's index cell on an embedder whose measuring takes a while, as a large corpus's
# does: the `windows` bar shows (it waits `ragkit.dense.BAR_DELAY`, 1 s), then clears itself.
INDEX_CELL = textwrap.dedent("""\
    import time

    import numpy as np
    import ragkit


    class SlowWords:
        name, max_tokens, dim, fingerprint = "slow-words", 512, 2, "slow-words-1"

        def token_lengths(self, texts):
            time.sleep(0.5)
            return [len(t.split()) for t in texts]

        def embed(self, texts, *, input_type="document", progress=False):
            return np.full((len(texts), 2), 0.5 ** 0.5, dtype=np.float32)


    documents = [ragkit.Document(f"d{i}.md", f"Note {i} about the gateway.") for i in range(3)]
    pipeline = ragkit.Pipeline.build(documents, ragkit.IndexConfig(contextualizer="none"),
                                     embedder=SlowWords(), progress=True)
    print(len(pipeline.chunks), "chunks")
""")


class Recording(NotebookClient):
    """nbclient, keeping each line a display output was drawn and redrawn with (JupyterLab
    shows them one after the other; the saved notebook keeps only the last)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.redrawn: list[str] = []

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "display_data":
            self.redrawn.append(msg["content"]["data"].get("text/plain", ""))
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg) -> None:
        self.redrawn.append(msg["content"]["data"].get("text/plain", ""))
        super()._update_display_id(display_id, msg)


def run_cell(tmp_path, source: str, timeout: int = 180, drop: tuple[str, ...] = (),
             **env: str) -> tuple[list, Recording]:
    """`source` run as one cell in a real kernel in `tmp_path` (no TQDM_ settings, a fresh
    RAGKIT_HOME, the variables in `drop` unset, `env` added): its outputs and the client."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    base = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_") and k not in drop}
    client = Recording(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env={**base, "RAGKIT_HOME": str(tmp_path / "home"), **env})
    return nb.cells[0].outputs, client


def write_point(tmp_path, *sources: str) -> None:
    """A tiny notebook to sweep, 01_tiny.ipynb: `sources` as cells, the first the parameters."""
    point = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in sources])
    point.cells[0].metadata["tags"] = ["parameters"]
    point.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}
    nbformat.write(point, tmp_path / "01_tiny.ipynb")


def test_a_bar_in_a_notebook_leaves_no_stderr_strip(tmp_path):
    """The index cell as JupyterLab runs it: the `windows` bar is drawn in the cell's own
    output, redrawn in place, and ends empty — no stderr at all, so no pink strip."""
    outputs, client = run_cell(tmp_path, INDEX_CELL)
    assert [o.get("name") for o in outputs if o.output_type == "stream"] == ["stdout"]
    assert [(o.output_type, o.get("data", {}).get("text/plain"), o.get("text")) for o in outputs] \
        == [("display_data", "", None), ("stream", None, "3 chunks\n")]
    assert client.redrawn[-1] == ""  # cleared, as tqdm clears it in a terminal
    assert re.fullmatch(r"windows: +\d+%\|.{10}\| [0-3]/3 \[.*\]", client.redrawn[0])


class Handle:
    """IPython's display handle, recording the output's texts."""

    def __init__(self, shown: list[str]) -> None:
        self.shown = shown

    def update(self, data: dict, raw: bool) -> None:
        self.shown.append(data["text/plain"])


def test_a_kept_bar_ends_on_its_last_line_in_plain_text():
    """A kept bar (`leave=True`, the `embed` bars) stays as one line saying what ran."""
    shown: list[str] = []

    def display(data: dict, raw: bool, display_id: bool) -> Handle:
        shown.append(data["text/plain"])
        return Handle(shown)

    line = CellLine(display)
    with progress_bar(total=4, desc="embed e5", unit="text", file=line, mininterval=0,
                      disable=False) as bar:  # the suite sets TQDM_DISABLE
        bar.update(4)
    assert shown[0] == "embed e5:   0%|          | 0/4 [00:00<?, ?text/s]"
    assert line.shown == shown[-1]
    assert shown[-1].startswith("embed e5: 100%|██████████| 4/4 [00:00<00:00, ")
    never = CellLine(display)
    with progress_bar(total=4, desc="windows", file=never, delay=60, leave=False,
                      disable=False) as bar:
        bar.update(4)  # done before its delay: never drawn, so no output at all
    assert never.shown == "" and len([s for s in shown if s.startswith("windows")]) == 0


def test_outside_a_kernel_the_bar_is_tqdms_own_on_stderr(monkeypatch):
    """A terminal (or any stderr not a kernel's) keeps tqdm's bar, cleared line and all."""
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress_bar(range(3), desc="windows", leave=False, mininterval=0,
                      disable=False) as bar:  # the suite sets TQDM_DISABLE
        for _ in bar:
            pass
    assert err.getvalue().startswith("\rwindows:   0%|          | 0/3 [00:00<?, ?it/s]")
    assert err.getvalue().endswith("\r")


# A bar updated by worker threads (the `contextualize` bar's Claude calls, `questions`' calls)
# while another request reaches the kernel: a widget's comm message, a cell of a subshell.
# The kernel makes that request the parent of output from any thread that has none of its own.
THREADS_CELL = textwrap.dedent("""\
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ragkit.progress import progress_bar

    bar = progress_bar(total=3, desc="calls", mininterval=0, disable=False)
    other = {"header": {"msg_id": "another-request", "msg_type": "comm_msg", "session": "s",
                        "username": "u", "date": "", "version": "5.3"}}
    arrived = threading.Thread(target=get_ipython().set_parent, args=(other,))
    arrived.start()
    arrived.join()
    with ThreadPoolExecutor(1) as pool:
        for _ in range(3):
            pool.submit(bar.update, 1).result()
    bar.close()
""")


def test_a_bar_updated_by_worker_threads_is_drawn_in_its_own_cell(tmp_path):
    """Each update from a worker thread went out as the other request's output: JupyterLab
    (and nbclient) drew none of them in the cell, whose bar jumped from 0/3 to its end."""
    outputs, client = run_cell(tmp_path, THREADS_CELL, timeout=120)
    counts = [re.search(r"\| (\d)/3 \[", line).group(1) for line in client.redrawn]
    assert list(dict.fromkeys(counts)) == ["0", "1", "2", "3"], client.redrawn
    (output,) = outputs
    assert output.data["text/plain"].startswith("calls: 100%|██████████| 3/3 [")


SWEEP_CELL = textwrap.dedent("""\
    from ragkit.cookbook import sweep

    sweep("01_tiny.ipynb", "sweep", {"x": ["1", "2"]})
""")


def test_a_sweep_run_in_a_notebook_draws_its_bar_in_the_cell(tmp_path):
    """`sweep`'s bar over points was tqdm.auto's on stderr: in a notebook a pink strip (and,
    without ipywidgets, a warning about them), where every other ragkit bar is in the cell."""
    write_point(tmp_path, "x = 1")
    outputs, client = run_cell(tmp_path, SWEEP_CELL)
    drawn = [o.data["text/plain"] for o in outputs if o.output_type == "display_data"]
    assert len(drawn) == 1 and drawn[0].startswith("sweep 01_tiny: 100%|██████████| 2/2 ["), \
        outputs
    assert not [o.text for o in outputs if o.get("name") == "stderr" and "sweep" in o.text]
    assert client.redrawn[0] == "sweep 01_tiny:   0%|          | 0/2 [00:00<?, ?point/s]"


def test_a_bar_that_cannot_start_its_monitor_thread_warns_nothing(monkeypatch, recwarn):
    """Under an address-space limit tqdm's monitor thread fails to start and tqdm printed a
    three-line TqdmMonitorWarning above ragkit's one out-of-memory line."""
    def no_thread(*args, **kwargs):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(_monitor.TMonitor, "__init__", no_thread)
    monkeypatch.setattr(tqdm_module.tqdm, "monitor", None)
    monkeypatch.setattr(tqdm_module.tqdm, "monitor_interval", 10)
    bar = progress_bar(range(3), disable=False, file=io.StringIO())
    assert list(bar) == [0, 1, 2]
    assert [w.category.__name__ for w in recwarn] == []


NOTE_CELL = textwrap.dedent("""\
    from ragkit.contextualize.claude import ClaudeContextualizer
    from ragkit.documents import Chunk, Document

    text = "# Widget manual\\n\\nPlug it in."
    chunks = [Chunk("widget#0", "widget", text, start=0, end=len(text))]
    contexts = ClaudeContextualizer()(Document("widget", text), chunks)
    print(contexts[0].context)
""")


def test_a_contextualizer_note_in_a_notebook_is_plain_cell_output(tmp_path):
    """The `claude` contextualizer's notes (here: a document too short for the prompt cache)
    went to stderr with `tqdm.write`: a pink strip under the cell, the colour of an error."""
    outputs, _ = run_cell(tmp_path, NOTE_CELL, drop=("ANTHROPIC_API_KEY",))  # the stand-in
    assert [(o.output_type, o.get("data", {}).get("text/plain"), o.get("text")) for o in outputs] \
        == [("display_data", "1 document(s) below claude-haiku-4-5's minimum cacheable length "
                             "(4096 tokens) ran uncached: widget (14 tokens)", None),
            ("stream", None, "Document: Widget manual.\n")]


POINT_SLEEP_CELL = "import time\n\ntime.sleep(3)"


def test_a_sweep_in_a_notebook_shows_its_cells_done_as_plain_cell_output(tmp_path):
    """While a point runs, `sweep` says every `RAGKIT_PROGRESS_SECONDS` how many of its cells
    are done: on stderr, so a sweep called from a cell stacked pink strips under it."""
    write_point(tmp_path, "x = 1", POINT_SLEEP_CELL)
    outputs, _ = run_cell(tmp_path, SWEEP_CELL.replace('["1", "2"]', '["2"]'),
                          RAGKIT_PROGRESS_SECONDS="0.5")
    assert [o.text for o in outputs if o.get("name") == "stderr"] == []
    notes = [o.data["text/plain"] for o in outputs if o.output_type == "display_data"
             and "cells done" in o.data["text/plain"]]
    # papermill's injected parameters cell makes 3 cells; the point sleeps 3 s in its last,
    # its 2 others done: lines every 0.5 s, however long the point's kernel took to start
    assert [n for n in notes if n.startswith("01_tiny x=2: 2/3 cells done (")], notes
    assert all(re.fullmatch(r"01_tiny x=2: [0-3]/3 cells done \(\d+ s\)", n) for n in notes)


CLEAR_CELL = textwrap.dedent("""\
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    from ragkit.embed.cache import remove_cache

    path = Path.cwd() / "embeddings.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
    db.close()
    holder = subprocess.Popen(  # another ragkit process embedding a batch: it holds the lock
        [sys.executable, "-c", "import sys, time; from filelock import FileLock; "
         "lock = FileLock(sys.argv[1]); lock.acquire(); print('held', flush=True); "
         "time.sleep(3)", f"{path}.lock"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\\n"
    freed = remove_cache(path)
    print(holder.wait(), freed > 0, path.exists())
""")


def test_clearing_the_embedding_cache_in_a_notebook_says_it_waits_as_plain_cell_output(
        tmp_path):
    """`remove_cache` says it waits for another process's embedding batch: that line went to
    stderr, a pink strip under the cell, the colour of an error, over a wait that is none."""
    outputs, _ = run_cell(tmp_path, CLEAR_CELL, timeout=120)
    path = tmp_path.resolve() / "embeddings.sqlite"
    assert [(o.output_type, o.get("data", {}).get("text/plain"), o.get("text"))
            for o in outputs] \
        == [("display_data", f"waiting for another ragkit process embedding into {path} ...",
             None),
            ("stream", None, "0 True False\n")]
