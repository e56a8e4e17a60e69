"""A notebook's parameters: what its `parameters` cell declares, and checking given values.

What it is: papermill's reading of the cell tagged `parameters` (each `name = literal`),
the defaults as Python values, and the checks `ragkit cookbook run|sweep` make before
anything executes — a name the notebook does not declare, or a value of another type than
its default's, is a `RagkitError` naming the notebook and the parameter.

How a value given as text is read: as JSON when it is a number, `true`/`false` or `null`,
else as the text itself (`"3"` -> 3, `"true"` -> True, `"256,512"` stays a string). A
parameter whose default is a string keeps the text as typed (`-p split=2024` is "2024").
Types must match the default's: an int default takes whole numbers, a float default any
number, a bool default only true/false; a `None` default takes anything.

`check_depth(k)`, `check_every(every)`, `check_count(name, value)` and `check_folder(name,
value)`: values a notebook refuses in its first cell.
`check_splits`: a `split` (or `tune_split`) the data's questions lack, refused before any
kernel starts — each notebook reading it stopped on its own cell with the same error.

Edited by hand: `cookbook refresh` records each notebook's defaults in its metadata
(`metadata.ragkit.defaults`), and `edited_parameters` compares a kernel's values with them in
a kernel JupyterLab started for that notebook (`JPY_SESSION_NAME`, the notebook's path), so
its banner shows there too, not only under `ragkit cookbook run`.

What it is not: a schema language — the default's literal is the only declaration.
"""
from __future__ import annotations

import ast
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.documents import RagkitError, load_golden, where
from ragkit.progress import SESSION_ENV  # the notebook a Jupyter server started this kernel for
from ragkit.jsonl import MalformedJSON, parse_json, read_json
from ragkit.papermill_params import injected


def parse_value(text: Any, place: str = "parameter") -> Any:
    """A parameter value as typed: JSON numbers/booleans/null, else the string itself.

    Non-strings (values given from Python) pass through unchanged. JSON nested too deeply for
    Python's stack, or a number of over 4,300 digits, is one error naming `place` (it was a
    RecursionError traceback), not the string: read as text it would be a silent surprise.
    """
    if not isinstance(text, str):
        return text
    try:
        return parse_json(text, place)
    except MalformedJSON:
        return text


def _not_a_notebook(notebook: Path) -> str | None:
    """Why `notebook` is no Jupyter notebook — not UTF-8, not JSON, JSON without a `cells`
    list — or None. Said in these words, never with the file's text: papermill's error
    quoted its first bytes (`/etc/passwd`'s first line), after a UserWarning and its source
    line about the file's extension."""
    try:
        text = notebook.read_bytes().decode("utf-8")
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except UnicodeDecodeError:
        return "not a Jupyter notebook (its bytes are not UTF-8 text)"
    try:
        cells = parse_json(text.removeprefix("\ufeff"), notebook).get("cells")
    except (ValueError, AttributeError):  # not JSON or too deep (RagkitError), not an object
        return "not a Jupyter notebook (its text is not a JSON object)"
    return None if isinstance(cells, list) else "not a Jupyter notebook (no list of cells)"


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """The names assigned in the notebook's `parameters` cell, with their default values.

    A default that is not a literal (an expression) is kept as its source text. A file that
    is no notebook is one line saying so (`_not_a_notebook`).
    """
    import papermill

    wrong = _not_a_notebook(Path(notebook))
    if wrong is not None:
        raise RagkitError(f"{notebook}: {wrong}")
    try:
        with warnings.catch_warnings():  # "the file is not specified with any extension"
            warnings.simplefilter("ignore", UserWarning)
            found = papermill.inspect_notebook(str(notebook))
    except Exception as exc:  # no kernel named, ...: the user's file
        raise RagkitError(f"{notebook}: cannot read its parameters ({exc})") from None
    defaults = {}
    for name, info in found.items():
        try:
            defaults[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            defaults[name] = info["default"]
    return defaults


def _type_name(value: Any) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "text", list: "a JSON list", dict: "a JSON object"}.get(type(value),
                                                                        type(value).__name__)


