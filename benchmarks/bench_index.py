"""`ragkit index --embedder none` at 100k and 1M generated chunks: stages, memory, queries.

Run:  PYTHONPATH=. python benchmarks/bench_index.py [--chunks 100000 1000000] [--queries 1000]
          [--previous /path/to/older/checkout --previous-max 100000] [--open] [--dense 1000000]
      PYTHONPATH=. python benchmarks/bench_index.py --open-of INDEX --corpus DOCS.jsonl

`--open` (and `--open-of` for an index already built from a gen_corpus.py corpus) adds, per
size, whole `ragkit search` processes — one BM25 query and `--queries` of them, top 20 — with
their peak RSS, the open time and resident memory before the first query, the same searches
on the index seen in the older format (every row read at open) with the runs compared byte
for byte, and tantivy (the Python bindings, when installed) on the same corpus and queries
as the reference: its open time and per-query latency (benchmarks/index_open.py). `--dense N`
times the exact dense scan over N memory-mapped 384-d vectors, per query.

For each size: a seeded corpus (benchmarks/gen_corpus.py, one chunk per document) in a
temporary folder; `ragkit index` run as a child process, timed for wall and user+sys CPU time
(its tokenizing workers included) with its peak RSS (`os.wait4`); the same build again in a child, stage by stage (read, chunk,
contextualize, BM25 tokenize + fit, save; CPU seconds); then the index is loaded (timed) and
`--queries` generated queries (2–6 words, same Zipf law) are searched one at a time, BM25 mode,
top 10, giving p50/p95 latency. `--latency-of DIR` times only the queries, top 10 and top 150,
the two-pass scan (`ragkit.lexical.bm25_scan`) and the exhaustive bincount path
(`BM25.exhaustive`, the reference) taking turns pass by pass (two passes each), after one
warm-up pass (the first long query builds the dense float32 rows), and prints the peak RSS and the dense rows
the search keeps in memory.

References measured in the same run, printed as ratios: rank-bm25 0.2.2 `BM25Okapi` fitted on
a 20k-document slice against ragkit's `BM25.fit` on the same slice (same tokens), and, with
`--previous DIR` (a checkout whose `ragkit/` is an older version), that version's `ragkit
index` on the same corpus. CPU time, not wall time, is the fair measure on a shared machine.

`ragkit index` here takes the block build (`ragkit.bulk_index`: blocks of 25k lines parsed,
chunked, contextualized and tokenized in two workers); the stages are those of the in-memory
`Pipeline.build` path. Measured 1 December 2026 under load average ~4 from other jobs: 1M
chunks 97.7 s user+sys, 1 min 40 s wall, 1.06 GB peak RSS (the previous commit: 146.2 s,
4 min 40 s at load 6.5, 2.90 GB); 100k chunks 12.2 s, 12.8 s, 312 MB (before: 16.1 s,
24.3 s, 498 MB); back to back at load ~4, 1M: 106.4 s, 2 min 2 s, 1.02 GB against the
previous commit's 114.3 s, 2 min 4 s, 2.91 GB. See README's "Block build".
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import gen_corpus  # noqa: E402
import index_open  # noqa: E402


def run_child(argv: list[str], pythonpath: Path) -> dict:
    """Run a Python child: its wall time, user+sys CPU seconds and peak RSS (MB) from
    `os.wait4` (that child alone), and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "TQDM_DISABLE": "1"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=out, stderr=err,
                                text=True, cwd=pythonpath)  # `-m` puts the cwd first
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if proc.returncode:
            raise SystemExit(f"{' '.join(argv)} failed:\n{err.read()}")
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                "rss_mb": usage.ru_maxrss / 1024, "out": out.read()}


STAGES = """
import json, sys, time
from ragkit.chunking import ChunkerConfig, chunk_document
from ragkit.contextualize import get_contextualizer
from ragkit.datasets import load_dataset
from ragkit.index_folder import write_index
from ragkit.lexical import BM25
times, last = {}, time.process_time()
def lap(name):
    global last
    now = time.process_time(); times[name] = now - last; last = now
data = load_dataset(sys.argv[1]); lap("read")
config = ChunkerConfig()
pairs = [(d, chunk_document(d, config)) for d in data.documents]; lap("chunk")
contextualize = get_contextualizer("structural")
chunks = [c for d, cs in pairs for c in contextualize(d, cs)]; del pairs; lap("contextualize")
bm25 = BM25.fit((c.indexed_text for c in chunks), tokenizer="auto"); lap("bm25 fit")
write_index(sys.argv[2], {"config": {}}, chunks, bm25, None); lap("save")
print(json.dumps(times))
"""


