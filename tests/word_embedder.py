"""A tiny deterministic embedder for tests: one dimension per listed word, counts, L2-normed.

Words outside the list only touch a last "other" dimension with weight 1e-3, so a text of
unknown words is (almost) orthogonal to every text of listed words, and cosines are easy to
compute by hand: "reset button" vs "gateway reset button" = 2 / (√2 · √3) ≈ 0.816.
"""
from __future__ import annotations

import re

import numpy as np


class WordEmbedder:
    name, max_tokens, fingerprint = "word-test", 512, "word-test-1"

    def __init__(self, words: list[str]) -> None:
        self.words = {w: i for i, w in enumerate(words)}
        self.dim = len(words) + 1
        self.calls = 0

    def embed(self, texts, *, input_type="document", progress=False) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, -1] = 1e-3
            for word in re.findall(r"\w+", text.lower()):
                if word in self.words:
                    out[row, self.words[word]] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def token_lengths(self, texts) -> list[int]:
        return [len(re.findall(r"\w+", t)) for t in texts]
