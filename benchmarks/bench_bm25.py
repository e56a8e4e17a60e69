"""ragkit's exact BM25 beside its peers: rank-bm25, rank-bm25-rs, bm25s and tantivy.

Run:  PYTHONPATH=. python benchmarks/bench_bm25.py [--docs 20000 --queries 1000 --k 20]
      PYTHONPATH=. python benchmarks/bench_bm25.py --docs 1000000 --lengths 20,60   (minutes)
A seeded synthetic corpus: words drawn from a Zipf law (exponent 1.07 over 50,000 terms),
documents of a uniform number of words (--lengths, 40-160 by default), queries of 2-6
words drawn uniformly from the terms ranked 20 to 5,000. Every system indexes the same
lowercase token lists, in this process; queries run one at a time on one thread, each
system in turn for --rounds rounds, and the median round is reported.

- rank-bm25 0.2.2 `BM25Okapi` (pure Python) runs only --ref-queries queries, extrapolated,
  and only up to 200,000 documents (its index takes minutes and gigabytes beyond);
- rank-bm25-rs (Rust, the same scores bit for bit): `get_scores` and an exact top k, the
  reference of the ratios;
- bm25s (`method="robertson"`: rank-bm25's formula) `retrieve`, one thread;
- tantivy, an engine: Lucene's BM25 (another idf, no floor), so only its overlap@k with
  ragkit's top k compares, not its scores.
A peer that is not installed is skipped with one line (`pip install -e '.[dev]'` installs
rank-bm25-rs and tantivy; bm25s is not a dependency). The script fails unless ragkit's
scores equal rank-bm25's and rank-bm25-rs's bit for bit on the compared queries and
search_many equals search.
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time

import numpy as np

from ragkit.lexical import BM25


def make_corpus(n_docs: int, n_queries: int, lengths: tuple[int, int] = (40, 160),
                vocab: int = 50_000, seed: int = 7):
    """Token lists for documents and queries (see the module docstring)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.07
    p /= p.sum()
    names = np.array([f"w{i}" for i in range(vocab)], dtype=object)
    sizes = rng.integers(lengths[0], lengths[1] + 1, n_docs)
    docs: list[list[str]] = []
    for lo in range(0, n_docs, 100_000):  # blocks keep the term-id array small
        part = sizes[lo:lo + 100_000]
        words = names[rng.choice(vocab, size=int(part.sum()), p=p)]
        docs += [list(doc) for doc in np.split(words, np.cumsum(part)[:-1])]
    q_sizes = rng.integers(2, 7, n_queries)
    q_words = names[rng.integers(20, 5000, int(q_sizes.sum()))]
    return docs, [list(q) for q in np.split(q_words, np.cumsum(q_sizes)[:-1])]


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def top_k_of(scores: np.ndarray, k: int) -> np.ndarray:
    """The k best documents of a full score vector with a score > 0: score descending,
    ties to the lower index (ragkit's order; a document without a query term scores 0)."""
    kth = -np.partition(-scores, k - 1)[k - 1] if k < scores.size else -np.inf
    cand = np.flatnonzero(scores >= kth)
    cand = cand[np.lexsort((cand, -scores[cand]))][:k]
    return cand[scores[cand] > 0]


def optional(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        print(f"{name}: not installed, skipped")
        return None


class Peers:
    """Each available system's build (timed) and its one-query-at-a-time run."""

    def __init__(self, docs, texts, k: int, with_rank_bm25: bool) -> None:
        self.runs, self.builds, self.k = {}, {}, k
        ours, self.builds["ragkit"] = timed(lambda: BM25.fit_tokens(docs))
        self.ours = ours
        self.runs["ragkit"] = lambda qs: [i for i, _ in ours.search_many(qs, k)]
        self.rs = self._add("rank_bm25_rs", "rank-bm25-rs", lambda m: m.BM25Okapi(docs), "rs")
        self.ref = (self._add("rank_bm25", "rank-bm25", lambda m: m.BM25Okapi(docs), None)
                    if with_rank_bm25 else None)
        self._add("bm25s", "bm25s", lambda m: self._bm25s(m, docs), None)
        self._add("tantivy", "tantivy", lambda m: self._tantivy(m, texts), None)

    def _add(self, module: str, label: str, build, kind):
        lib = optional(module)
        if lib is None:
            return None
        model, self.builds[label] = timed(lambda: build(lib))
        if kind == "rs":
            self.runs[label] = lambda qs: [top_k_of(model.get_scores(q), self.k) for q in qs]
        return model

    def _bm25s(self, lib, docs):
        model = lib.BM25(method="robertson", k1=1.5, b=0.75)
        model.index(docs, show_progress=False)
        self.runs["bm25s"] = lambda qs: list(model.retrieve(
            qs, k=self.k, show_progress=False, n_threads=1)[0])
        return model

    def _tantivy(self, lib, texts):
        builder = lib.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="ws", index_option="freq")
        schema = builder.build()
        index = lib.Index(schema)  # in memory
        index.register_tokenizer("ws", lib.TextAnalyzerBuilder(lib.Tokenizer.whitespace())
                                 .filter(lib.Filter.lowercase()).build())
        writer = index.writer(heap_size=256_000_000, num_threads=1)
        for text in texts:
            writer.add_document(lib.Document(body=text))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()
        assert searcher.num_segments == 1  # documents numbered in insertion order
        query, should = lib.Query, lib.Occur.Should

        def one(q):
            terms = [(should, query.term_query(schema, "body", w, index_option="freq")) for w in q]
            hits = searcher.search(query.boolean_query(terms), self.k, count=False).hits
            return np.array([address.doc for _, address in hits], dtype=np.int64)

        self.runs["tantivy"] = lambda qs: [one(q) for q in qs]
        return index