_LOADED: dict = {}
ROUNDS = 2  # passes over the queries per setting, taking turns


def latency(index: Path, texts: list[str], k: int = 10) -> dict:
    """Load time of `index`, and p50/p95 of one-at-a-time BM25 searches."""
    return latencies(index, texts, k, (False,))[False]


def latencies(index: Path, texts: list[str], k: int, settings=(False, True)) -> dict:
    """Load time of `index`, and per `BM25.exhaustive` setting p50/p95 (wall and CPU) of
    one-at-a-time BM25-mode searches (top `k`, ties extended): each setting runs all the
    queries in turn, ROUNDS times, so a shared machine's load falls on them alike and each
    path runs with its own data in the caches, as a server running it would."""
    from ragkit.pipeline import Pipeline, SearchConfig
    if index not in _LOADED:  # each index is loaded (and timed) once
        start = time.perf_counter()
        _LOADED.clear()
        _LOADED[index] = Pipeline.load(index), time.perf_counter() - start
    pipeline, load = _LOADED[index]
    config = SearchConfig(mode="bm25")
    times = {setting: ([], []) for setting in settings}
    pipeline.search(texts, k, config)  # warm the mapped arrays' pages and the dense rows
    for _ in range(ROUNDS):
        for setting, (wall, cpu) in times.items():
            pipeline.bm25.exhaustive = setting
            for text in texts:
                start, start_cpu = time.perf_counter(), time.process_time()
                pipeline.search([text], k, config)
                wall.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
    pipeline.bm25.exhaustive = False
    out = {}
    for setting, (wall, cpu) in times.items():
        wall_ms, cpu_ms = np.array(wall) * 1e3, np.array(cpu) * 1e3
        out[setting] = {"load": load, "p50": float(np.percentile(wall_ms, 50)),
                      "p95": float(np.percentile(wall_ms, 95)),
                      "p99": float(np.percentile(wall_ms, 99)), "max": float(wall_ms.max()),
                      "under_5ms": float((wall_ms < 5).mean()),
                      "cpu_p50": float(np.percentile(cpu_ms, 50)),
                      "cpu_p95": float(np.percentile(cpu_ms, 95))}
    return out


def reference_fit(corpus: Path, n: int = 20_000) -> dict[str, float]:
    """CPU seconds on the first `n` texts: the `auto` tokenizer text by text, rank-bm25
    BM25Okapi on its tokens, and ragkit's BM25.fit (which tokenizes too)."""
    from rank_bm25 import BM25Okapi

    from ragkit.lexical import BM25, get_tokenizer
    lines = corpus.read_text(encoding="utf-8").splitlines()[:n]
    texts = [json.loads(line)["text"] for line in lines]
    out, start = {}, time.process_time()
    tokens = [get_tokenizer("auto")(t) for t in texts]
    out["tokenize"], start = time.process_time() - start, time.process_time()
    BM25Okapi(tokens)
    out["rank-bm25"], start = time.process_time() - start, time.process_time()
    BM25.fit(texts, tokenizer="auto")
    out["ragkit"] = time.process_time() - start
    return out


def main_latency(index: Path, n_queries: int) -> None:
    """Only the load and query measurements of an index already built: the two-pass scan
    against the exhaustive path, in the same run, top 10, 20 (the CLI's default) and 150
    (the reranker's candidates)."""
    for skip in (0, 100):
        texts = gen_corpus.queries(n_queries, skip=skip)
        for k in (10, 20, 150):  # the CLI's default k is 20
            got = latencies(index, texts, k)
            new, old = got[False], got[True]
            print(json.dumps({"skip": skip, "k": k, "load": new["load"],
                              "scan": {n: round(v, 3) for n, v in new.items() if n != "load"},
                              "exhaustive": {n: round(v, 3) for n, v in old.items()
                                             if n != "load"}}))
            print(f"  skip {skip:3d} top {k:3d}: two-pass wall p50/p95 {new['p50']:.2f} / "
                  f"{new['p95']:.2f} ms (CPU {new['cpu_p50']:.2f} / {new['cpu_p95']:.2f}); "
                  f"exhaustive {old['p50']:.2f} / {old['p95']:.2f} ms (CPU {old['cpu_p50']:.2f}"
                  f" / {old['cpu_p95']:.2f}); ratio p50 {old['p50'] / new['p50']:.1f}x, "
                  f"p95 {old['p95'] / new['p95']:.1f}x")
            print(f"  two-pass p99 {new['p99']:.2f} ms, max {new['max']:.2f} ms; "
                  f"{100 * new['under_5ms']:.1f} % of queries under 5 ms")
            bm25 = _LOADED[index][0].bm25
            rows = bm25.dense_rows.rows or {}
            dense = sum(r.nbytes for r in rows.values())
            print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB;"
                  f" dense rows kept {len(rows)} ({dense / 1e6:.0f} MB)")


