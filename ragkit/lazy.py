"""Lazy exports for ragkit's faces: a name is imported from its home module on first use.

What it is: `attach(face, exports, submodules)` returns the module-level `__getattr__` and
`__dir__` (PEP 562) a face assigns; `exports` maps each home module to the names the face
exports from it, `submodules` names modules exported whole (`ragkit.agent.crag` as `crag`).
The first `face.name` (or `from face import name`) imports the home module and binds the
home module's own object on the face, so later uses are plain attribute reads and
`face.name is home.name`.

What it is not: a copy, a wrapper or a registry — objects are never rebuilt — and it does
not hide import errors: a home module that fails to import fails the attribute read.

Why: `import ragkit` and `import ragkit.agent` stay as cheap as what they import eagerly;
names whose modules pull in the Anthropic SDK, SciPy's statistics or the agent's loop load
when a notebook first uses them. (The `lazy_loader` package does the same with
`lazy_loader.attach`; it is not one of ragkit's dependencies, and these lines are all the
faces need.)
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def attach(face: str, exports: Mapping[str, Sequence[str]], submodules: Sequence[str] = ()
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for module `face`: `exports` (home → names) and whole
    `submodules` (dotted names, exported by their last part), each imported on first use."""
    homes = {name: home for home, names in exports.items() for name in names}
    whole = {module.rpartition(".")[2]: module for module in submodules}

    def __getattr__(name: str) -> Any:
        if name in whole:
            value = importlib.import_module(whole[name])
        elif name in homes:
            value = getattr(importlib.import_module(homes[name]), name)
        else:  # unknown names stay AttributeErrors, so `from face import submodule` still works
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        setattr(sys.modules[face], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[face])) | set(homes) | set(whole))

    return __getattr__, __dir__
