"""What Voyage's embedders and rerankers share: the client, the key check, a token estimate
and request batching.

- `client(what, offline)`: a `voyageai.Client` with retries (`MAX_RETRIES` attempts) and
  `VOYAGE_BASE_URL` as its `base_url` (the SDK has no such variable). The key
  (`VOYAGE_API_KEY`, or the SDK's `VOYAGE_API_KEY_PATH`) is checked first, because the SDK
  builds a client without one and fails only on the first call; the error names the variable
  and the offline alternative, never the key.
- `estimate_tokens(text)`: the SDK's `count_tokens` downloads a tokenizer from a model hub,
  which is not reachable offline, so limits are met with a deliberately high estimate.
- `batches(sizes, max_items, max_tokens)`: consecutive index ranges within per-call limits.
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ragkit.documents import RagkitError

MAX_RETRIES = 3  # attempts per request (voyageai counts the first call as one)


def estimate_tokens(text: str) -> int:
    """Tokens a Voyage model is likely to see in `text`, erring high.

    One token per 3 ASCII characters plus one per other character, plus 2. English prose
    runs ~4.5 characters per BPE token and code ~3.5, so ASCII text is over-counted by
    15-50 %; a Hangul syllable or CJK character counts as a whole token. The chunker's word
    count is not used because it counts a code identifier such as `get_embedder_name` as one.
    """
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return 2 + math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def client(what: str, offline: str) -> Any:
    """A `voyageai.Client` for `what` (e.g. "the voyage:rerank-2.5 reranker"), or a
    RagkitError naming the missing variable and the `offline` alternative."""
    if not (os.environ.get("VOYAGE_API_KEY") or os.environ.get("VOYAGE_API_KEY_PATH")):
        raise RagkitError(f"{what} calls the Voyage API and needs a key: set VOYAGE_API_KEY "
                          f"(or VOYAGE_API_KEY_PATH to a file holding it), or use {offline}")
    import voyageai
    made = voyageai.Client(max_retries=MAX_RETRIES, base_url=os.environ.get("VOYAGE_BASE_URL"))
    if not made.api_key:  # the SDK ignores a VOYAGE_API_KEY_PATH it cannot read
        raise RagkitError(f"{what}: cannot read the key file named by VOYAGE_API_KEY_PATH")
    return made


def batches(sizes: Sequence[int], max_items: int, max_tokens: int) -> Iterator[range]:
    """Consecutive index ranges with at most `max_items` items and `max_tokens` tokens each
    (an item larger than `max_tokens` goes alone)."""
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and (i - start >= max_items or total + size > max_tokens):
            yield range(start, i)
            start, total = i, 0
        total += size
    if start < len(sizes):
        yield range(start, len(sizes))