def check_scores(peers: Peers, queries, sample: list, k: int) -> None:
    """Bit-identical scores against rank-bm25 (sample) and rank-bm25-rs (all queries); the
    same top k from search_many and search."""
    ours = peers.ours
    if peers.ref is not None:
        bad = sum(not np.array_equal(peers.ref.get_scores(q), ours.scores(q)) for q in sample)
        assert bad == 0, f"{bad} of {len(sample)} queries score differently from rank-bm25"
    if peers.rs is not None:
        bad = sum(not np.array_equal(peers.rs.get_scores(q), ours.scores(q)) for q in queries)
        assert bad == 0, f"{bad} of {len(queries)} queries score differently from rank-bm25-rs"
    many = ours.search_many(queries, k)
    for q, (idx, vals) in zip(queries, many):
        one = ours.search(q, k)
        assert np.array_equal(idx, one[0]) and np.array_equal(vals, one[1]), q


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--lengths", default="40,160", help="words per document: min,max")
    parser.add_argument("--ref-queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args(argv)
    low, high = map(int, args.lengths.split(","))
    docs, queries = make_corpus(args.docs, args.queries, (low, high))
    texts = [" ".join(doc) for doc in docs]
    print(f"corpus: {len(docs):,} docs, {sum(map(len, docs)):,} tokens; "
          f"{len(queries):,} queries, top {args.k}")
    with_ref = args.docs <= 200_000
    if not with_ref:
        print("rank-bm25: skipped above 200,000 documents (minutes and gigabytes to index)")
    peers = Peers(docs, texts, args.k, with_ref)
    sample = queries[:args.ref_queries]
    check_scores(peers, queries, sample, args.k)

    times: dict[str, list[float]] = {name: [] for name in peers.runs}
    tops: dict[str, list] = {}
    for name, run in peers.runs.items():
        run(queries[:50])  # warm-up
    for _ in range(args.rounds):  # systems in turn, round after round
        for name, run in peers.runs.items():
            tops[name], seconds = timed(lambda: run(queries))
            times[name].append(seconds / len(queries))
    per_query = {name: statistics.median(t) for name, t in times.items()}
    if peers.ref is not None:
        _, seconds = timed(lambda: [peers.ref.get_scores(q) for q in sample])
        per_query["rank-bm25"] = seconds / len(sample)
    report(per_query, peers.builds, tops, args.k)
    return 0


def report(per_query: dict, builds: dict, tops: dict, k: int) -> None:
    base = per_query.get("rank-bm25-rs")
    print(f"\n{'system':<14} {'build s':>8} {'ms/query':>9} {'vs rs':>7}  note")
    for name in ("ragkit", "rank-bm25-rs", "bm25s", "tantivy", "rank-bm25"):
        if name not in per_query:
            continue
        ratio = f"{per_query[name] / base:6.2f}x" if base else "      -"
        note = {"ragkit": "search_many, exact (rank-bm25's scores)",
                "rank-bm25-rs": "get_scores + exact top k, the same scores",
                "bm25s": "retrieve, 1 thread, Robertson idf (not floored)",
                "rank-bm25": "get_scores on --ref-queries queries, extrapolated",
                "tantivy": "Lucene's BM25 (other idf)"}[name]
        if name in tops and name != "ragkit":
            same = np.mean([len(set(a.tolist()) & set(b.tolist())) / max(len(b), 1)
                            for a, b in zip(tops[name], tops["ragkit"])])
            note += f"; overlap@{k} with ragkit {same:.1%}"
        print(f"{name:<14} {builds.get(name, float('nan')):8.2f} "
              f"{per_query[name] * 1e3:9.3f} {ratio}  {note}")


if __name__ == "__main__":
    sys.exit(main())
