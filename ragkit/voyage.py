"""What Voyage's embedders and rerankers share: the client, the key check, a token estimate
and request batching.

- `client(what, offline)`: a `voyageai.Client` with the time and retry budget of
  `ragkit.online.budget()` (connect 10 s, read 120 s, 3 attempts by default; the SDK's own
  default is one attempt of up to 600 s) and `VOYAGE_BASE_URL` as its `base_url` (the SDK
  has no such variable). Its replies (never streamed) must be whole a read timeout after they
  begin: the SDK's `voyageai.requestssession` is set to `ragkit.whole_reply.requests_session`
  (left alone when the application set it, or `voyageai.proxy`, itself); a 5xx status the
  SDK lets through as a reply (520, 529) is raised as its ServiceUnavailableError. The key
  (`VOYAGE_API_KEY`, or the SDK's `VOYAGE_API_KEY_PATH`) is checked first, because the SDK
  builds a client without one and fails only on the first call; the error names the
  variable and the offline alternative, never the key.
- `failure(what, exc, sdk)`: the one `RagkitError` line for an SDK error left after its
  retries, passed through `ragkit.online.scrub` (an error body may echo the key).
- `estimate_tokens(text)`: the SDK's `count_tokens` downloads a tokenizer from a model hub,
  which is not reachable offline, so limits are met with a deliberately high estimate.
- `batches(sizes, max_items, max_tokens)`: consecutive index ranges within per-call limits.
"""
from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ragkit.documents import RagkitError
from ragkit.errors import KeyRejected, MissingKey
from ragkit.online import budget, scrub
from ragkit.whole_reply import requests_session, stalled_after, trickled_after


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
    `MissingKey` naming the missing variable and the `offline` alternative."""
    if not (os.environ.get("VOYAGE_API_KEY") or os.environ.get("VOYAGE_API_KEY_PATH")):
        raise MissingKey(f"{what} calls the Voyage API and needs a key: set VOYAGE_API_KEY "
                         f"(or VOYAGE_API_KEY_PATH to a file holding it), or use {offline}")
    import voyageai
    if voyageai.requestssession is None and voyageai.proxy is None:  # see module docstring
        retries = voyageai.api_resources.api_requestor.MAX_CONNECTION_RETRIES
        voyageai.requestssession = functools.partial(_session, retries)
    limits = budget()
    # voyageai 0.5: `max_retries` is tenacity's stop_after_attempt (attempts, first one
    # included; it retries timeouts, 429 and 502-504), and `timeout` goes to `requests` as it
    # is, so a (connect, read) pair sets both (a float would set both to the same value).
    made = voyageai.Client(max_retries=limits.attempts, timeout=(limits.connect, limits.read),
                           base_url=os.environ.get("VOYAGE_BASE_URL"))
    if not made.api_key:  # the SDK ignores a VOYAGE_API_KEY_PATH it cannot read
        raise MissingKey(f"{what}: cannot read the key file named by VOYAGE_API_KEY_PATH")
    return made


def _session(connection_retries: int) -> Any:
    """`ragkit.whole_reply.requests_session`, with a 5xx the SDK does not know raised as the
    SDK's own ServiceUnavailableError (`_unknown_5xx`)."""
    session = requests_session(connection_retries)
    session.hooks["response"].append(_unknown_5xx)
    return session


def _unknown_5xx(response: Any, *args: Any, **kwargs: Any) -> Any:
    """voyageai 0.5 raises for 500 and 502-504 only: a 520 or 529 (a proxy's, an overload)
    came back as a reply, and reading its `data` was an AttributeError traceback. Raised as
    ServiceUnavailableError, the SDK retries it as a 503 and `failure` names its status."""
    if response.status_code >= 500 and response.status_code not in (500, 502, 503, 504):
        from voyageai import error
        try:
            said = response.json().get("detail")
        except (ValueError, AttributeError):  # not JSON, or not an object
            said = None
        raise error.ServiceUnavailableError(
            str(said or response.text.strip() or response.reason or "no detail")[:200],
            response.text[:200], response.status_code, headers=response.headers)
    return response


def address(sdk: Any | None) -> str:
    """The base URL this client sends to (VOYAGE_BASE_URL, or the SDK's choice for the key);
    `sdk` None: where a client without a key yet would send."""
    from voyageai.util import get_default_base_url
    return (os.environ.get("VOYAGE_BASE_URL")
            or get_default_base_url(sdk.api_key if sdk is not None else ""))


def failure(what: str, exc: Exception, sdk: Any, hint: str = "") -> RagkitError:
    """One line for a voyageai error left after the SDK's retries, never with the key.

    `what` names the caller ("voyage:voyage-3.5"); `hint` is added to errors that a re-run
    may cure (e.g. what the caches keep).
    """
    from voyageai import error
    limits, status = budget(), getattr(exc, "http_status", None)
    body = getattr(exc, "json_body", None)
    # the API's own words: for a status it has no class for (403, 404) the SDK's message also
    # holds the body again, the status and every response header
    detail = str(body["detail"] if isinstance(body, dict) and body.get("detail") else
                 getattr(exc, "user_message", None) or exc)[:300]
    tail = f"; {hint}" if hint else ""
    if isinstance(exc, error.Timeout):  # silence, a reply that stalled or trickled in
        text = (f"{what}: the Voyage API at {address(sdk)} "
                f"{limits.timed_out(trickled_after(exc), stalled_after(exc))}{tail}")
    elif isinstance(exc, error.AuthenticationError):
        problem = (f"Voyage refused the API key (HTTP {status})" if status
                   else "no usable Voyage API key was read")
        text = (f"{what}: {problem}: {detail}; check VOYAGE_API_KEY"
                f"{'' if status else ' and VOYAGE_API_KEY_PATH'}")
    elif isinstance(exc, error.RateLimitError):
        text = (f"{what}: Voyage rate limit (HTTP 429) after {limits.tries}: "
                f"{detail}{tail or '; wait and re-run'}")
    elif isinstance(exc, error.APIConnectionError) and not status:
        text = f"{what}: cannot reach the Voyage API at {address(sdk)} ({detail}){tail}"
    else:
        kind = f"HTTP {status}" if status else type(exc).__name__
        text = f"{what}: Voyage request failed ({kind}): {detail}{tail}"
    refused = isinstance(exc, error.AuthenticationError) and status
    return (KeyRejected if refused else RagkitError)(scrub(text, sdk.api_key))


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
