"""Which tokenizer should BM25 use by default? Pass@5/10/20 on Anthropic's cookbook data.

Run:  PYTHONPATH=. python benchmarks/bench_tokenizers.py [--data DIR]
Reads `codebase_chunks.json` and `evaluation_set.jsonl` (default ../shared/data/cookbook,
never copied into the project) and prints one row per tokenizer, each over the plain chunk
text and over the chunk prefixed by its document's title (repository name and file path,
found only in the evaluation set's `meta`). Skips when the data is absent.

Pass@k is the cookbook notebook's metric: per query, the fraction of its golden chunks whose
stripped text equals the stripped text of some top-k retrieved chunk; mean × 100. The
cookbook README gives 59.7 / 68.0 / 77.0 for BM25Okapi on `words` tokens: the first row
must reproduce it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ragkit.lexical import BM25

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cookbook"
KS = (5, 10, 20)


def load_cookbook(folder: Path) -> tuple[list[dict], list[dict]]:
    """Chunks as dicts {key, text, title} and queries as dicts {text, golden: [key]}."""
    docs = json.loads((folder / "codebase_chunks.json").read_text(encoding="utf-8"))
    lines = (folder / "evaluation_set.jsonl").read_text(encoding="utf-8").splitlines()
    evals = [json.loads(line) for line in lines if line.strip()]
    titles = {}
    for item in evals:
        meta = item["meta"]
        for uuid in item["golden_doc_uuids"]:
            titles[uuid] = f"{meta['repo_name']}: {meta['relative_path']}"
    chunks = [
        {"key": (d["original_uuid"], c["original_index"]), "text": c["content"],
         "title": titles.get(d["original_uuid"], "")}
        for d in docs for c in d["chunks"]
    ]
    queries = [{"text": q["query"], "golden": [tuple(g) for g in q["golden_chunk_uuids"]]}
               for q in evals]
    return chunks, queries


def pass_at_k(chunks: list[dict], queries: list[dict], ranked: list, k: int) -> float:
    """The cookbook's Pass@k (see the module docstring)."""
    text_of = {c["key"]: c["text"].strip() for c in chunks}
    total = 0.0
    for query, (indices, _) in zip(queries, ranked):
        retrieved = {chunks[i]["text"].strip() for i in indices[:k]}
        found = sum(text_of[g] in retrieved for g in query["golden"])
        total += found / len(query["golden"])
    return 100 * total / len(queries)


def evaluate(chunks: list[dict], queries: list[dict], tokenizer: str, titled: bool) -> list[float]:
    texts = [f"{c['title']}\n\n{c['text']}" if titled else c["text"] for c in chunks]
    bm25 = BM25.fit(texts, tokenizer=tokenizer)
    ranked = bm25.search_many([q["text"] for q in queries], k=max(KS))
    return [pass_at_k(chunks, queries, ranked, k) for k in KS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--tokenizers", nargs="+", default=["words", "english", "code", "auto"])
    args = parser.parse_args(argv)
    if not (args.data / "codebase_chunks.json").exists():
        print(f"skipped: no cookbook data in {args.data}")
        return 0
    chunks, queries = load_cookbook(args.data)
    print(f"{len(chunks)} chunks, {len(queries)} queries\n")
    print(f"{'tokenizer':<10} {'title':<6} {'Pass@5':>7} {'Pass@10':>8} {'Pass@20':>8} "
          f"{'secs':>6}")
    for name in args.tokenizers:
        for titled in (False, True):
            start = time.perf_counter()
            p5, p10, p20 = evaluate(chunks, queries, name, titled)
            secs = time.perf_counter() - start
            title = "yes" if titled else "no"
            print(f"{name:<10} {title:<6} {p5:7.1f} {p10:8.1f} {p20:8.1f} {secs:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
