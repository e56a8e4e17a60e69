"""The JupyterLab the notebooks are opened with: the environment's own jupyter and kernel, and
`make lab` (its root, its first page, --allow-root as root, a LAB_DIR with spaces or none)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _jupyter(*args: str) -> subprocess.CompletedProcess:
    """The environment's jupyter, as `make lab` runs it."""
    env = {**os.environ, "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter")}
    return subprocess.run([str(Path(sys.executable).parent / "jupyter"), *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_environment_resolves_jupyter_lab():
    done = _jupyter("lab", "--version")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"4\.\d+\.\d+\S*", done.stdout.strip())


def test_python3_kernel_is_this_environments_python():
    specs = json.loads(_jupyter("kernelspec", "list", "--json").stdout)["kernelspecs"]
    spec = specs["python3"]
    argv0 = spec["spec"]["argv"][0]
    # jupyter_client runs a bare "python" with the launching interpreter: this one
    assert argv0 in ("python", "python3") or Path(argv0).resolve() == Path(sys.executable).resolve()
    assert Path(spec["resource_dir"]).resolve().is_relative_to(Path(sys.prefix).resolve())


def test_make_lab_opens_the_notebooks_with_the_environments_jupyter(tmp_path):
    """`make lab` runs .venv's jupyter with .venv's kernelspecs first, its root at the project
    (so the file browser reaches build/, where notebook 08 writes its review sheet) and the page
    opening on notebooks/, and adds --allow-root exactly when run as root (Jupyter refuses root
    otherwise)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "jupyter").write_text('#!/bin/sh\necho "JUPYTER_PATH=$JUPYTER_PATH"\necho "$@"\n')
    (fake / "jupyter").chmod(0o755)
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "lab", f"BIN={fake}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root = " --allow-root" if os.getuid() == 0 else ""
    assert done.stdout.splitlines() == [
        f"JUPYTER_PATH={ROOT}/.venv/share/jupyter",
        f"lab --ServerApp.root_dir={ROOT}/ --LabApp.default_url=/lab/tree/notebooks{root}"]


def test_make_lab_opens_a_lab_dir_whose_name_holds_spaces(tmp_path):
    """make split "my notes/08 draft #2.ipynb" at its spaces: its root and page were
    several words each, and Jupyter opened elsewhere or refused the argument."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "jupyter").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    (fake / "jupyter").chmod(0o755)
    notebook = tmp_path / "my notes" / "08 draft #2.ipynb"
    notebook.parent.mkdir()
    notebook.write_text("{}")
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "lab", f"BIN={fake}",
                           f"LAB_DIR={notebook}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "lab", f"--ServerApp.root_dir={tmp_path}/my notes/",
        "--LabApp.default_url=/lab/tree/08%20draft%20%232.ipynb"]


def test_make_lab_names_a_missing_lab_dir_and_starts_nothing(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "jupyter").write_text('#!/bin/sh\necho started\n')
    (fake / "jupyter").chmod(0o755)
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "lab", f"BIN={fake}",
                           "LAB_DIR=no-such-folder"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == \
        "make lab: LAB_DIR=no-such-folder: no such file or folder"