"""How fast a built index opens and answers as a whole `ragkit search` process, against tantivy.

Used by bench_index.py (`--open`, `--open-of DIR --corpus FILE`, `--dense N`). Measured:

- `ragkit search --mode bm25 --k 20` as a child process, one query and `n` queries: wall,
  user+sys CPU and peak RSS (`os.wait4`); the same queries against the same index seen in
  the older format (a folder of links without chunks.offsets.npy and the BM25 term table,
  which is read whole as before), its run compared byte for byte with the new one's;
- in a child: import, `Pipeline.load`, the resident memory (VmRSS) before the first query,
  the first query, then each query one at a time (top 20), p50 / p95;
- tantivy (its Python bindings, when installed): the same corpus indexed (id stored, text
  with tantivy's default tokenizer), then in a child the open (`Index.open` + a searcher),
  RSS after it, and the same queries one at a time (top 20, ids read), p50 / p95; and whole
  processes answering one query and all of them;
- `dense_scan(n)`: an exact dense scan of n × 384 float32 unit vectors memory-mapped from a
  .npy file (`DenseIndex`), per query: the first (pages read, rows checked), then p50.

What it is not: a tantivy tuning study (default tokenizer, one segment writer, no merges
awaited) nor a BM25 parity check: tantivy's tokenizer and idf differ from ragkit's.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OLD_FILES = ("chunks.jsonl", "index.json", "bm25/bm25.json", "bm25/data.npy",
             "bm25/indices.npy", "bm25/indptr.npy", "bm25/idf.npy", "bm25/doc_len.npy")

OPEN = """
import json, sys, time
t0 = time.perf_counter()
from ragkit.pipeline import Pipeline, SearchConfig
t1 = time.perf_counter()
pipeline = Pipeline.load(sys.argv[1])
t2 = time.perf_counter()
rss = int([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])
texts = [json.loads(line)["text"] for line in open(sys.argv[2])]
pipeline.search(texts[:1], 20, SearchConfig(mode='bm25'))
t3 = time.perf_counter()
times = []
for text in texts:
    start = time.perf_counter()
    pipeline.search([text], 20, SearchConfig(mode='bm25'))
    times.append((time.perf_counter() - start) * 1e3)
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "rss_mb": rss / 1024,
                  "first": t3 - t2, "times_ms": times}))
"""

TANTIVY_BUILD = """
import json, sys, tantivy
builder = tantivy.SchemaBuilder()
builder.add_text_field("id", stored=True, tokenizer_name="raw")
builder.add_text_field("text", stored=False)
index = tantivy.Index(builder.build(), path=sys.argv[2])
writer = index.writer(heap_size=512_000_000, num_threads=2)
with open(sys.argv[1], "rb") as lines:
    for line in lines:
        row = json.loads(line)
        writer.add_document(tantivy.Document(id=row["id"], text=row["text"]))
writer.commit()
writer.wait_merging_threads()
"""

TANTIVY_QUERY = """
import json, sys, time
t0 = time.perf_counter()
import tantivy
t1 = time.perf_counter()
index = tantivy.Index.open(sys.argv[1])
searcher = index.searcher()
t2 = time.perf_counter()
rss = int([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])
texts = [json.loads(l)["text"] for l in open(sys.argv[2])]
times = []
for text in texts:
    start = time.perf_counter()
    hits = searcher.search(index.parse_query(text, ["text"]), 20).hits
    [searcher.doc(address)["id"][0] for _, address in hits]
    times.append(time.perf_counter() - start)
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "rss_mb": rss / 1024,
                  "times_ms": [t * 1e3 for t in times]}))
