"""Mark the text cells of a notebook run whose parameters or data are not its defaults.

What it is: `mark_text_cells(output, notebook, parameters)`, called on each notebook that
`ragkit cookbook run` or `sweep` executed. When the run changed a parameter the text cells
depend on (`notebook_params.changed_parameters`) or read other data than its default
(`data_dir`, or `cookbook_dir` for Anthropic's cookbook set), every text cell after the
`parameters` cell that says more than a bare heading opens with one line: the text
describes the default run, and where they differ the outputs are this run's.

Why: the banner at the top of the run said so once, four screens above the sentences it
covered. A class reads the sentence next to the table: with `chunk_size=256` and
`tokenizer=words`, notebook 01 said dense "places them lowest (Pass@5 56.0, MRR 0.484)"
under a table where dense was 45.7 and above BM25, and notebook 03's headings still named
the splits of the default run.

What it is not: a rewrite of the text (its numbers are the default run's, checked by the
test suite), nor a mark on the committed notebooks (they are the default run), nor on a
notebook edited in JupyterLab (the banner shows there; its cells cannot be changed).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragkit.atomic import write_text
from ragkit.notebook_data import code_span, data_label
from ragkit.notebook_params import WHERE, changed_parameters, declared_parameters

ERROR_TAG = "papermill-error-cell-tag"  # papermill's cell saying where a run failed
NOTE = ("> *This text describes the notebook's run with its defaults; this run {changes}. "
        "Where the two differ, the tables, figures and **Finding** lines are this run's.*")


def mark_text_cells(output: Path, notebook: Path, parameters: Mapping[str, Any]) -> None:
    """Add `NOTE` to the text cells of the executed notebook `output` (see the module); a
    run on the defaults, or an output that was not written, is left as it is."""
    changes = _changes(notebook, parameters)
    if not changes or not output.is_file():
        return
    cells = json.loads(output.read_text("utf-8"))
    after = False
    for cell in cells["cells"]:
        if cell["cell_type"] == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            after = True
        elif after and cell["cell_type"] == "markdown" and ERROR_TAG not in \
                cell.get("metadata", {}).get("tags", []):  # not papermill's note of a failure
            cell["source"] = _marked("".join(cell["source"]), NOTE.format(changes=changes))
    write_text(output, json.dumps(cells, indent=1, ensure_ascii=False) + "\n")


def _changes(notebook: Path, parameters: Mapping[str, Any]) -> str:
    """What the run changed, in words ("" for nothing): the parameters, then the data."""
    named = [code_span(f"{name} = {value!r}")
             for name, value in changed_parameters(notebook, parameters).items()]
    said = [f"set {', '.join(named)}"] if named else []
    declared = declared_parameters(notebook)
    for name in WHERE:  # the data, and the cookbook data set of 02 and 04
        given, default = parameters.get(name), declared.get(name)
        if isinstance(given, str) and isinstance(default, str) and \
                _folder(notebook, given) != _folder(notebook, default):
            said.append(f"reads {code_span(data_label(notebook.parent / given))}")
    return " and ".join(said)


def _folder(notebook: Path, data_dir: str) -> Path:
    """`data_dir` as the notebook's kernel reads it (relative to the notebook's folder)."""
    return Path(os.path.abspath(notebook.parent / data_dir))


def _marked(text: str, note: str) -> str:
    """`text` with `note` after its heading line (or first); a bare heading as it is — one
    with a qualifier in parentheses ("(test split)") is marked too."""
    lines = text.strip("\n").split("\n")
    heading = lines[0].startswith("#")
    if heading and len(lines) == 1 and "(" not in lines[0]:
        return text
    if heading:
        return "\n".join([lines[0], "", note, *lines[1:]])
    return "\n".join([note, "", *lines])
