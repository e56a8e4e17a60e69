"""ragkit's imports run one way, faces to foundations: the contracts in .importlinter hold,
no two modules import each other even through others or inside a function, only the faces
load the offline stand-in, every module has a place in the layers, and `import ragkit` and
`ragkit --help` load neither numpy nor pandas.

Import circles are counted on grimp's graph of the package (the graph import-linter checks):
every `import` statement, at module level, in a function body or under `if TYPE_CHECKING:`.
Imports into the root package are left out: `ragkit/__init__.py` is the public face, above
every layer, and nothing below it names it.
"""
from __future__ import annotations

import ast
import configparser
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
FACES = ("ragkit.standin", "ragkit.cli")  # the only importers of the offline stand-in


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("ragkit", cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    roots = {m for m in graph.modules if "." not in m}
    edges = {m: [t for t in graph.find_modules_directly_imported_by(m) if t not in roots]
             for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, found = set(), [], []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_import_contracts_hold():
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 kept, 0 broken" in done.stdout


def test_no_import_circle_counting_imports_inside_functions(graph):
    assert circles(graph) == []


def test_the_circle_count_sees_imports_inside_functions_and_type_checking(tmp_path,
                                                                          monkeypatch):
    """The counter itself, on a package of three modules whose way back is an import inside
    a function (a→b→a) and one under `if TYPE_CHECKING:` (b→c→b)."""
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circled import b\n")
    (package / "b.py").write_text("from circled import c\n\ndef f():\n    from circled import a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from circled import b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = circles(grimp.build_graph("circled", cache_dir=None))
    assert found == [["circled.a", "circled.b", "circled.c"]]


def test_only_the_faces_import_the_offline_stand_in(graph):
    importers = {m for m in graph.find_modules_that_directly_import("ragkit.standin")
                 | {i for s in graph.find_descendants("ragkit.standin")
                    for i in graph.find_modules_that_directly_import(s)}}
    assert sorted(m for m in importers if not m.startswith(FACES) and m != "ragkit") == []


def test_every_module_has_a_place_in_the_layers():
    config = configparser.ConfigParser(inline_comment_prefixes=(";",))
    config.read(ROOT / ".importlinter")
    text = config["importlinter:contract:layers"]["layers"]
    placed = {name.strip() for line in text.splitlines()
              for name in line.replace("|", ":").split(":") if name.strip()}
    tops = {f"ragkit.{p.stem}" for p in (ROOT / "ragkit").iterdir()
            if (p.suffix == ".py" and p.stem != "__init__")
            or (p.is_dir() and (p / "__init__.py").is_file())}
    assert sorted(tops - placed) == []
    assert sorted(placed - tops) == []


@pytest.mark.parametrize("statement", ["import ragkit",
                                       "from ragkit.cli import build_parser; build_parser()"])
def test_the_face_and_the_command_line_start_without_numpy_or_pandas(statement):
    """`import ragkit` binds names lazily; `ragkit --help` builds every parser."""
    done = subprocess.run([sys.executable, "-c", f"import sys\n{statement}\n"
                           "print(sorted({'numpy', 'pandas', 'anthropic'} & set(sys.modules)))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def function_local_imports(root: Path) -> list[tuple[str, int, bool]]:
    """(file, line, has a reason) of each import of a ragkit module inside a function body.
    The reason is a `# deferred: …` comment on the import or above the run of imports it
    belongs to (one comment may cover a block)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        seen: set[int] = set()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno in seen:
                    continue
                ours = (isinstance(node, ast.ImportFrom)
                        and ((node.module or "").startswith("ragkit") or node.level > 0)) or \
                    (isinstance(node, ast.Import)
                     and any(a.name.startswith("ragkit") for a in node.names))
                if not ours:
                    continue
                seen.add(node.lineno)
                reason, k = False, node.lineno - 1
                while k >= 0 and not reason:
                    line = lines[k].strip()
                    reason = "# deferred:" in lines[k]
                    if not (line.startswith(("from ", "import ", "#")) or k == node.lineno - 1
                            or line.endswith((",", ")"))):
                        break
                    k -= 1
                found.append((str(path.relative_to(root.parent)), node.lineno, reason))
    return found


def test_each_import_inside_a_function_says_why_it_waits():
    """Only start-up deferrals stay inside functions, each with its reason."""
    found = function_local_imports(ROOT / "ragkit")
    assert [f"{f}:{n}" for f, n, reason in found if not reason] == []
    assert len(found) <= 52  # down from 149 when the layers were drawn; do not add more


def test_the_reason_check_sees_a_bare_import(tmp_path):
    package = tmp_path / "ragkit"
    package.mkdir()
    (package / "m.py").write_text("def f():\n    # deferred: pymilvus\n"
                                  "    from ragkit import a\n    from ragkit import b\n\n"
                                  "def g():\n    x = 1\n    from ragkit import c\n")
    assert function_local_imports(package) == [("ragkit/m.py", 3, True),
                                                ("ragkit/m.py", 4, True),
                                                ("ragkit/m.py", 8, False)]
