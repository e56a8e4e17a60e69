"""What notebooks 01–04 say a number is: each figure compared with the one it measures."""
from __future__ import annotations

import re
from pathlib import Path

from notebook_prose import load, markdown_cells

from ragkit.ladder import ARTICLE_FAIL20

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CLAUSE = re.compile(r"(?<=[.;:])\s")  # a sentence, or a part of one after ";" or ":"

# The article's rungs after the first, and the words that name each in prose.
RUNG_NAMES = (("contextual embeddings", "first context rung"), ("BM25",), ("rerank",))


def test_02_sets_each_article_reduction_beside_its_own_rung():
    """02's take-away set contextual embeddings against the article's 49.1 %, which is its
    reduction with contextual BM25 added (contextual embeddings alone: 35.1 %). Each of the
    article's reductions quoted in the text stands in a clause naming its own rung."""
    reductions = {f"{100 * (1 - fail / ARTICLE_FAIL20[0]):.1f}": names
                  for fail, names in zip(ARTICLE_FAIL20[1:], RUNG_NAMES)}
    assert sorted(reductions) == ["35.1", "49.1", "66.7"]
    quoted, unnamed = [], []
    for markdown in markdown_cells(load(NOTEBOOKS / "02_contextual_retrieval.ipynb")):
        for clause in CLAUSE.split(" ".join(markdown.split())):
            for figure, names in reductions.items():
                if re.search(rf"(?<![\d.]){re.escape(figure)} %", clause):
                    quoted.append(figure)
                    if not any(name in clause for name in names):
                        unnamed.append(f"{figure} %: {clause}")
    assert unnamed == []
    assert set(quoted) == {"35.1", "49.1"}  # the test reads the text it means to