"""


def write_queries(texts: list[str], folder: Path) -> tuple[Path, Path]:
    """queries.jsonl (all) and one.jsonl (the first) in `folder`."""
    rows = [json.dumps({"id": f"q{i}", "text": t}) + "\n" for i, t in enumerate(texts)]
    (folder / "queries.jsonl").write_text("".join(rows))
    (folder / "one.jsonl").write_text(rows[0])
    return folder / "queries.jsonl", folder / "one.jsonl"


def older_view(index: Path, folder: Path) -> Path:
    """`index` as an index written before chunks.offsets.npy and the term table: links to
    its other files, so the same bytes are read the older way."""
    (folder / "bm25").mkdir(parents=True)
    for name in OLD_FILES:
        os.symlink(index / name, folder / name)
    return folder


def searches(run_child, root: Path, index: Path, queries: Path, one: Path, out: Path
             ) -> dict:
    """Whole `ragkit search` processes: one query, then all of them."""
    def search(path: Path, name: str) -> dict:
        return run_child(["-m", "ragkit.cli", "search", str(index), "--queries", str(path),
                          "--k", "20", "--mode", "bm25", "--out", str(out / name)], root)
    return {"one": search(one, f"{index.name}.one.trec"),
            "all": search(queries, f"{index.name}.all.trec")}


def measure(run_child, root: Path, index: Path, corpus: Path, texts: list[str],
            tmp: Path) -> None:
    """Print the whole-process numbers for ragkit (new and older format) and tantivy."""
    work = Path(tempfile.mkdtemp(prefix="open.", dir=tmp))
    queries, one = write_queries(texts, work)
    opened = json.loads(run_child(["-c", OPEN, str(index), str(queries)], root)["out"])
    ms = np.array(opened["times_ms"])
    new = searches(run_child, root, index, queries, one, work)
    old = searches(run_child, root, older_view(index, work / "old"), queries, one, work)
    same = all((work / f"{index.name}.{k}.trec").read_bytes()
               == (work / f"old.{k}.trec").read_bytes() for k in ("one", "all"))
    print(f"  ragkit search, whole process (k 20, BM25): one query {new['one']['wall']:.2f} s "
          f"(CPU {new['one']['cpu']:.2f} s, peak RSS {new['one']['rss_mb']:,.0f} MB); "
          f"{len(texts):,} queries {new['all']['wall']:.2f} s (CPU {new['all']['cpu']:.2f} s, "
          f"peak {new['all']['rss_mb']:,.0f} MB)")
    print(f"    in a process: import {opened['import']:.2f} s, open {opened['open']:.3f} s, "
          f"RSS before the first query {opened['rss_mb']:,.0f} MB, first query "
          f"{opened['first'] * 1e3:.0f} ms; then per query p50 {np.percentile(ms, 50):.2f} ms, "
          f"p95 {np.percentile(ms, 95):.2f} ms (top 20, one at a time)")
    print(f"  the older format (every row read at open): one query {old['one']['wall']:.2f} s "
          f"(peak {old['one']['rss_mb']:,.0f} MB); {len(texts):,} queries "
          f"{old['all']['wall']:.2f} s; runs byte-identical: {same}")
    tantivy(run_child, root, corpus, queries, one, work)
    shutil.rmtree(work, ignore_errors=True)


def tantivy(run_child, root: Path, corpus: Path, queries: Path, one: Path, work: Path
            ) -> None:
    """tantivy on the same corpus and queries, or a line saying it is not installed."""
    try:
        import tantivy as _  # noqa: F401
    except ImportError:
        print("  tantivy: not installed (pip install tantivy), reference skipped")
        return
    folder = work / "tantivy"
    folder.mkdir()
    built = run_child(["-c", TANTIVY_BUILD, str(corpus), str(folder)], root)
    got = json.loads(run_child(["-c", TANTIVY_QUERY, str(folder), str(queries)], root)["out"])
    whole_one = run_child(["-c", TANTIVY_QUERY, str(folder), str(one)], root)
    whole_all = run_child(["-c", TANTIVY_QUERY, str(folder), str(queries)], root)
    ms = np.array(got["times_ms"])
    print(f"  tantivy ({_version()}): build {built['wall']:.1f} s (CPU {built['cpu']:.1f} s); "
          f"open {got['open'] * 1e3:.1f} ms (import {got['import'] * 1e3:.0f} ms), RSS after "
          f"open {got['rss_mb']:,.0f} MB; per query p50 {np.percentile(ms, 50):.2f} ms, p95 "
          f"{np.percentile(ms, 95):.2f} ms (top 20, ids read); whole process one query "
          f"{whole_one['wall']:.2f} s, {len(ms):,} queries {whole_all['wall']:.2f} s")


def _version() -> str:
    import tantivy
    return getattr(tantivy, "__version__", "?")


def dense_scan(n: int, tmp: Path, dim: int = 384, n_queries: int = 20) -> None:
    """Per-query cost of the exact dense scan over `n` memory-mapped vectors."""
    from ragkit.dense import DenseIndex
    path = tmp / f"vectors_{n}.npy"
    rng = np.random.default_rng(0)
    vectors = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, dim))
    for lo in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - lo), dim)).astype(np.float32)
        vectors[lo:lo + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    vectors.flush()
    del vectors
    start = time.perf_counter()
    dense = DenseIndex(np.load(path, mmap_mode="r"), np.arange(n))
    opened = time.perf_counter() - start
    queries = rng.standard_normal((n_queries + 1, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    times = []
    for query in queries:
        start = time.perf_counter()
        dense.search(query[None], 20)
        times.append((time.perf_counter() - start) * 1e3)
    start = time.perf_counter()
    dense.search(np.repeat(queries, 3, axis=0)[:64], 20)
    batched = (time.perf_counter() - start) * 1e3 / 64
    print(f"  dense scan, {n:,} x {dim} float32 memory-mapped ({path.stat().st_size / 1e9:.2f} "
          f"GB): open {opened * 1e3:.1f} ms; first query {times[0]:.0f} ms (reads the file, "
          f"checks every row); then p50 {np.median(times[1:]):.0f} ms, max "
          f"{max(times[1:]):.0f} ms a query; 64 at once {batched:.0f} ms a query "
          f"({os.cpu_count()} cores)")
    path.unlink()


if __name__ == "__main__":
    sys.exit("run through bench_index.py (--open, --open-of, --dense)")
