"""A seeded synthetic corpus in the documents JSONL that `ragkit index` reads.

Run:  python benchmarks/gen_corpus.py --chunks 1000000 --out /tmp/corpus_1m.jsonl [--seed 0]

Each line is `{"id": "d0000042", "title": "...", "text": "..."}`: a short document of one
chunk (10–90 words, log-normal around 40, well under the default 512-token chunk), its words
drawn from a Zipfian vocabulary (exponent 1.1 over 200,000 pseudo-words, as in
bench_bm25.py), a capitalised first word and a full stop every ~12 words, so the BM25 index
sees realistic document frequencies. A few words are identifiers (`snake_case`,
`CamelCase`) so the `code` tokenizer's splitting is exercised too.

What it is not: natural language. Scores on it say nothing about retrieval quality; it exists
to time `ragkit index` and queries at scale. Never commit the generated file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

VOCAB = 200_000
SYLLABLES = ("ka ri to mu sen lo pa vi dre no tal quo ber fi zu mon ax el ri sta gra pe "
             "hu lin dor").split()


def vocabulary(size: int = VOCAB, seed: int = 0) -> np.ndarray:
    """`size` distinct pseudo-words (2–4 syllables), about 1 % of them identifiers."""
    rng = np.random.default_rng(seed + 1)
    syllables = np.array(SYLLABLES, dtype=object)
    words: dict[str, None] = {}
    while len(words) < size:
        n = 2 * size
        picks = syllables[rng.integers(0, len(SYLLABLES), (n, 4))]
        counts, rolls = rng.integers(2, 5, n), rng.random(n)
        for parts, count, roll in zip(picks.tolist(), counts.tolist(), rolls.tolist()):
            parts = parts[:count]
            word = ("_".join(parts) if roll < 0.005 else
                    "".join(p.capitalize() for p in parts) if roll < 0.01 else "".join(parts))
            words.setdefault(word)
            if len(words) == size:
                break
    return np.array(list(words), dtype=object)


def queries(n: int, seed: int = 1, size: int = VOCAB, skip: int = 0) -> list[str]:
    """`n` queries of 2–6 words drawn from the same Zipfian law (another seed); `skip` > 0
    leaves out the `skip` most frequent words, as a stopword list would (the top word is in
    ~98 % of the documents, a stopword in all but name)."""
    rng = np.random.default_rng(seed)
    names = vocabulary(size)
    p = _zipf(size)
    p[:skip] = 0
    p /= p.sum()
    return [" ".join(names[rng.choice(size, rng.integers(2, 7), p=p)]) for _ in range(n)]


def _zipf(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** 1.1
    return weights / weights.sum()


def documents(n: int, seed: int = 0, size: int = VOCAB, batch: int = 50_000):
    """Yield `n` (id, title, text) triples, generated in batches of `batch` (bounded memory)."""
    rng = np.random.default_rng(seed)
    names, p = vocabulary(size), _zipf(size)
    width = len(str(n - 1))
    for lo in range(0, n, batch):
        count = min(batch, n - lo)
        lengths = np.clip(rng.lognormal(np.log(40), 0.4, count).astype(int), 10, 90)
        words = names[rng.choice(size, int(lengths.sum()), p=p)]
        bounds = np.cumsum(lengths)[:-1]
        for i, part in enumerate(np.split(words, bounds)):
            sentences = [" ".join(part[j:j + 12]) for j in range(0, len(part), 12)]
            text = " ".join(s[:1].upper() + s[1:] + "." for s in sentences)
            yield f"d{lo + i:0{width}d}", f"{part[0]} {part[1]}".title(), text


def write(n: int, out: Path, seed: int = 0) -> Path:
    """Write `n` documents as JSONL to `out` (plain writes: a scratch file, not ragkit output)."""
    import json
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for ident, title, text in documents(n, seed):
            handle.write(json.dumps({"id": ident, "title": title, "text": text}) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000, help="documents (one chunk each)")
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write(args.chunks, args.out, args.seed)
    print(f"wrote {args.chunks:,} documents to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
