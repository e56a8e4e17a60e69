"""Record tests/data/minilm_reference.npz: all-MiniLM-L6-v2 vectors from sentence-transformers.

What it is: the script that made the reference file tests/test_embed_minilm.py checks ragkit's
MiniLM against, so that check needs no torch. It embeds a fixed list of texts, as ONE
batch (so every text is padded to the longest, which is truncated to 256 word-pieces), and
saves the texts, the float32 vectors, the word-pieces sentence-transformers kept per text,
the sha256 of the weights and the library versions.

What it is not: part of the test run. It is run once by hand, and again only when the texts
change; tests only read the .npz. Recorded with sentence-transformers 6.2.0, transformers
5.24.0, torch 2.13.0+cpu, tokenizers 0.23.3, numpy 2.4.6, Python 3.11.7 (see `versions`
inside the file).

How to run (a side venv outside the repo; ragkit itself is not imported, so its
dependencies are not needed there):

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch==2.13.0 sentence-transformers numpy
    HF_HUB_OFFLINE=1 /tmp/torchvenv/bin/python tests/data/record_minilm_reference.py

The model is read from the folder `ragkit models install` fills (ragkit.models.model_dir():
$RAGKIT_HOME/models/all-MiniLM-L6-v2, RAGKIT_HOME defaulting to ~/.cache/ragkit), never from
the hub.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("minilm_reference.npz")
MAX_TOKENS = 256

LONG = (  # about 480 word-pieces: the truncation path (only the first 254 + [CLS], [SEP] count)
    "Before search engines ranked pages by links, information retrieval was a library science. "
    "In the 1960s Gerard Salton's SMART system at Cornell represented every document and "
    "every query as a vector of term weights and ranked documents by the cosine of the angle "
    "between them. Karen Sparck Jones observed in 1972 that a term occurring in few documents "
    "says more about a document than a term occurring in many, and inverse document frequency "
    "became part of almost every weighting scheme that followed. Stephen Robertson and his "
    "colleagues at City University London then derived weights from a probabilistic model of "
    "relevance; their Okapi system, tested at the Text REtrieval Conferences in the 1990s, "
    "gave the formula known as BM25, which saturates term frequency with a parameter k1 and "
    "normalises for document length with a parameter b. Thirty years later BM25 is still the "
    "baseline that new methods must beat, because it is fast, needs no training and works in "
    "any language whose words can be split. Dense retrieval took a different road. Instead of "
    "counting shared words, a neural encoder maps the query and each passage to points in a "
    "space of a few hundred dimensions, trained so that a question lands near the passages "
    "that answer it even when they share no words at all. Sentence-BERT showed in 2019 that "
    "mean pooling the token vectors of a fine-tuned BERT gives sentence embeddings good "
    "enough for semantic search, and small distilled models such as MiniLM made that cheap "
    "enough to run on a laptop. Neither approach wins everywhere. Lexical matching is precise "
    "for rare identifiers, error codes and names; dense matching handles paraphrase and "
    "vocabulary mismatch. Hybrid systems therefore run both and fuse the ranked lists, for "
    "instance with reciprocal rank fusion, which adds one over sixty plus the rank of a "
    "document in each list. A reranker, usually a cross-encoder that reads the query and the "
    "passage together, can then reorder the best few dozen candidates at a higher cost per "
    "pair. Contextual retrieval adds one more step before indexing: a language model writes a "
    "sentence or two situating each chunk within its document, and that context is prepended "
    "to the chunk before it is embedded and indexed, so that a chunk saying only that revenue "
    "grew by three percent can still be found by a question that names the company and the "
    "quarter. Whatever the method, evaluation needs a set of questions with known relevant "
    "passages, and metrics such as recall at k, mean reciprocal rank and nDCG computed over "
    "them, with confidence intervals wide enough to show when two systems cannot be told apart."
)

BATCH = [  # the padding path: very different lengths in one batch
    "retrieval",
    "The quick brown fox jumps over the lazy dog.",
    # about 100 word-pieces
    "Chunking splits a long document into passages small enough to embed. A chunk that is too "
    "short loses the context that makes it findable; one that is too long dilutes the part "
    "that matches the question and may be truncated by the embedder. Overlapping windows are a "
    "common compromise: each window shares a few sentences with its neighbours, so a fact that "
    "falls on a boundary still appears whole in one of them.",
    # about 250 word-pieces (under the 256 limit)
    "An evaluation harness for retrieval has three parts. The first is a corpus of documents "
    "split into chunks, each with a stable identifier so that judgments survive re-indexing. "
    "The second is a set of queries, each paired with the chunks or documents a careful reader "
    "would accept as answering it; these golden judgments are the expensive part, and their "
    "quality bounds everything measured later. The third is a set of metrics computed per "
    "query and then averaged: recall at k asks whether the relevant chunks appear in the top "
    "k results, mean reciprocal rank rewards putting the first relevant chunk near the top, "
    "and normalised discounted cumulative gain credits graded relevance with a logarithmic "
    "discount by position. Because a benchmark has only a few hundred queries, differences of "
    "a point or two between systems are often noise; a paired bootstrap over queries gives a "
    "confidence interval for the difference, and a system should be called better only when "
    "that interval excludes zero. Finally, every number should be reproducible from a fixed "
    "seed, a pinned model and a recorded configuration, so that a reader can rerun it and "
    "get the same table; a pilot run on a dozen queries catches most setup mistakes early.",
    "Crème brûlée à Zürich: naïve façade, Ærøskøbing, São Paulo, Łódź, straße — 12 € ½ °C.",
    "검색 증강 생성은 대규모 언어 모델이 외부 문서를 찾아 읽고 그 내용을 근거로 답하도록 하는 기법입니다.",
    "日本語のテキストと emoji 🙂🚀 mixed with Ελληνικά and русский текст.",
    "def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:\n"
    "    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]\n"
    "    return best, np.take_along_axis(scores, best, axis=1)  # HTTPServerError, camelCase\n",
    " ",
    "",
]


def model_dir() -> Path:
    """ragkit.models.model_dir(), restated so this script runs without ragkit's dependencies."""
    home = os.environ.get("RAGKIT_HOME")
    root = Path(home).expanduser() if home else Path.home() / ".cache" / "ragkit"
    return root / "models" / "all-MiniLM-L6-v2"