def typed_value(notebook: Path, name: str, given: Any, default: Any) -> Any:
    """`given` (text or a Python value) read and checked against `default`'s type."""
    value = parse_value(given, where(notebook, field_name=name))
    if default is None:
        return value
    if isinstance(default, str):
        return value if isinstance(value, str) else str(given)
    ok = {bool: lambda v: isinstance(v, bool),
          int: lambda v: isinstance(v, int) and not isinstance(v, bool),
          float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}.get(
        type(default), lambda v: isinstance(v, type(default)))
    if not ok(value):
        raise RagkitError(f"{where(notebook, field_name=name)}: expects {_type_name(default)} "
                          f"(its default is {default!r}), got {given!r}")
    return float(value) if isinstance(default, float) else value


def parameters_for(paths: Sequence[Path], parameters: Mapping[str, Any]) -> dict[Path, dict]:
    """Each notebook's share of `parameters` (the names it declares), values read and checked.

    A name that no notebook declares is an error naming the declared ones.
    """
    declared = {path: declared_parameters(path) for path in paths}
    known = sorted({name for names in declared.values() for name in names})
    unknown = [name for name in parameters if name not in known]
    if unknown:
        place = str(paths[0]) if len(paths) == 1 else ", ".join(p.name for p in paths)
        raise RagkitError(f"{place}: no parameter {', '.join(map(repr, unknown))}; declared "
                          f"parameters: {', '.join(known) or 'none'}")
    return {path: {name: typed_value(path, name, value, declared[path][name])
                   for name, value in parameters.items() if name in declared[path]}
            for path in paths}


# The parameters a run changed from the notebook's defaults, as JSON, for the kernel:
# `ragkit.notebook_data.data_banner` says that the Markdown describes the default run.
CHANGED_ENV = "RAGKIT_CHANGED_PARAMETERS"
# not what the text describes: the data (`data_banner` judges it), where Anthropic's cookbook
# set lies, and where a run writes; notebook 05's `code_root` is its subject and counts
WHERE = ("data_dir", "cookbook_dir")  # the data a run reads


def changed_parameters(notebook: Path, given: Mapping[str, Any]) -> dict[str, Any]:
    """The given parameters whose value differs from the notebook's default, leaving out
    `WHERE` and the folders a run writes (`*_folder`)."""
    declared = declared_parameters(notebook)
    return {name: value for name, value in given.items()
            if _described(name) and declared.get(name, value) != value}


def _described(name: str) -> bool:
    """Whether the text cells depend on parameter `name`: not the data or output folders."""
    return name not in WHERE and not name.endswith("_folder")


