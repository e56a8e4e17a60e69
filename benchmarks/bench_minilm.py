"""Throughput of ragkit's all-MiniLM-L6-v2 (ONNX Runtime) against sentence-transformers (torch).

Run: `python benchmarks/bench_minilm.py [--n 737] [--repeat 3] [--max-chars 400]`. Texts are
the cookbook's 737 code chunks when ../shared/data/cookbook is present, else generated English
sentences.
The torch comparison (speed ratio and parity) is skipped when torch or sentence-transformers
is not importable; they are never dependencies of ragkit. Timings are the best of `--repeat`
interleaved runs; other processes on the machine distort them (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from ragkit.embed.minilm import MiniLM

COOKBOOK = Path(__file__).resolve().parents[2] / "shared/data/cookbook/codebase_chunks.json"


def load_texts(n: int) -> list[str]:
    if COOKBOOK.is_file():
        chunks = [c["content"] for d in json.loads(COOKBOOK.read_text()) for c in d["chunks"]]
        return chunks[:n]
    rng = np.random.default_rng(0)
    words = ("the retrieval model ranks chunks of long documents by their cosine similarity "
             "to a question and fuses the result with bm25 scores").split()
    return [" ".join(rng.choice(words, size=k)) for k in rng.integers(5, 200, size=n)]


def best_time(fn, repeat: int) -> tuple[float, np.ndarray]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def torch_encoder(folder: Path):
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        print(f"torch comparison skipped: {err}")
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = SentenceTransformer(str(folder), device="cpu")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    return lambda texts: model.encode(texts, batch_size=32, convert_to_numpy=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=737)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-chars", type=int, default=None, help="cut texts (short windows)")
    args = parser.parse_args()
    texts = [t[:args.max_chars] for t in load_texts(args.n)]
    ours = MiniLM()
    tokens = [min(k, ours.max_tokens) for k in ours.token_lengths(texts)]
    print(f"{len(texts)} texts, mean {np.mean(tokens):.0f} word-pieces (truncated at 256); "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    theirs = torch_encoder(ours.folder)
    ours.embed(texts[:8])
    t_np, v_np = best_time(lambda: ours.embed(texts), args.repeat)
    print(f"ragkit MiniLM (ORT)   {len(texts) / t_np:8.1f} texts/s  ({t_np:.2f} s)")
    if theirs is None:
        return
    theirs(texts[:8])
    t_pt, v_pt = best_time(lambda: theirs(texts), args.repeat)
    print(f"sentence-transformers {len(texts) / t_pt:8.1f} texts/s  ({t_pt:.2f} s)")
    print(f"ragkit time / torch time = {t_np / t_pt:.2f}")
    cos = (v_np * v_pt).sum(axis=1)
    print(f"parity: max abs diff {np.abs(v_np - v_pt).max():.2e}, min cosine {cos.min():.7f}")


if __name__ == "__main__":
    main()