def exactly(tokenizer, n: int) -> str:
    """A prefix of LONG padded with ' a' (one word-piece each) to exactly n word-pieces."""
    words, text = LONG.split(), ""
    for word in words:
        longer = f"{text} {word}".strip()
        if len(tokenizer(longer)["input_ids"]) > n:
            break
        text = longer
    while len(tokenizer(text)["input_ids"]) < n:
        text += " a"
    assert len(tokenizer(text)["input_ids"]) == n
    return text


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    folder = model_dir()
    model = SentenceTransformer(str(folder), device="cpu")
    assert model.max_seq_length == MAX_TOKENS
    hf = model.tokenizer
    # Boundary texts: exactly at the limit (kept whole) and one word-piece past it (cut).
    texts = [LONG, exactly(hf, MAX_TOKENS), exactly(hf, MAX_TOKENS + 1), *BATCH]
    full = [len(hf(t)["input_ids"]) for t in texts]
    kept = model.tokenize(texts)["attention_mask"].sum(1).tolist()
    vectors = model.encode(texts, batch_size=len(texts), convert_to_numpy=True,
                           normalize_embeddings=False).astype(np.float32)
    versions = {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__, "torch": torch.__version__,
        "tokenizers": tokenizers.__version__, "numpy": np.__version__,
        "python": platform.python_version(),
        "model.safetensors sha256":
            hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest(),
    }
    tmp = OUT.with_name(f".{OUT.stem}.tmp.npz")  # renamed over OUT once complete
    np.savez_compressed(tmp, texts=np.array(texts), vectors=vectors,
                        full_tokens=np.array(full, dtype=np.int64),
                        kept_tokens=np.array(kept, dtype=np.int64),
                        versions=np.array(json.dumps(versions, sort_keys=True)))
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(texts)} texts, word-pieces "
          f"{full} (kept {kept})", file=sys.stderr)
    print(json.dumps(versions, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
