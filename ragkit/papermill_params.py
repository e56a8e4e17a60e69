"""The parameters papermill gave a notebook, read inside the kernel running it.

What it is: `injected(values)`: in a kernel papermill runs with `-p NAME VALUE`, the names its
injected cell assigned a value other than the one the cells before it gave, with the value the
kernel now holds. papermill puts that cell (first line `# Parameters`) after the notebook's
`parameters` cell; the kernel sees it only as code it ran, in IPython's input history (`In`
in `values`, the kernel's namespace), which is where it is read from. Only a name an earlier
cell gave a default counts: a user's own parameters cell that opens with `# Parameters` is
no injected one.

Why: a notebook run by plain papermill with changed parameters showed no banner, while its
prose still quoted the default run's numbers ("Dense … Pass@20 75.0" above a table of 79.8);
`ragkit cookbook run` and a parameters cell edited in JupyterLab did show it.

What it is not: the parameters a cell changed later, nor a value that is not a Python literal
(papermill writes literals); outside papermill (nbval, JupyterLab, a script) it is empty.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

HEADER = "# Parameters\n"  # papermill's comment atop the cell it injects (its translators)


def injected(values: Mapping[str, Any]) -> dict[str, Any]:
    """{name: value} papermill changed in this kernel (module docstring)."""
    history = values.get("In")
    if not isinstance(history, list):
        return {}
    for at in reversed(range(len(history))):  # the last: after the parameters cell
        source = history[at]
        if isinstance(source, str) and source.startswith(HEADER):
            given, before = assigned(source), {}
            for earlier in history[:at]:
                before.update(assigned(earlier) if isinstance(earlier, str) else {})
            return {name: values[name] for name, value in given.items()  # a default before
                    if name in values and name in before and before[name] != value}
    return {}


def assigned(source: str) -> dict[str, Any]:
    """The literal values the top-level `NAME = literal` statements of `source` assign."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and [type(t) for t in node.targets] == [ast.Name]:
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
    return out
