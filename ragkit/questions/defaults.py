"""The generator's defaults, in a module that imports nothing, so `ragkit --help` shows them
without loading the Anthropic SDK or numpy.

What it is: the question kinds, their default shares, and the near-duplicate threshold with
the measurement behind it. What it is not: the rules that use them (`ragkit.questions`).
"""
from __future__ import annotations

UNKNOWN = "UNKNOWN"  # the closed-book reply when the question needs a document
KINDS = ("lexical", "paraphrase", "contextual", "multi-chunk", "unanswerable")
# Percent of --n per kind; the shipped golden sets hold about 8 % unanswerable questions.
DEFAULT_SHARES = {"lexical": 25, "paraphrase": 25, "contextual": 25, "multi-chunk": 15,
                  "unanswerable": 10}
# e5-small cosine between two questions at or above which the later one is dropped.
# Measured (3 December 2026) on the shipped human-written golden questions (data/golden,
# 288, all distinct by construction): the largest cosine between two of them is 0.988 (two
# comparisons naming the same two companies), 3 pairs reach 0.98, none 0.99; three
# rewordings of one question (word order, a plural) score 0.997-0.998. So 0.99 drops
# rewordings and keeps every distinct shipped question.
DUP_THRESHOLD = 0.99
