"""Where a span stands in its passage: verbatim, or re-anchored across re-wrapped white space.

What it is: `anchor(span, passage)` (`ragkit.text_stats`), shared by the generator's verbatim
filter, the review's check of an edited span and the check of a golden set's spans. It imports nothing heavy, so `ragkit questions review` and
`accept` start without the Anthropic SDK or the tokenizers.
"""
from __future__ import annotations

from ragkit.text_stats import anchor  # noqa: F401 (its home: golden sets are checked with it too)
