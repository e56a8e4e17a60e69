"""Copy the source of two pure-Python libraries into a code corpus: the held-out code set.

What it is: every `.py` file of the INSTALLED `httpx` and `tqdm` packages, copied byte for
byte as `OUT/corpus/<package>/<path>.py` (the document id is `<package>/<path>.py`, which
`ragkit.document_folder` also uses as the title of a code file). The hand-written questions
in `data/heldout/pycode/golden/` are copied to `OUT/golden/`, so `ragkit eval OUT` works.

What it is not: a packager (no `.pyc`, data files, type stubs or `py.typed` markers) nor a
source of questions. Tests and vendored code would be skipped; neither package ships any.
The copied source is NOT committed: it belongs to its authors (httpx: BSD-3-Clause,
tqdm: MPL-2.0 AND MIT) and is rebuilt from the installed packages.

Why the pin: the questions' spans are verbatim lines of one release of each package; another
release moves or rewrites code, so the script refuses (exit 2) unless the installed versions
are `PINNED` or `--any-version` is given. Deterministic: files are sorted, copied unchanged,
so two runs give byte-identical trees.

Usage:
    python data/generators/extract_python_source.py [--out build/heldout/pycode] [--any-version]
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_sklearn_docs import write_tree  # noqa: E402  (same never-half-written writer)

PINNED = {"httpx": "0.29.0", "tqdm": "4.70.1"}
LICENSES = {"httpx": "BSD-3-Clause", "tqdm": "MPL-2.0 AND MIT"}
ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "data" / "heldout" / "pycode" / "golden"
DEFAULT_OUT = Path("build") / "heldout" / "pycode"
SKIP_PARTS = {"tests", "test", "testing", "_vendor", "vendor", "vendored", "__pycache__"}


def installed_version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_dir(package: str) -> Path:
    """The folder the installed package is imported from (found without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"extract_python_source: {package} is not an installed package")
    return Path(list(spec.submodule_search_locations)[0])


def source_files(package: str) -> dict[str, str]:
    """`<package>/<path>.py` -> the file's text, unchanged; tests, vendored and empty skipped."""
    base = package_dir(package)
    files: dict[str, str] = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base)
        if SKIP_PARTS & set(rel.parts[:-1]) or rel.name.startswith("test_"):
            continue
        text = path.read_bytes().decode("utf-8")
        if text.strip():
            files[f"{package}/{rel.as_posix()}"] = text
    return files


def render(versions: dict[str, str]) -> dict[str, str]:
    """Relative path below OUT -> text, for every source file, the golden files and SOURCE.txt."""
    files: dict[str, str] = {}
    for package in sorted(PINNED):
        for rel, text in source_files(package).items():
            files[f"corpus/{rel}"] = text
    for path in sorted(GOLDEN.glob("*.jsonl")):
        files[f"golden/{path.name}"] = path.read_text(encoding="utf-8")
    lines = [f"{p} {versions[p]} source ({LICENSES[p]}), copied unchanged by "
             f"data/generators/extract_python_source.py; pinned {PINNED[p]}"
             for p in sorted(PINNED)]
    files["SOURCE.txt"] = "\n".join(lines) + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"folder to (re)write: corpus/, golden/ (default {DEFAULT_OUT})")
    ap.add_argument("--any-version", action="store_true",
                    help="copy even if the installed versions are not the pinned ones")
    ap.add_argument("--pinned", action="append", default=[], metavar="PKG==VERSION",
                    help=argparse.SUPPRESS)  # for the tests
    args = ap.parse_args(argv)
    pinned = dict(PINNED)
    for entry in args.pinned:
        name, _, version = entry.partition("==")
        pinned[name] = version
    versions = {}
    for package in sorted(pinned):
        version = installed_version(package)
        if version is None:
            print(f"extract_python_source: {package} is not installed "
                  f"(pip install {package}=={pinned[package]})", file=sys.stderr)
            return 2
        if version != pinned[package] and not args.any_version:
            print(f"extract_python_source: {package} {version} is installed, but the questions "
                  f"were written against {pinned[package]}; install "
                  f"{package}=={pinned[package]} or pass --any-version", file=sys.stderr)
            return 2
        versions[package] = version
    files = render(versions)
    write_tree(args.out, files)
    docs = sum(rel.startswith("corpus/") for rel in files)
    print(f"wrote {docs} source files from "
          + ", ".join(f"{p} {versions[p]}" for p in sorted(versions)) + f" to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
