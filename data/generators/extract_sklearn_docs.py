"""Extract scikit-learn's docstrings into a Markdown corpus: the held-out evaluation set.

What it is: one Markdown document per public class or function of 23 scikit-learn
submodules (each module's `__all__`), read from the INSTALLED scikit-learn, written as
`OUT/corpus/<module>/<Name>.md` with the shipped corpus's front matter (`title`, `kind`,
`lang`, ...). The docstring becomes Markdown: the summary under `# Name`, numpydoc sections
(`Parameters` over a dashed line) as `## Parameters`, each entry line of a parameter-like
section (`alpha : float, default=1.0`) as a `### ` heading with its description de-indented
below it, doctest blocks of `Examples` fenced as code. Everything else is kept verbatim
(de-indented, line breaks as in the source, reStructuredText roles untouched). The
hand-written questions in `data/heldout/sklearn/golden/` are copied to `OUT/golden/`, so
`ragkit eval OUT` works.

What it is not: a documentation renderer (no cross-references resolved, no math rendered)
nor a source of questions. The extracted text is NOT committed: it belongs to scikit-learn
(BSD-3-Clause) and is rebuilt from the installed package.

Why the pin: the questions' spans are verbatim text of one scikit-learn release; another
release rewords docstrings, so the script refuses (exit 2) unless the installed version is
`PINNED` or `--any-version` is given. Deterministic: names are sorted, nothing depends on
object addresses or the clock, so two runs give byte-identical files.

Usage:
    python data/generators/extract_sklearn_docs.py [--out build/heldout/sklearn] [--any-version]
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

PINNED = "1.9.1"
ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "data" / "heldout" / "sklearn" / "golden"
DEFAULT_OUT = Path("build") / "heldout" / "sklearn"
MODULES = (
    "cluster", "compose", "covariance", "cross_decomposition", "decomposition",
    "discriminant_analysis", "ensemble", "feature_selection", "gaussian_process", "impute",
    "inspection", "isotonic", "linear_model", "manifold", "mixture", "model_selection",
    "naive_bayes", "neighbors", "neural_network", "pipeline", "preprocessing", "svm", "tree",
)
# Sections whose unindented lines are entries (`name : type`) followed by an indented text.
ENTRY_SECTIONS = {"Parameters", "Other Parameters", "Attributes", "Returns", "Yields",
                  "Raises", "Warns", "Receives"}
_UNDERLINE = re.compile(r"^-{3,}$")


def public_objects(module_name: str) -> list[tuple[str, object]]:
    """Classes and functions of `__all__`, sorted by name.

    Skipped: experimental names (importing them raises ImportError), deprecated ones,
    undocumented ones and constants such as `neighbors.VALID_METRICS` (whose `__doc__` is
    their type's).
    """
    module = importlib.import_module(f"sklearn.{module_name}")
    found = []
    for name in sorted(getattr(module, "__all__", [])):
        try:
            obj = getattr(module, name)
        except ImportError:  # experimental names need an explicit `enable_*` import
            continue
        doc = getattr(obj, "__doc__", None)
        if not (inspect.isclass(obj) or inspect.isroutine(obj)) or not doc or not doc.strip():
            continue
        if doc.lstrip().startswith("DEPRECATED") or hasattr(obj, "__deprecated__"):
            continue
        found.append((name, obj))
    return found


def _dedent(lines: list[str]) -> list[str]:
    """Remove the common indentation of the non-blank lines."""
    widths = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(widths, default=0)
    return [line[cut:] if line.strip() else "" for line in lines]


def _entries(body: list[str]) -> list[str]:
    """An entry section: `name : type` lines become `### ` headings, descriptions de-indented."""
    out: list[str] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.strip() and not line.startswith(" "):
            j = i + 1
            while j < len(body) and (not body[j].strip() or body[j].startswith(" ")):
                j += 1
            out += ["", "### " + " ".join(line.split()), ""]
            out += _trim(_dedent(body[i + 1:j]))
            i = j
        else:
            out.append(line)
            i += 1
    return out


def _examples(body: list[str]) -> list[str]:
    """Fence each doctest block (a `>>>` line up to the next blank line) as Python code."""
    out: list[str] = []
    in_code = False
    for line in body + [""]:
        if not in_code and line.lstrip().startswith(">>>"):
            out.append("```python")
            in_code = True
        if in_code and not line.strip():
            out.append("```")
            in_code = False
        out.append(line)
    return out[:-1]


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def docstring_markdown(name: str, doc: str) -> str:
    """The docstring as Markdown: `# name`, the text before the first section, `## Section`s."""
    lines = [line.rstrip() for line in inspect.cleandoc(doc).expandtabs(4).splitlines()]
    starts = [i for i in range(len(lines) - 1)
              if lines[i].strip() and _UNDERLINE.match(lines[i + 1].strip())
              and len(lines[i + 1].strip()) >= len(lines[i].strip()) - 1]
    out = [f"# {name}", ""] + _trim(lines[:starts[0] if starts else len(lines)])
    for k, start in enumerate(starts):
        title = lines[start].strip()
        body = _trim(lines[start + 2:starts[k + 1] if k + 1 < len(starts) else len(lines)])
        if title in ENTRY_SECTIONS:
            body = _trim(_entries(body))
        elif title == "Examples":
            body = _examples(_dedent(body))
        else:
            body = _dedent(body)
        out += ["", f"## {title}", ""] + body
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def render_document(module_name: str, name: str, obj: object, version: str) -> str:
    kind = "class" if inspect.isclass(obj) else "function"
    front = [
        "---",
        f"title: sklearn.{module_name}.{name}",
        "kind: reference",
        "lang: en",
        f"module: sklearn.{module_name}",
        f"object: {kind}",
        f"source: scikit-learn {version} docstring (BSD-3-Clause)",
        "---",
    ]
    return "\n".join(front) + "\n" + docstring_markdown(name, obj.__doc__ or "")


def render(version: str) -> dict[str, str]:
    """Relative path below OUT -> text, for every document, the golden files and SOURCE.txt."""
    files: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module_name in MODULES:
            for name, obj in public_objects(module_name):
                files[f"corpus/{module_name}/{name}.md"] = render_document(
                    module_name, name, obj, version)
    for path in sorted(GOLDEN.glob("*.jsonl")):
        files[f"golden/{path.name}"] = path.read_text(encoding="utf-8")
    files["SOURCE.txt"] = (f"scikit-learn {version} docstrings (BSD-3-Clause), extracted by "
                           f"data/generators/extract_sklearn_docs.py; pinned {PINNED}\n")
    return files


def write_tree(out: Path, files: dict[str, str]) -> None:
    """Write into a fresh folder beside `out`, then replace `out`: never half-written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for rel, text in sorted(files.items()):
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"folder to (re)write: corpus/, golden/ (default {DEFAULT_OUT})")
    ap.add_argument("--any-version", action="store_true",
                    help=f"extract even if the installed scikit-learn is not {PINNED}")
    ap.add_argument("--pinned", default=PINNED, help=argparse.SUPPRESS)  # for the tests
    args = ap.parse_args(argv)
    try:
        import sklearn
    except ImportError:
        print("extract_sklearn_docs: scikit-learn is not installed "
              f"(pip install scikit-learn=={args.pinned})", file=sys.stderr)
        return 2
    version = sklearn.__version__
    if version != args.pinned and not args.any_version:
        print(f"extract_sklearn_docs: scikit-learn {version} is installed, but the questions "
              f"were written against {args.pinned}; install scikit-learn=={args.pinned} "
              "or pass --any-version", file=sys.stderr)
        return 2
    files = render(version)
    write_tree(args.out, files)
    docs = sum(rel.startswith("corpus/") for rel in files)
    print(f"wrote {docs} documents from scikit-learn {version} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
