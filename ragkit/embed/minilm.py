"""all-MiniLM-L6-v2 on ONNX Runtime: the offline dense embedder, no torch.

What it is: the BERT encoder of sentence-transformers/all-MiniLM-L6-v2 (6 layers, hidden
384, 12 heads, erf-GELU, post-LayerNorm with eps 1e-12) followed by mean pooling and L2
normalisation, written out below as an ONNX graph over the weights in `model.safetensors`
(`_graph`: a few standard operators per layer, read top to bottom like the model), run
by ONNX Runtime's CPU kernels in fp32, with the `tokenizers` word-piece tokenizer. It matches
sentence-transformers to 1.9e-7 (max abs difference on the recorded reference texts;
tests/test_embed_minilm.py). Why ONNX Runtime: its matrix products are faster on this CPU
than numpy's OpenBLAS at these shapes — 5,040 against 3,214 word-pieces a second on two
cores for the same model written in numpy (shipped-corpus windows, measured 1 December
2026), and a short query in 9 ms instead of 20. Each text is one
call on one thread, the texts on `threads` threads: a text's vector is the same bit for bit
whatever it is embedded with (a batch of several texts rounds its sums differently), so what
the embedding cache keeps does not depend on which run, notebook or process embedded it first.

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

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from ragkit import models
from ragkit.documents import RagkitError
from ragkit.embed.loaded import shared
from ragkit.jobs import usable_cores
from ragkit.jsonl import read_json
from ragkit.progress import progress_bar

if TYPE_CHECKING:
    import onnx

# onnx and onnxruntime (~1.8 s to import) are imported when the first text is embedded: a
# build whose vectors are all cached only measures texts, which needs just the tokenizer.

MAX_TOKENS = 256
MAX_THREADS = 4  # texts embedded at once by default
OPSET = 20  # the first with Gelu; LayerNormalization is 17


class MiniLM:
    """all-MiniLM-L6-v2 sentence embedder (see module docstring)."""

    name = "minilm-l6-v2"
    dim = 384
    max_tokens = MAX_TOKENS
    # The pinned sha256 of model.safetensors (`models.verify` checks the file against it on
    # every load) and the runtime: vectors of another runtime differ in the last bits, and
    # the embedding cache, keyed by this, must not mix the two.
    fingerprint = models.MODEL_FILES["model.safetensors"] + "+onnxruntime"

    def __init__(self, folder: Path | None = None, threads: int | None = None) -> None:
        self.folder = folder = models.verify(folder)
        self.threads = threads or min(MAX_THREADS, usable_cores())
        self.config = read_json(folder / "config.json")
        self.tokenizer = shared("minilm tokenizer", folder / "tokenizer.json", self._tokenizer)
        self.session = None  # made on the first `embed`: measuring texts needs only the tokenizer

    def _tokenizer(self) -> Tokenizer:
        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        # tokenizer.json ships with truncation 128 and fixed padding 128: undo both.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    def _load(self):
        """The ONNX Runtime session over `_graph` (about 3 s with the imports), once per
        process (`loaded.shared`)."""
        import onnxruntime  # deferred: with onnx, seconds to import (note at the top)
        graph = _graph(load_file(str(self.folder / "model.safetensors")), self.config)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # one core a text
        return onnxruntime.InferenceSession(graph.SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Word-pieces per text, [CLS] and [SEP] included, before truncation."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """Return (len(texts), 384) float32 L2-normalised embeddings, in input order.

        One text per ONNX Runtime call, on one thread each, `self.threads` calls at once.
        Batches of equal-length texts ran up to 7 % faster (one thread, 600 windows), but
        batched rows round differently (529 of the 600 vectors changed, by up to 1e-7), so
        a vector would depend on its company."""
        if input_type not in ("document", "query"):
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        if ids and self.session is None:
            self.session = shared("minilm session", self.folder / "model.safetensors",
                                  self._load)
        return embed_each(ids, MAX_TOKENS, self._one, self.dim, self.threads, "embed minilm",
                          progress)

    def _one(self, ids: list[int]) -> np.ndarray:
        (vector,) = self.session.run(["vector"], {"input_ids": np.asarray([ids], np.int64)})
        return vector[0]


def embed_each(ids: list[list[int]], max_tokens: int, one: Callable[[list[int]], np.ndarray],
               dim: int, threads: int, label: str, progress: bool) -> np.ndarray:
    """(len(ids), dim) float32: `one(text_ids)` for each text, `threads` texts at once, in input
    order, a text longer than `max_tokens` cut to its first max_tokens - 1 ids and its last
    (the closing special token). Shared by MiniLM and e5-small, which differ in `one`."""
    ids = [x if len(x) <= max_tokens else x[: max_tokens - 1] + x[-1:] for x in ids]
    out = np.zeros((len(ids), dim), dtype=np.float32)
    # closed by `with` on Ctrl-C too: a bar left open redraws after the "interrupted" line
    with progress_bar(total=len(ids), desc=label, unit="text",
                      disable=not (progress and ids)) as bar, \
            ThreadPoolExecutor(threads) as pool:
        for row, vector in enumerate(pool.map(one, ids)):
            out[row] = vector
            bar.update()
    return out


def _graph(weights: dict[str, np.ndarray], config: dict) -> onnx.ModelProto:
    """The encoder as an ONNX graph: input_ids (1, n) int64 -> vector (1, 384) float32.

    Per layer: fused q|k|v projection (q pre-scaled by 1/sqrt(head size)), per-head softmax
    attention, output projection + residual + LayerNorm, GELU feed-forward + residual +
    LayerNorm; then the mean over tokens (no padding: all n count) and L2 normalisation."""
    g = _Builder(weights)
    heads, hidden = config["num_attention_heads"], config["hidden_size"]
    eps = config["layer_norm_eps"]
    n = g.op("Slice", g.op("Shape", "input_ids"), g.const([1]), g.const([2]))
    x = g.op("Add", g.op("Gather", g.w("embeddings.word_embeddings.weight"), "input_ids"),
             g.op("Slice", g.w("embeddings.position_embeddings.weight"), g.const([0]), n))
    x = g.op("Add", x, g.w("embeddings.token_type_embeddings.weight", row=0))
    encoder(g, g.norm(x, "embeddings.LayerNorm", eps), config["num_hidden_layers"], heads,
            hidden, eps)
    return g.model(hidden)


def encoder(g: _Builder, x: str, layers: int, heads: int, hidden: int, eps: float) -> None:
    """BERT's encoder layers over the embedded tokens `x` (1, n, hidden), then mean pooling
    and L2 normalisation into the graph output "vector"; shared with ragkit.embed.e5."""
    split = g.const([0, 0, 3, heads, hidden // heads])
    for i in range(layers):
        p, s = f"encoder.layer.{i}.", f"encoder.layer.{i}.attention.self."
        qkv = g.dense(x, [s + "query", s + "key", s + "value"], scale0=(hidden // heads) ** -0.5)
        q, k, v = g.op("Split", g.op("Transpose", g.op("Reshape", qkv, split),
                                     perm=[2, 0, 3, 1, 4]), num_outputs=3, outputs=3)
        q, k, v = (g.op("Squeeze", t, g.const([0])) for t in (q, k, v))  # (1, heads, n, d)
        scores = g.op("Softmax", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2])),
                      axis=-1)
        context = g.op("Reshape", g.op("Transpose", g.op("MatMul", scores, v), perm=[0, 2, 1, 3]),
                       g.const([0, 0, hidden]))
        a = g.norm(g.op("Add", g.dense(context, [p + "attention.output.dense"]), x),
                   p + "attention.output.LayerNorm", eps)
        inner = g.op("Gelu", g.dense(a, [p + "intermediate.dense"]), approximate="none")
        x = g.norm(g.op("Add", g.dense(inner, [p + "output.dense"]), a),
                   p + "output.LayerNorm", eps)
    g.op("LpNormalization", g.op("ReduceMean", x, g.const([1]), keepdims=0), axis=-1, p=2,
         name="vector")


class _Builder:
    """Nodes and initializers of one ONNX graph; `op` returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights, self.nodes, self.inits = weights, [], []
        self.consts: dict[tuple[int, ...], str] = {}  # an axis list used by every layer: once
        from onnx import helper, numpy_helper  # deferred: onnx, ~0.5 s to import
        self.helper, self.numpy_helper = helper, numpy_helper

    def op(self, kind: str, *inputs: str, outputs: int = 1, name: str | None = None,
           **attributes):
        names = [name or f"{kind}_{len(self.nodes)}_{j}" for j in range(outputs)]
        self.nodes.append(self.helper.make_node(kind, list(inputs), names, **attributes))
        return names[0] if outputs == 1 else names

    def init(self, array: np.ndarray) -> str:
        name = f"w{len(self.inits)}"
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, values: list[int]) -> str:
        key = tuple(values)
        if key not in self.consts:
            self.consts[key] = self.init(np.array(values, dtype=np.int64))
        return self.consts[key]

    def w(self, name: str, row: int | None = None) -> str:
        return self.init(self.weights[name] if row is None else self.weights[name][row])

    def dense(self, x: str, names: list[str], scale0: float = 1.0) -> str:
        """x @ W + b of the named torch Linear layers, side by side (the first scaled)."""
        factors = [scale0] + [1.0] * (len(names) - 1)
        weight = np.concatenate([self.weights[f"{n}.weight"].T * np.float32(f)
                                 for n, f in zip(names, factors, strict=True)], axis=1)
        bias = np.concatenate([self.weights[f"{n}.bias"] * np.float32(f)
                               for n, f in zip(names, factors, strict=True)])
        return self.op("Add", self.op("MatMul", x, self.init(weight)), self.init(bias))

    def norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op("LayerNormalization", x, self.w(prefix + ".weight"),
                       self.w(prefix + ".bias"), axis=-1, epsilon=eps)

    def model(self, hidden: int, title: str = "all-MiniLM-L6-v2",
              embeds: bool = False) -> onnx.ModelProto:
        """The finished model; its input is input_ids (1, n) int64, or with `embeds` the
        embedded tokens "embeds" (1, n, hidden) float32."""
        from onnx import TensorProto  # deferred: onnx, ~0.5 s to import
        h = self.helper
        source = (h.make_tensor_value_info("embeds", TensorProto.FLOAT, [1, "n", hidden])
                  if embeds else h.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "n"]))
        graph = h.make_graph(
            self.nodes, title, [source],
            [h.make_tensor_value_info("vector", TensorProto.FLOAT, [1, hidden])],
            self.inits)
        return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)