def effective_parameters(notebook: Path, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared parameter with the value the run used (the given one, else its default)."""
    return {**declared_parameters(notebook), **given}


SPLIT_PARAMETERS = ("split", "tune_split")


def check_splits(shares: Mapping[Path, Mapping[str, Any]]) -> None:
    """Refuse a split that the questions of a notebook's `data_dir` lack, naming the splits
    they have and the notebooks and parameters that asked for it — before any kernel starts:
    a run on data with a dev split only stopped every notebook on its own cell, the same error
    printed once per notebook, each after seconds of starting a kernel.

    `data_dir` is read as the notebook reads it (relative to the notebook's folder). Only its
    `golden/` question files are read, not its documents; a folder without `golden/`, or with
    question files that cannot be read, is left to the notebook, whose cells say what it lacks.
    """
    asked: dict[tuple[Path, str], list[str]] = {}
    for notebook, given in shares.items():
        values = effective_parameters(notebook, given)
        if not isinstance(values.get("data_dir"), str):
            continue
        data = Path(notebook.parent, values["data_dir"])
        for name in SPLIT_PARAMETERS:
            if isinstance(values.get(name), str):
                asked.setdefault((data, values[name]), []).append(f"{notebook.name} ({name})")
    splits: dict[Path, set[str]] = {}
    for (data, split), readers in asked.items():
        if data not in splits:
            try:
                golden = load_golden(data / "golden") if (data / "golden").is_dir() else []
            except RagkitError:
                golden = []
            splits[data] = {query.split for query in golden}
        if splits[data] and split not in splits[data]:
            raise RagkitError(f"{data.name}: no queries in split '{split}' (splits: "
                              f"{sorted(splits[data])}), asked for by {', '.join(readers)}")




def live() -> bool:
    """True in a kernel a Jupyter server started for a notebook (JupyterLab): long steps show
    progress bars there (a first run embeds for minutes). papermill and nbval start kernels
    without a session, so the committed outputs stay free of bars and timings."""
    return bool(os.environ.get(SESSION_ENV))


def edited_parameters(values: Mapping[str, Any]) -> dict[str, Any]:
    """In a kernel JupyterLab started for a notebook whose defaults `cookbook refresh`
    recorded: the parameters (but `WHERE` and `*_folder`) whose value in `values`, the
    kernel's namespace, differs from them — the `parameters` cell edited by hand, saved or
    not. Empty anywhere else (papermill and nbval start kernels without a session)."""
    session = os.environ.get(SESSION_ENV)
    try:
        notebook = read_json(session) if session else {}
        defaults = notebook["metadata"]["ragkit"]["defaults"] if notebook else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {name: values[name] for name, default in defaults.items()
            if name in values and _described(name) and values[name] != default}


def changed_in_run(values: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters this run changed: given to `ragkit cookbook run|sweep` (`CHANGED_ENV`),
    to plain papermill (`ragkit.papermill_params.injected`), or edited in JupyterLab
    (`edited_parameters`); `values` is the kernel's namespace."""
    if CHANGED_ENV in os.environ:
        return json.loads(os.environ.get(CHANGED_ENV) or "{}")
    given = {k: v for k, v in injected(values).items() if _described(k)}
    return given or edited_parameters(values)


def run_note() -> str:
    """"this run: NAME = VALUE, …" for the parameters this notebook run changed
    (`changed_in_run` of the kernel's namespace, `__main__`), or "" for a default run: a
    figure's title says which run drew it (notebook 01's figure under `tokenizer = 'words'`
    read as the default run's)."""
    main = sys.modules.get("__main__")
    changed = changed_in_run(vars(main) if main is not None else {})
    return ("this run: " + ", ".join(f"{name} = {value!r}" for name, value in changed.items())
            if changed else "")


def unchanged(*names: str) -> bool:
    """Whether this run keeps every parameter of `names` at its default. A check that holds
    for the default only is recorded only then: notebook 05 recorded "cites
    orders/cancel.py:68" (false) for any question it was asked. Not for the data folders
    (`WHERE`, `*_folder`), which `changed_in_run` leaves out: `data_banner` speaks of those."""
    return not set(names) & set(changed_in_run(sys._getframe(1).f_globals))


def check_depth(k: object, needed: int = 20) -> None:
    """Refuse a ranked-list length `k` below `needed`: a notebook that reports Pass@20 and
    Fail@20 (the Contextual Retrieval article's measure) cannot get them from a top-10 list,
    and with `-p k=10` its "Pass@20" columns showed Pass@10 under the wrong name."""
    if isinstance(k, bool) or not isinstance(k, int) or k < needed:
        raise RagkitError(f"parameter k = {k!r}: this notebook reports Pass@{needed} and "
                          f"Fail@{needed}, which need a ranked list of at least {needed}; "
                          f"give k >= {needed}")


def check_every(every: object) -> None:
    """Refuse a step `every` (every N-th question) below 1: `[::0]` was "slice step cannot be
    zero" once the index was built, and a negative step reverses the questions."""
    check_count("every", every)


def check_count(name: str, value: object) -> None:
    """Refuse a count parameter `name` that is not a whole number ≥ 1, naming it: notebook 08
    with `n_questions=0` stopped after its index was built, on "n must be at least 1"."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RagkitError(f"parameter {name} = {value!r}: give a whole number {name} >= 1")


def check_folder(name: str, value: object) -> Path:
    """The folder a notebook parameter `name` names, resolved; anything else is refused
    naming the parameter. Notebook 05 with `code_root=/nonexistent` ran to exit 0, every
    tool call an error, and reported that the planted instruction never reached the agent."""
    if not str(value).strip():
        raise RagkitError(f"parameter {name} = {value!r}: give a folder")
    path = Path(str(value)).expanduser()
    if not path.is_dir():
        raise RagkitError(f"parameter {name} = {value!r}: "
                          + ("a file, not a folder" if path.exists() else "no such folder"))
    return path.resolve()
