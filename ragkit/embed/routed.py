"""The offline default embedder, `auto`: MiniLM for most text, USE multilingual for Hangul.

What it is: `ScriptRouted(latin, hangul)` sends every text containing Hangul to `hangul`
(USE multilingual v3) and every other text to `latin` (all-MiniLM-L6-v2) — the same rule as
the `auto` BM25 tokenizer. The two models live in separate blocks of one vector
(MiniLM in the first 384 dimensions, USE in the next 512, zeros elsewhere), so a Hangul
question is compared only with Hangul chunks and an English one only with the rest; each
block is L2-normalised, so every row is a unit vector and cosine scores stay in [-1, 1].

Why (benchmarks/bench_embedders.py; Pass@5, shipped data dev + test, per question kind):
MiniLM is English-only — dense Korean 45.7 (MRR 0.296) — while USE reaches 91.4 (0.756),
and `auto` 94.3 (0.767; hybrid MRR 0.967 vs MiniLM's 0.860), since English chunks no longer
compete for Korean questions. But USE alone is worse than MiniLM on English lexical (76.7 vs
100), paraphrase (65.2 vs 87.0) and code (85.0 vs 92.5) questions, and on the cookbook's code
corpus (dense 64.4 vs 73.3, hybrid 75.9 vs 82.7). USE does rank the shipped English
"contextual" questions better (dense 83.0 vs 62.3), which is why USE-everywhere edges out
`auto` in shipped hybrid Pass@5 (91.6 vs 90.2); it loses 6.8 points on the cookbook, so the
default that holds on both routes by script. On text without Hangul, `auto` is MiniLM.

What it is not: cross-lingual. A Korean question never scores an English chunk above 0
(and vice versa); use `use-multilingual` alone for that.

Limits: the USE model is loaded only when the first Hangul text arrives, so English-only
corpora pay nothing for it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")  # as ragkit.lexical


class ScriptRouted:
    """Hangul text → `hangul()`, other text → `latin`, in one block vector (module docstring)."""

    def __init__(self, latin, hangul: Callable[[], object], *, dim: int, name: str,
                 fingerprint: str | None = None) -> None:
        """`hangul` builds the Hangul model on first use; `dim`, `name` and `fingerprint`
        describe it without loading it."""
        self.latin, self._make_hangul, self._hangul = latin, hangul, None
        self.name = f"auto({latin.name}|{name})"
        self.fingerprint = (f"auto({getattr(latin, 'fingerprint', latin.name)}|"
                            f"{fingerprint or name})")
        self.dim = latin.dim + dim
        self.max_tokens = latin.max_tokens

    @property
    def hangul(self):
        if self._hangul is None:
            self._hangul = self._make_hangul()
        return self._hangul

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the tokens of the model it is routed to, as it counts
        against `max_tokens`: a model that never truncates (USE: `truncates = False`)
        reports at most `max_tokens`, so callers never split its texts to fit."""
        out = [0] * len(texts)
        for rows, model in self._routes(texts):
            cap = None if getattr(model, "truncates", True) else self.max_tokens
            for i, n in zip(rows, model.token_lengths([texts[i] for i in rows]), strict=True):
                out[i] = n if cap is None else min(n, cap)
        return out

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32 unit rows: MiniLM block or USE block, never both."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows, model in self._routes(texts):
            block = slice(0, self.latin.dim) if model is self.latin else slice(self.latin.dim, None)
            out[rows, block] = model.embed([texts[i] for i in rows], input_type=input_type,
                                           progress=progress)
        return out

    def _routes(self, texts: Sequence[str]) -> list[tuple[list[int], object]]:
        """(rows, model) pairs; the Hangul model is loaded only if some text needs it."""
        hangul = [i for i, t in enumerate(texts) if HANGUL.search(t)]
        other = [i for i, t in enumerate(texts) if not HANGUL.search(t)]
        routes: list[tuple[list[int], object]] = [(other, self.latin)] if other else []
        if hangul:
            routes.append((hangul, self.hangul))
        return routes
