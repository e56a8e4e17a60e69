"""Environment for reproducible notebook outputs under nbval (set before kernels start)."""
import os
from pathlib import Path

os.environ.setdefault("IPYKERNEL_CELL_NAME", "<IPY-INPUT>")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

# Notebooks 02 and 04 each have one cell over Anthropic's cookbook data set (`cookbook_dir`,
# by default ../shared/data/cookbook beside the project), committed with its outputs. Where
# the data set is absent (it is never shipped), that cell prints "section skipped"; it still
# runs, so later cells see the same state, but its outputs are not compared, and the summary
# says which cells went unchecked. Every other cell is checked as usual.
COOKBOOK = Path(__file__).resolve().parent.parent / "shared" / "data" / "cookbook"
_UNCHECKED: list[str] = []


def pytest_collection_modifyitems(config, items):
    if (COOKBOOK / "codebase_chunks.json").is_file():
        return
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and "Path(cookbook_dir)" in cell.source:
            item.options["check"] = False
            _UNCHECKED.append(item.nodeid)


def pytest_terminal_summary(terminalreporter):
    if _UNCHECKED:
        terminalreporter.write_line(
            f"cookbook data set absent at {COOKBOOK}: {len(_UNCHECKED)} notebook cells ran "
            f"without comparing their outputs ({', '.join(_UNCHECKED)})")
