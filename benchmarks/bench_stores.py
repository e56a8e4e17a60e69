"""The memory store against Milvus Lite on generated chunks: build, memory, latency, agreement.

Run:  PYTHONPATH=. python benchmarks/bench_stores.py [--sizes 100000,1000000 --queries 200]
          [--hnsw] [--ivf] [--no-flat]
A seeded synthetic corpus: chunks of 20–80 words from a Zipfian vocabulary (exponent 1.1 over
50,000 made-up words), one 64-d unit vector per chunk (random), queries of 2–6 words from the
same law and query vectors that are noisy copies of random chunks' vectors. Each size runs
in its own process: the in-memory index (BM25 fit + DenseIndex), then the same index written
to Milvus Lite (`--store milvus`, FLAT) and, when `--hnsw`, again with HNSW.

Reported per store: index time (build, or upload to Milvus), user+sys CPU of this process
and of the Milvus Lite server process, peak RSS of each (ru_maxrss / the server's VmHWM),
per-query latency p50/p95 (one query at a time) for BM25 and dense, and top-10 agreement
with the memory store: ragkit BM25 as sparse vectors (a) and dense FLAT must be 1.000;
Milvus's built-in BM25 function (b), HNSW and IVF_FLAT are measured against exact.
`batched ms/query` is BM25 + dense of all queries in one call each (requests of 64).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_corpus(n: int, n_queries: int, dim: int = 64, vocab: int = 50_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.1
    weights /= weights.sum()
    names = np.array([f"w{i}" for i in range(vocab)], dtype=object)
    lengths = rng.integers(20, 81, n)
    words = names[rng.choice(vocab, size=int(lengths.sum()), p=weights)]
    texts = [" ".join(p) for p in np.split(words, np.cumsum(lengths)[:-1])]
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q_len = rng.integers(2, 7, n_queries)
    q_words = names[rng.choice(vocab, size=int(q_len.sum()), p=weights)]
    queries = [" ".join(p) for p in np.split(q_words, np.cumsum(q_len)[:-1])]
    q_vec = vectors[rng.integers(0, n, n_queries)] + 0.5 * rng.standard_normal(
        (n_queries, dim)).astype(np.float32) / np.sqrt(dim)
    q_vec /= np.linalg.norm(q_vec, axis=1, keepdims=True)
    return texts, vectors, queries, q_vec.astype(np.float32)


class VectorEmbedder:
    """Gives back the precomputed query vectors (the corpus's vectors are given directly)."""
    name, max_tokens, fingerprint = "bench-vectors", 512, "bench-vectors-1"

    def __init__(self, dim: int, queries: list[str], vectors: np.ndarray) -> None:
        self.dim, self.by_text = dim, dict(zip(queries, vectors))

    def embed(self, texts, *, input_type="document", progress=False):
        return np.stack([self.by_text[t] for t in texts])


def latencies(fn, items) -> tuple[list, np.ndarray]:
    out, times = [], []
    for item in items:
        t = time.perf_counter()
        out.append(fn(item))
        times.append(time.perf_counter() - t)
    return out, np.array(times) * 1000


def agreement(a: list, b: list, k: int = 10) -> float:
    """Mean |top-k(a) ∩ top-k(b)| / k over queries (with fewer than k in a: over |a|)."""
    vals = [len({i for i, _ in x[:k]} & {i for i, _ in y[:k]}) / max(1, min(k, len(x)))
            for x, y in zip(a, b) if x]
    return float(np.mean(vals)) if vals else float("nan")


def usage() -> tuple[float, float]:
    """(user+sys CPU s, peak RSS MB) of this process (Milvus Lite runs inside it)."""
    t = os.times()
    return t.user + t.system, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(n: int, n_queries: int):
    from ragkit.dense import DenseIndex
    from ragkit.documents import Chunk
    from ragkit.index_folder import embedder_record
    from ragkit.lexical import BM25
    from ragkit.pipeline import IndexConfig, Pipeline
    texts, vectors, queries, q_vec = make_corpus(n, n_queries)
    embedder = VectorEmbedder(vectors.shape[1], queries, q_vec)
    chunks = [Chunk(f"c{i}", f"d{i // 10}", t) for i, t in enumerate(texts)]
    bm25 = BM25.fit(texts, tokenizer="words")
    config = IndexConfig(embedder="bench-vectors", contextualizer="none", tokenizer="words")
    pipeline = Pipeline(config, chunks, bm25, DenseIndex(vectors, np.arange(n)), embedder,
                        embedder_record(embedder))
    return pipeline, queries, q_vec, embedder


def measure(store, queries, q_vec) -> dict:
    b, lat_b = latencies(lambda q: store.bm25([q], 10)[0], queries)
    d, lat_d = latencies(lambda v: store.dense(v[None], 10)[0], q_vec)
    return {"bm25": b, "dense": d, "bm25 p50": np.median(lat_b),
            "bm25 p95": np.percentile(lat_b, 95), "dense p50": np.median(lat_d),
            "dense p95": np.percentile(lat_d, 95)}


def run_case(case: str, n: int, n_queries: int, work: Path) -> dict:
    """One process per case, so each peak RSS is that case's own."""
    from ragkit.pipeline import Pipeline
    from ragkit.stores import StoreSpec
    t0 = time.perf_counter()
    if case.startswith("query-"):  # open a Milvus index written by the index- case, search
        index = case.split("-", 1)[1]
        texts, vectors, queries, q_vec = make_corpus(n, n_queries)
        embedder = VectorEmbedder(vectors.shape[1], queries, q_vec)
        store = Pipeline.load(work / index, embedder=embedder).store
        open_s = time.perf_counter() - t0
        got = measure(store, queries, q_vec)
        builtin, lat = latencies(lambda q: store.builtin_bm25([q], 10)[0], queries)
        t = time.perf_counter()  # all queries in one call: the store batches requests
        store.bm25(queries, 10), store.dense(q_vec, 10)
        batched = (time.perf_counter() - t) * 1000 / (2 * len(queries))
        exact = json.loads((work / "exact.json").read_text())
        cpu, rss = usage()
        return {"case": f"milvus-lite {index}: open + search", "s": open_s, "cpu s": cpu,
                "rss MB": rss, **{k: v for k, v in got.items() if " " in k},
                "bm25 agree": agreement(exact["bm25"], got["bm25"]),
                "dense agree": agreement(exact["dense"], got["dense"]),
                "builtin agree": agreement(exact["bm25"], builtin),
                "builtin p50": np.median(lat), "batched ms/query": batched}
    pipeline, queries, q_vec, _ = build(n, n_queries)
    build_s = time.perf_counter() - t0
    if case == "memory":
        got = measure(pipeline.store, queries, q_vec)
        (work / "exact.json").write_text(json.dumps({"bm25": got["bm25"],
                                                     "dense": got["dense"]}))
        cpu, rss = usage()
        return {"case": "memory: build + search", "s": build_s, "cpu s": cpu, "rss MB": rss,
                **{k: v for k, v in got.items() if " " in k}}
    index = case.split("-", 1)[1]
    t1 = time.perf_counter()
    pipeline.save(work / index, StoreSpec("milvus", None, index), progress=False)
    cpu, rss = usage()
    return {"case": f"milvus-lite {index}: build + upload", "s": time.perf_counter() - t0,
            "upload s": time.perf_counter() - t1, "cpu s": cpu, "rss MB": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated chunk counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw", action="store_true", help="also measure Milvus HNSW")
    parser.add_argument("--ivf", action="store_true", help="also measure Milvus IVF_FLAT")
    parser.add_argument("--no-flat", action="store_true",
                        help="leave out Milvus FLAT (its upload is most of a 1M run)")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # child: one case
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        row = run_case(args.case, args.size, args.queries, args.work)
        print(json.dumps({"size": args.size, **row}, default=float))
        return
    indexes = ["FLAT"] * (not args.no_flat) + ["HNSW"] * args.hnsw + ["IVF_FLAT"] * args.ivf
    cases = ["memory"] + [f"{w}-{i}" for i in indexes for w in ("index", "query")]
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="bench_stores_"))
        for case in cases:
            cmd = [sys.executable, __file__, "--case", case, "--size", str(n), "--queries",
                   str(args.queries), "--work", str(work)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            print(rows[-1], file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    import pandas as pd
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep=""))
    print(f"\n{os.cpu_count()} cores; s = wall seconds of the case; cpu s = user+sys of its "
          f"process (Milvus Lite runs in-process); latencies in ms per query, one query at a "
          f"time, top 10; agreement = mean top-10 overlap with the memory store")


if __name__ == "__main__":
    main()
