"""Speed of ragkit's BM25 against rank-bm25 0.2.2 BM25Okapi, with identical scores.

Run:  PYTHONPATH=. python benchmarks/bench_bm25.py [--docs 20000 --queries 1000 --ref-queries 50]
A seeded synthetic corpus: a Zipfian vocabulary (exponent 1.1 over 50,000 terms), document
lengths log-normal around 120 tokens, queries of 2–8 terms drawn from the same law. Both
libraries index the same token lists. rank-bm25 loops in Python over every document per
query term, so it runs only the first `--ref-queries` queries and its per-query time is
extrapolated to the whole set (said in the output). Every compared query must give the same
scores (np.array_equal for `scores`, and the same ranking from `search_many`), or the
script fails.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from rank_bm25 import BM25Okapi

from ragkit.dense import top_k
from ragkit.lexical import BM25


def make_corpus(n_docs: int, n_queries: int, vocab: int = 50_000, seed: int = 0):
    """Token lists for documents and queries; term ranks follow Zipf(1.1)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.1
    weights /= weights.sum()
    lengths = np.clip(rng.lognormal(np.log(120), 0.5, n_docs).astype(int), 5, 1_000)
    terms = rng.choice(vocab, size=lengths.sum(), p=weights)
    names = np.array([f"w{i}" for i in range(vocab)], dtype=object)
    bounds = np.cumsum(lengths)[:-1]
    docs = [list(part) for part in np.split(names[terms], bounds)]
    q_len = rng.integers(2, 9, n_queries)
    q_terms = names[rng.choice(vocab, size=q_len.sum(), p=weights)]
    queries = [list(part) for part in np.split(q_terms, np.cumsum(q_len)[:-1])]
    return docs, queries


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--ref-queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)

    docs, queries = make_corpus(args.docs, args.queries)
    n_tokens = sum(map(len, docs))
    print(f"corpus: {len(docs):,} docs, {n_tokens:,} tokens; {len(queries):,} queries, k={args.k}")

    ref, ref_fit = timed(lambda: BM25Okapi(docs))
    ours, our_fit = timed(lambda: BM25.fit_tokens(docs))
    print(f"index   rank-bm25 {ref_fit:7.2f} s   ragkit {our_fit:7.2f} s   "
          f"({ref_fit / our_fit:.1f}x)")

    sample = queries[: args.ref_queries]
    ref_scores, ref_time = timed(lambda: [ref.get_scores(q) for q in sample])
    our_scores, our_time = timed(lambda: [ours.scores(q) for q in sample])
    mismatched = sum(not np.array_equal(a, b) for a, b in zip(ref_scores, our_scores))
    assert mismatched == 0, f"{mismatched} of {len(sample)} queries score differently"
    ref_top = [top_k(s, args.k) for s in ref_scores]

    _, one_time = timed(lambda: [ours.search(q, args.k) for q in queries])
    many, many_time = timed(lambda: ours.search_many(queries, args.k))
    for (ri, rs), (oi, os_) in zip(ref_top, many):
        assert np.array_equal(rs, os_), "search_many scores differ"
        assert np.array_equal(ri, oi), "search_many ranking differs"

    ref_per_q = ref_time / len(sample)
    rows = [
        ("rank-bm25 get_scores", ref_per_q, f"measured on {len(sample)} queries, "
         f"extrapolated: {ref_per_q * len(queries):.1f} s for {len(queries)}"),
        ("ragkit scores", our_time / len(sample), f"same {len(sample)} queries, bit-identical"),
        ("ragkit search", one_time / len(queries), f"all {len(queries)} queries, one at a time"),
        ("ragkit search_many", many_time / len(queries), f"all {len(queries)} queries, one call"),
    ]
    print(f"\n{'method':<22} {'ms/query':>9} {'queries/s':>10} {'speed-up':>9}")
    for name, per_q, note in rows:
        print(f"{name:<22} {per_q * 1e3:9.3f} {1 / per_q:10.0f} {ref_per_q / per_q:8.0f}x  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
