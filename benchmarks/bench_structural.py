"""Chunking and structural contexts of long documents: linear in a document's length.

Run:  PYTHONPATH=. python benchmarks/bench_structural.py [--mb 1 2 4] [--one-line-mb 50]
          [--reference-max 4] [--no-index]

Documents (seeded, generated here): Markdown (a heading every few paragraphs) and Python
(classes, methods, helpers) of each `--mb` size, and one line of prose of `--one-line-mb`
(sentences, no newline: a minified or badly exported file). For each, the CPU time of
`chunk_document` + `structural_contexts` (the `ragkit index` stages that used to rescan the
text before every chunk) with the defaults (512 tokens, overlap 64), then the reference
measured in the same run on the same chunks: the previous implementation, which rescanned
`text[:offset]` for headings, code definitions and the opening line at every chunk (kept in
tests/test_structural_linear.py), printed as a ratio; the reference is skipped above
`--reference-max` MB (quadratic: it did not finish a 50 MB one-line file in ten minutes).
Unless `--no-index`, `ragkit index DOCS --embedder none` is then run on each document as a
child process (wall and user+sys CPU time, peak RSS): the whole command a user runs.

Measured 2 December 2026 on the 2-core development machine under load from other jobs (CPU
seconds, ragkit against the reference): Markdown 1 / 2 / 4 MB 0.17 / 0.33 / 0.71 against
6.1 / 23.3 / 86.7 (36x / 70x / 123x); Python 1 / 2 / 4 MB 0.21 / 0.36 / 0.79 against
19.8 / 70.9 / 301.8 (94x / 199x / 382x); the 50 MB one-line document 8.8 s (23,254 chunks;
reference skipped). `ragkit index --embedder none`: 1.2–3.2 s wall for each 1–4 MB document,
13.4 s wall, 13.4 s user+sys and 945 MB peak RSS for the 50 MB one-line file.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import ragkit.chunking as chunking  # noqa: E402
from ragkit.chunking import chunk_document  # noqa: E402
from ragkit.contextualize.structural import structural_contexts  # noqa: E402
from ragkit.documents import Document  # noqa: E402
from test_structural_linear import old_section_of, old_structural_contexts  # noqa: E402

WORDS = ("the kettle boils water in two minutes refunds are due within seven days of purchase "
         "and a receipt is needed for every claim").split()


def prose(rng: random.Random, size: int, sep: str = " ") -> str:
    """Sentences of 8–24 words joined by `sep`, about `size` characters."""
    out, n = [], 0
    while n < size:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 24))]
        sentence = " ".join(words).capitalize() + "."
        out.append(sentence)
        n += len(sentence) + len(sep)
    return sep.join(out)


def markdown(rng: random.Random, size: int) -> str:
    parts, n = [], 0
    while n < size:
        heading = f"{'#' * rng.choice([1, 2, 2, 3, 3, 3])} Part {len(parts)}\n\n"
        body = "\n\n".join(prose(rng, rng.randint(200, 1200)) for _ in range(rng.randint(1, 4)))
        parts.append(heading + body + "\n\n")
        n += len(parts[-1])
    return "".join(parts)


def python(rng: random.Random, size: int) -> str:
    lines, n = ['"""A generated module."""', ""], 0
    while n < size:
        k = len(lines)
        new = [f"class Thing{k}:", f"    def method_{k}(self, x):", "        if x:",
               *[f"            y = x * {i}  # {' '.join(rng.choice(WORDS) for _ in range(4))}"
                 for i in range(rng.randint(2, 30))],
               "        return y", "", f"def helper_{k}(a, b):",
               *[f"    a += b  # {i}" for i in range(rng.randint(1, 20))], "    return a", ""]
        lines += new
        n += sum(len(line) + 1 for line in new)
    return "\n".join(lines)


def timed(doc: Document, reference: bool) -> dict:
    """CPU seconds of chunking and of contexts, by ragkit or by the previous rescan."""
    saved = chunking.section_of
    if reference:
        chunking.section_of = old_section_of
    try:
        start = time.process_time()
        chunks = chunk_document(doc)
        middle = time.process_time()
        contexts = (old_structural_contexts if reference else structural_contexts)(doc, chunks)
        end = time.process_time()
    finally:
        chunking.section_of = saved
    return {"chunk": middle - start, "context": end - middle, "chunks": chunks,
            "contexts": contexts}


def index_child(doc: Document, folder: Path) -> dict:
    """`ragkit index DOCS --out IDX --embedder none` in a child: wall, user+sys, peak RSS."""
    docs = folder / "docs.jsonl"
    docs.write_text(json.dumps({"id": doc.id, "title": doc.title, "text": doc.text}) + "\n")
    env = {**os.environ, "TQDM_DISABLE": "1"}
    argv = [sys.executable, "-m", "ragkit.cli", "index", str(docs), "--out",
            str(folder / "idx"), "--embedder", "none"]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"ragkit index failed: {proc.stderr.read().decode()[-500:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1, 2, 4])
    parser.add_argument("--one-line-mb", type=float, default=50)
    parser.add_argument("--reference-max", type=float, default=4,
                        help="time the previous rescan only up to this many MB")
    parser.add_argument("--no-index", action="store_true", help="skip the `ragkit index` runs")
    args = parser.parse_args(argv)
    rng = random.Random(0)
    docs = [(f"Markdown {mb:g} MB", mb, Document(f"manual{mb:g}.md",
                                                 markdown(rng, int(mb * 2**20)), "Manual"))
            for mb in args.mb]
    docs += [(f"Python {mb:g} MB", mb, Document(f"things{mb:g}.py", python(rng, int(mb * 2**20)),
                                                "", {"path": f"src/things{mb:g}.py"}))
             for mb in args.mb]
    if args.one_line_mb:
        mb = args.one_line_mb
        docs.append((f"one line {mb:g} MB", mb,
                     Document("oneline.txt", prose(rng, int(mb * 2**20)), "One line")))
    print("CPU seconds: chunking + structural contexts (default 512 / 64 tokens)")
    print(f"{'document':<18} {'chunks':>7} {'ragkit':>8} {'reference':>10} {'ratio':>7}"
          f"   {'ragkit index: wall':>19} {'user+sys':>9} {'peak RSS':>9}")
    for name, mb, doc in docs:
        mine = timed(doc, reference=False)
        total = mine["chunk"] + mine["context"]
        line = f"{name:<18} {len(mine['chunks']):>7} {total:>8.2f}"
        if mb <= args.reference_max:
            ref = timed(doc, reference=True)
            assert ref["contexts"] == mine["contexts"], f"{name}: contexts differ"
            assert [c.metadata for c in ref["chunks"]] == [c.metadata for c in mine["chunks"]]
            old = ref["chunk"] + ref["context"]
            line += f" {old:>10.2f} {old / total:>6.0f}x"
        else:
            line += f" {'skipped':>10} {'':>7}"
        if not args.no_index:
            with tempfile.TemporaryDirectory() as tmp:
                run = index_child(doc, Path(tmp))
            line += (f"   {run['wall']:>17.1f} s {run['cpu']:>7.1f} s "
                     f"{run['rss_mb']:>6.0f} MB")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
