"""The project's own promises: two commands in the README, agreeing dependency lists."""
import re
import tomllib
from pathlib import Path

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