def bench(n: int, n_queries: int, previous: Path | None, tmp: Path, opening: bool = False
          ) -> None:
    corpus = gen_corpus.write(n, tmp / f"corpus_{n}.jsonl")
    index = tmp / f"index_{n}"
    cli = run_child(["-m", "ragkit.cli", "index", str(corpus), "--out", str(index),
                       "--embedder", "none"], ROOT)
    stages = json.loads(run_child(["-c", STAGES, str(corpus), str(tmp / f"stages_{n}")],
                                    ROOT)["out"])
    query = latency(index, gen_corpus.queries(n_queries))
    content = latency(index, gen_corpus.queries(n_queries, skip=100))
    print(f"\n{n:,} chunks ({corpus.stat().st_size / 1e6:.0f} MB of JSONL)")
    print(f"  ragkit index   wall {cli['wall']:7.1f} s   user+sys {cli['cpu']:7.1f} s   "
          f"peak RSS {cli['rss_mb']:,.0f} MB")
    print("  stages (CPU s) " + "   ".join(f"{k} {v:.1f}" for k, v in stages.items()))
    print(f"  load {query['load']:.2f} s   BM25 query wall p50 {query['p50']:.2f} ms   "
          f"p95 {query['p95']:.2f} ms; CPU p50 {query['cpu_p50']:.2f} ms   "
          f"p95 {query['cpu_p95']:.2f} ms   ({n_queries} queries, top 10)")
    print(f"  without the 100 most frequent words: wall p50 {content['p50']:.2f} ms   p95 "
          f"{content['p95']:.2f} ms; CPU p50 {content['cpu_p50']:.2f} ms   p95 "
          f"{content['cpu_p95']:.2f} ms")
    if previous is not None:
        old = run_child(["-m", "ragkit.cli", "index", str(corpus), "--out",
                           str(tmp / f"old_{n}"), "--embedder", "none"], previous)
        print(f"  previous code  wall {old['wall']:7.1f} s   user+sys {old['cpu']:7.1f} s   "
              f"-> {old['cpu'] / cli['cpu']:.1f}x less CPU now")
    if opening:
        _LOADED.clear()  # the child processes below have the machine's memory to themselves
        index_open.measure(run_child, ROOT, index, corpus, gen_corpus.queries(n_queries), tmp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--latency-of", type=Path, help="only time loading and querying "
                        "this index (built from a gen_corpus.py corpus)")
    parser.add_argument("--previous", type=Path, help="folder holding an older ragkit/")
    parser.add_argument("--previous-max", type=int, default=100_000,
                        help="run the older version only on corpora up to this size")
    parser.add_argument("--open", action="store_true", help="also time whole ragkit search "
                        "processes, the older format and tantivy on each size")
    parser.add_argument("--open-of", type=Path, help="only those measurements, of this index")
    parser.add_argument("--corpus", type=Path, help="the documents --open-of was built from")
    parser.add_argument("--dense", type=int, nargs="*", default=[],
                        help="time the exact dense scan over this many 384-d vectors")
    args = parser.parse_args(argv)
    if args.latency_of:
        main_latency(args.latency_of, args.queries)
        return 0
    if args.open_of or args.dense:
        with tempfile.TemporaryDirectory(prefix="bench_index.") as folder:
            if args.open_of:
                print(f"{args.open_of}:")
                index_open.measure(run_child, ROOT, args.open_of.resolve(),
                                   args.corpus.resolve(), gen_corpus.queries(args.queries),
                                   Path(folder))
            for n in args.dense:
                index_open.dense_scan(n, Path(folder))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_index.") as folder:
        tmp = Path(folder)
        corpus = gen_corpus.write(20_000, tmp / "corpus_20k.jsonl")
        ref = reference_fit(corpus)
        print(f"BM25 on 20k documents, CPU s: auto tokenizer {ref['tokenize']:.2f} + rank-bm25 "
              f"{ref['rank-bm25']:.2f} = {ref['tokenize'] + ref['rank-bm25']:.2f}; ragkit "
              f"BM25.fit (tokenizing too) {ref['ragkit']:.2f} -> "
              f"{(ref['tokenize'] + ref['rank-bm25']) / ref['ragkit']:.1f}x")
        for n in sorted(args.chunks):
            bench(n, args.queries, args.previous if n <= args.previous_max else None, tmp,
                  args.open)
    return 0


if __name__ == "__main__":
    sys.exit(main())
