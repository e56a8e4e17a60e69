"""The sample folder of mixed PDF, HTML and Word files that notebook 08 reads by default.

What it is: `sample_folder(path)` returns `path` when it is a folder; when `path` is the
sample collection's place in a source checkout (`SAMPLE`, `build/sample-formats/mixed`)
and it is absent, it renders it first with the project's generator
(`data/generators/make_sample_formats.py --mixed`: twelve of the shipped corpus's English
documents, each in one format, PDF, HTML and DOCX in turn, plus a scanned PDF and a page of
navigation that a loader must refuse). The render goes to a temporary sibling folder,
`.mixed.render-PID.HOST-XXXXXXXX` (`ragkit.stale_temp.scratch`), that is renamed into
place, so a killed render leaves nothing half-written, two notebooks rendering at once keep
one copy, and the folder a render killed with -9 left (`.mixed-XXXXXXXX` stayed for good) is
removed by the next render once its process is gone, never one a live render writes.
`folder_label(path)`: how captions and titles name the folder a run reads — the sample as
what it is, "the PDF, HTML and Word sample" (its folder's name, `mixed`, told a reader of a
figure or of the report's headline nothing), any other folder by its name.

What it is not: a download (nothing leaves the machine) nor part of an installed wheel: the
generator and the corpus live in the source checkout, and rendering PDF and Word files needs
the dev extra's reportlab and python-docx (`make setup` installs it).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ragkit.documents import RagkitError
from ragkit.stale_temp import scratch

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "build" / "sample-formats" / "mixed"
GENERATOR = ROOT / "data" / "generators" / "make_sample_formats.py"
SAMPLE_LABEL = "the PDF, HTML and Word sample"  # `folder_label` of `SAMPLE`


def sample_folder(path: Path | str = SAMPLE) -> Path:
    """`path` as a folder, the sample collection rendered first when it is the one absent
    (`path` is returned as given, so messages about its files name them as the caller did)."""
    path = Path(path)
    if path.is_dir():
        return path
    if path.resolve() != SAMPLE.resolve():
        raise RagkitError(f"{path}: no such folder")
    if not GENERATOR.is_file():
        raise RagkitError(f"{path}: the sample collection is rendered by {GENERATOR}, which "
                          f"only a source checkout of ragkit has")
    path.parent.mkdir(parents=True, exist_ok=True)
    with scratch(path.parent, f".{path.name}.render-") as staging:  # deleted after, if left
        done = subprocess.run([sys.executable, str(GENERATOR), "--mixed", "--out",
                               str(staging)], capture_output=True, text=True, timeout=600)
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RagkitError(f"{path}: the sample collection could not be rendered ({last})")
        try:
            os.rename(staging, path)  # atomic: the whole folder appears at once
        except OSError:
            if not path.is_dir():  # not another render that finished first: a real failure
                raise
    return path


def folder_label(path: Path | str) -> str:
    """`SAMPLE_LABEL` for the sample collection (by its resolved path), else the folder's name
    (of its resolved path when the name is empty, as for ".")."""
    path = Path(path)
    try:
        resolved = path.resolve()
    except OSError:  # a loop of links: named as given
        return path.name
    return SAMPLE_LABEL if resolved == SAMPLE.resolve() else (path.name or resolved.name)
