"""A tiny notebook for tests of the notebook runner, sweeps and the shared index cache."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook


def tiny_notebook(path: Path, *cells: str, params: str = "x = 1") -> Path:
    """A notebook at `path` (its folder made): a `parameters` cell, then `cells` (In [3],
    [4], ... once papermill has injected its parameters cell as In [2]), on `python3`."""
    nb = new_notebook()
    first = new_code_cell(params)
    first.metadata["tags"] = ["parameters"]
    nb.cells = [first, *(new_code_cell(source) for source in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
