"""Where a span stands in its passage: verbatim, or re-anchored across re-wrapped white space.

What it is: `anchor(span, passage)`, shared by the generator's verbatim filter and the
review's check of an edited span. It imports nothing heavy, so `ragkit questions review` and
`accept` start without the Anthropic SDK or the tokenizers.
"""
from __future__ import annotations

import re


def anchor(span: str, passage: str) -> str | None:
    """`span` as it occurs in `passage` (see the module docstring), or None."""
    span = span.strip()
    if not span:
        return None
    if span in passage:
        return span
    words = span.split()
    pattern = r"\s+".join(re.escape(w) for w in words)
    found = re.search(pattern, passage)
    return found.group(0) if found else None
