"""The project's own promises: two commands in the README, agreeing dependency lists."""
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _environment_pip() -> list[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    return [line.strip()[2:].strip().strip("'\"") for line in lines[start + 1:]
            if line.strip().startswith("- ")]


def test_environment_yml_matches_pyproject():
    project = _pyproject()["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    listed = [r for r in _environment_pip() if not r.startswith("-e")]
    assert sorted(map(str.lower, listed)) == sorted(map(str.lower, declared))


def test_environment_yml_python_matches_requires_python():
    minimum = _pyproject()["project"]["requires-python"].removeprefix(">=")
    assert f"python={minimum}" in (ROOT / "environment.yml").read_text()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^\s*(make \w+)\s*$", readme, re.M)
    assert commands[:2] == ["make cookbook", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_package_metadata_builds_without_deprecation_warnings(tmp_path):
    """The set-up's editable install (uv's or pip's) builds ragkit's metadata: that build must
    say nothing (a deprecated `project.license` table printed ~55 lines of warnings) and must
    carry the licence as an SPDX expression. Built with this environment's setuptools, which must be
    one the build-system table accepts, from a copy so the checkout is left as it was."""
    import shutil
    import subprocess
    import sys
    from importlib.metadata import version

    from packaging.requirements import Requirement

    requires = [Requirement(r) for r in _pyproject()["build-system"]["requires"]]
    setuptools = next(r for r in requires if r.name == "setuptools")
    assert setuptools.specifier.contains(version("setuptools")), (
        f"setuptools {version('setuptools')} is not {setuptools.specifier}")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "ragkit", tmp_path / "ragkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    build = ("from setuptools import build_meta\n"
             "print(build_meta.prepare_metadata_for_build_wheel('meta'))")
    (tmp_path / "meta").mkdir()
    done = subprocess.run([sys.executable, "-W", "always", "-c", build], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "deprecat" not in said.lower() and "Warning" not in said, said
    info = done.stdout.strip().splitlines()[-1]
    metadata = (tmp_path / "meta" / info / "METADATA").read_text()
    assert "License-Expression: MIT" in metadata.splitlines()


@pytest.mark.parametrize("module", ["pandas", "matplotlib.pyplot", "onnxruntime",
                                    "ragkit.pipeline"])
def test_the_set_up_compiles_the_modules_every_process_imports(module):
    """`make setup` leaves bytecode beside each module (uv is told to, ragkit's own is compiled
    too): where PYTHONDONTWRITEBYTECODE is set, as in many CI and container images, Python
    never writes it on import, and a set-up without it had every `ragkit` command, kernel and
    test worker compile pandas and ragkit again from source (5.4 s of imports, not 2.3 s)."""
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve() or not (venv / ".installed").is_file():
        pytest.skip("not run from the .venv `make setup` built")
    source = importlib.util.find_spec(module).origin
    cached = Path(importlib.util.cache_from_source(source))
    assert cached.is_file(), f"{module}: no bytecode at {cached}: rerun `make setup`"
