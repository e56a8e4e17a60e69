"""Where Anthropic's cookbook data set is absent (a fresh machine: it is never shipped), nbval
still passes: every cell whose outputs depend on it is run but not compared (the root
conftest.py's `checks_cookbook`). Notebook 02's finding, which quotes the cookbook numbers when
the set is there, was compared, and the suite failed on a machine without the set."""
from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
COOKBOOK_NAMES = {"cookbook", "cookbook_dir"}


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell reads and the names it binds (assignments, defs, imports aside)."""
    read, bound = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
    return read, bound


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_cell_shown_from_the_cookbook_set_goes_unchecked_without_it(path):
    checks_cookbook = _root_conftest().checks_cookbook
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    tainted = set(COOKBOOK_NAMES)
    for number, cell in enumerate(cells):
        source = "".join(cell["source"])
        if "parameters" in cell["metadata"].get("tags", []):
            continue
        read, bound = _names(source)
        if read & tainted:
            tainted |= bound  # a name computed from the cookbook set depends on it too
            if cell["outputs"]:
                assert checks_cookbook(source), (
                    f"{path.name} code cell {number} shows outputs computed from "
                    f"{sorted(read & tainted)} but nbval compares it where the set is absent")


def test_the_predicate_names_the_cells_that_look_for_the_set():
    checks_cookbook = _root_conftest().checks_cookbook
    assert checks_cookbook('if (cookbook / "codebase_chunks.json").is_file():\n    pass')
    assert not checks_cookbook('print("cookbook")')
