"""all-MiniLM-L6-v2 in numpy: the offline dense embedder, no torch.

What it is: the BERT encoder of sentence-transformers/all-MiniLM-L6-v2 (6 layers, hidden
384, 12 heads, erf-GELU, post-LayerNorm with eps 1e-12) followed by mean pooling over the
attention mask and L2 normalisation, in fp32 numpy over the weights in `model.safetensors`,
with the `tokenizers` word-piece tokenizer. It matches sentence-transformers to 1.6e-7 (max
abs difference on the cookbook's 737 chunks) and runs about as fast as torch on 2 cores
(benchmarks/bench_minilm.py): texts are grouped by word-piece count into small batches of
equal length, the batches run on parallel threads each with a single-threaded BLAS, and
GELU uses a vectorised erf instead of scipy's scalar one. No padding and one matrix product
per text: a text's vector is the same bit for bit whatever it is batched with, so what the
embedding cache keeps does not depend on which run, notebook or process embedded it first.

What it is not: a general BERT runtime (one model, one config) nor a trainer.

Limits: texts longer than 256 word-pieces (special tokens included) are truncated to their
first 256, as sentence-transformers does; `token_lengths()` reports the untruncated length so
callers can split long texts into windows (ragkit.dense scores a chunk by its best window,
MaxP). `input_type` ("document" or "query") is accepted for interface parity with Voyage and
changes nothing: MiniLM embeds queries and documents alike.

Method: Devlin et al. 2019 (BERT); Reimers & Gurevych 2019 (Sentence-BERT mean pooling);
weights from https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from threadpoolctl import threadpool_limits
from tokenizers import Tokenizer

from ragkit import models
from ragkit.documents import RagkitError
from ragkit.jobs import usable_cores

MAX_TOKENS = 256
TOKENS_PER_BATCH = 512  # tokens per batch at most (measured best of 256..2048 on 2 cores)
MAX_THREADS = 4  # batches embedded at once by default
ATTENTION_BLOCK = 1 << 18  # attention scores computed at once (floats)


class MiniLM:
    """all-MiniLM-L6-v2 sentence embedder (see module docstring)."""

    name = "minilm-l6-v2"
    dim = 384
    max_tokens = MAX_TOKENS
    # The pinned sha256 of model.safetensors: `models.verify` checks the file against it on
    # every load, so it is the hash of the weights actually used (no re-hashing here).
    fingerprint = models.MODEL_FILES["model.safetensors"]

    def __init__(self, folder: Path | None = None, threads: int | None = None) -> None:
        self.folder = folder = models.verify(folder)
        self.threads = threads or min(MAX_THREADS, usable_cores())
        config = json.loads((folder / "config.json").read_text())
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # tokenizer.json ships with truncation 128 and fixed padding 128: undo both.
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.layers, self.emb = _load_weights(folder / "model.safetensors", config)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Word-pieces per text, [CLS] and [SEP] included, before truncation."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """Return (len(texts), 384) float32 L2-normalised embeddings, in input order.

        Texts are sorted by word-piece count and cut into batches of similar length; the
        batches run on `self.threads` threads, each with a single-threaded BLAS (measured
        faster than one multi-threaded BLAS, and far more robust on a busy machine).
        """
        if input_type not in ("document", "query"):
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        ids = [x if len(x) <= MAX_TOKENS else x[: MAX_TOKENS - 1] + x[-1:] for x in ids]
        batches = list(_length_batches(ids))
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=len(texts), desc="embed minilm", unit="text")
        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(self.threads) as pool:
            done = pool.map(lambda rows: self._forward([ids[i] for i in rows]), batches)
            for rows, vectors in zip(batches, done, strict=True):
                out[rows] = vectors
                if bar is not None:
                    bar.update(len(rows))
        if bar is not None:
            bar.close()
        return out

    def _forward(self, ids: list[list[int]]) -> np.ndarray:
        """Encode one batch of equally long token-id lists; return pooled, normalised vectors.

        Every matrix product is per sequence ((n, width, ·) @ (·, ·) runs one BLAS call per
        text), so a text's vector does not depend on the texts batched with it."""
        width = len(ids[0])
        tok = np.asarray(ids, dtype=np.int64)
        word, pos, typ, ln = self.emb
        x = word[tok] + (pos[:width] + typ)  # (n, width, hidden)
        _layer_norm_(x, *ln, self.eps)
        for layer in self.layers:
            x = self._layer(x, layer)
        pooled = x.sum(1) / np.float32(width)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def _layer(self, x: np.ndarray, w: dict) -> np.ndarray:
        """One post-LayerNorm BERT block over x: (n, width, hidden)."""
        qkv = x @ w["qkv"]
        qkv += w["qkv_b"]
        a = _attention(qkv, self.heads) @ w["o"]
        a += w["o_b"]
        a += x
        _layer_norm_(a, *w["ln1"], self.eps)
        inner = a @ w["i"]
        inner += w["i_b"]
        _gelu_(inner.reshape(-1, inner.shape[-1]))
        out = inner @ w["out"]
        out += w["out_b"]
        out += a
        _layer_norm_(out, *w["ln2"], self.eps)
        return out


