"""Dense exact top-k: ragkit's DenseIndex against bare numpy, same data, same answers.

Run: python benchmarks/bench_dense.py [n_vectors] — prints time per query batch and the ratio
ragkit / numpy (1.0 = as fast as a bare matrix product + argpartition).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from ragkit.dense import DenseIndex


def _unit(rng: np.random.Generator, n: int, dim: int = 384) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def bare_numpy(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ vectors.T
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(n: int = 100_000, n_queries: int = 1_000, k: int = 20) -> None:
    rng = np.random.default_rng(0)
    vectors, queries = _unit(rng, n), _unit(rng, n_queries)
    index = DenseIndex(vectors, np.arange(n))
    ours = np.stack([idx for idx, _ in index.search(queries, k)])
    assert np.array_equal(ours, bare_numpy(vectors, queries, k)), "different top-k"
    t_np = best_of(lambda: bare_numpy(vectors, queries, k))
    t_us = best_of(lambda: index.search(queries, k))
    print(f"{n:,} vectors × {n_queries:,} queries, k={k}")
    print(f"  bare numpy      {t_np * 1000 / n_queries:7.3f} ms/query")
    print(f"  ragkit dense    {t_us * 1000 / n_queries:7.3f} ms/query   ratio {t_us / t_np:.2f}")
    owners = np.repeat(np.arange(n // 4), 4)  # MaxP: 4 windows per chunk
    maxp = DenseIndex(vectors, owners)
    t_maxp = best_of(lambda: maxp.search(queries, k))
    print(f"  ragkit MaxP (4 windows/chunk) {t_maxp * 1000 / n_queries:7.3f} ms/query   "
          f"ratio {t_maxp / t_np:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