def _attention(qkv: np.ndarray, heads: int) -> np.ndarray:
    """Multi-head self-attention (q pre-scaled) over (n, width, 3 * hidden), a few sequences
    at a time to stay in cache; returns (n, width, hidden)."""
    n, width, hidden = qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3
    q, k, v = qkv.reshape(n, width, 3, heads, hidden // heads).transpose(2, 0, 3, 1, 4)
    ctx = np.empty((n, width, heads, hidden // heads), dtype=np.float32)
    step = max(1, ATTENTION_BLOCK // (heads * width * width))
    for s in range(0, n, step):
        scores = q[s:s + step] @ k[s:s + step].transpose(0, 1, 3, 2)  # (step, heads, w, w)
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores *= 1.0 / scores.sum(-1, keepdims=True)
        ctx[s:s + step] = (scores @ v[s:s + step]).transpose(0, 2, 1, 3)
    return ctx.reshape(n, width, hidden)


def _layer_norm_(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    """LayerNorm over the last axis, in place (biased variance, as torch)."""
    x -= x.mean(-1, keepdims=True)
    var = np.einsum("...j,...j->...", x, x) / np.float32(x.shape[-1])
    x *= (1.0 / np.sqrt(var + np.float32(eps)))[..., None]
    x *= gamma
    x += beta


# GELU(x) = x * Phi(x), and 1 - Phi(|x|) = t * P(t) * exp(-x^2 / 2) / 2 with
# t = 1 / (1 + p |x| / sqrt 2): Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), as accurate in
# fp32 as scipy's erf and 4x faster. _C holds P's coefficients, halved, highest power first.
_P = np.float32(0.3275911 / np.sqrt(2))
_C = [np.float32(c / 2)
      for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def _gelu_(x: np.ndarray, rows: int = 64) -> None:
    """Exact (erf) GELU of a 2-D array, in place, in row blocks that stay in cache."""
    a = np.empty((rows, x.shape[1]), dtype=np.float32)
    t, r = np.empty_like(a), np.empty_like(a)
    for i in range(0, len(x), rows):
        xb = x[i:i + rows]
        ab, tb, rb = a[:len(xb)], t[:len(xb)], r[:len(xb)]
        np.abs(xb, out=ab)
        ab *= _P
        ab += 1
        np.reciprocal(ab, out=tb)
        np.multiply(tb, _C[0], out=rb)
        for c in _C[1:]:
            rb += c
            rb *= tb
        np.multiply(xb, xb, out=ab)
        ab *= np.float32(-0.5)
        np.exp(ab, out=ab)
        rb *= ab  # rb = 1 - Phi(|x|)
        np.subtract(np.float32(0.5), rb, out=rb)
        np.copysign(rb, xb, out=rb)
        rb += np.float32(0.5)  # rb = Phi(x)
        xb *= rb


def _length_batches(ids: list[list[int]]) -> Iterator[list[int]]:
    """Row indices grouped by exact token length, at most TOKENS_PER_BATCH tokens a batch
    (one text at least). Nothing is padded: a padded batch's sums run in another order, so a
    text's vector would depend on its batch, and through the embedding cache on run order."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batch: list[int] = []
    for i in order:
        if batch and (len(ids[i]) != len(ids[batch[0]])
                      or (len(batch) + 1) * len(ids[i]) > TOKENS_PER_BATCH):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def _load_weights(path: Path, config: dict) -> tuple[list[dict], tuple]:
    """Read safetensors into per-layer dicts of (in, out) fp32 matrices and biases.

    Query weights are pre-multiplied by 1/sqrt(head size), so attention skips that scaling.
    """
    t = load_file(str(path))
    scale = 1 / np.sqrt(config["hidden_size"] // config["num_attention_heads"])

    def w(name: str, factor: float = 1.0) -> np.ndarray:
        return np.ascontiguousarray(t[name + ".weight"].T) * np.float32(factor)

    def b(name: str, factor: float = 1.0) -> np.ndarray:
        return t[name + ".bias"] * np.float32(factor)

    def ln(name: str) -> tuple[np.ndarray, np.ndarray]:
        return t[name + ".LayerNorm.weight"], t[name + ".LayerNorm.bias"]

    layers = []
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        att = p + "attention.self."
        layers.append({
            "qkv": np.concatenate([w(att + "query", scale), w(att + "key"), w(att + "value")], 1),
            "qkv_b": np.concatenate([b(att + "query", scale), b(att + "key"), b(att + "value")]),
            "o": w(p + "attention.output.dense"), "o_b": b(p + "attention.output.dense"),
            "ln1": ln(p + "attention.output"),
            "i": w(p + "intermediate.dense"), "i_b": b(p + "intermediate.dense"),
            "out": w(p + "output.dense"), "out_b": b(p + "output.dense"),
            "ln2": ln(p + "output"),
        })
    emb = (t["embeddings.word_embeddings.weight"], t["embeddings.position_embeddings.weight"],
           t["embeddings.token_type_embeddings.weight"][0], ln("embeddings"))
    return layers, emb
