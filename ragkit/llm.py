"""One way to reach Claude: the real SDK client or the offline stand-in, cached and metered.

What it is:
- `make_client()`: `anthropic.Anthropic()` when `ANTHROPIC_API_KEY` is set (the SDK also
  reads `ANTHROPIC_BASE_URL`); otherwise the same class with
  `http_client=httpx2.Client(transport=ragkit.standin.transport())`, so offline runs go
  through the SDK's own request serialization and reply parsing.
- `LLM`: `create(**params)` and `count_tokens(**params)` in front of a client. Every call
  goes through the paid-call cache (`ragkit.cache`): a hit returns the stored reply through
  the same parsing as a fresh one and counts as tokens saved, not spent. SDK errors left
  after the SDK's own retries become one `RagkitError` line (never with the API key).
- `UsageLog` / `run_usage()`: per-model sums of the four usage counters of every reply in
  this process (the run), priced with `ragkit.pricing.PRICES`; stand-in replies are summed
  but never priced ("offline stand-in, no cost").

- `LLM.stream(**params)`: the same through `messages.stream`, yielding the SDK's events.

Time and retries: the real client waits at most 10 s to connect and 120 s for each read,
and retries twice (`ragkit.online.budget()`; RAGKIT_API_CONNECT_TIMEOUT, RAGKIT_API_TIMEOUT,
RAGKIT_API_RETRIES or the CLI's --api-timeout / --api-retries), so an endpoint that accepts
the connection and never answers is given up after about 3 × 120 s, not the SDK's 3 × 600 s.

What it is not: a retry layer (the SDK's rules apply: 408/409/429/5xx, timeouts and
connection errors, honouring `retry-after`).
"""
from __future__ import annotations

import inspect
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from ragkit import standin
from ragkit.cache import CallCache, request_key
from ragkit.documents import RagkitError
from ragkit.money import dollars as money_text
from ragkit.online import HOW_TO_CHANGE, Budget, budget, scrub
from ragkit.pricing import (PRICES, PRICES_DATE, CorpusCost, CostTable, Price, Usage,  # noqa: F401
                            contextualization_cost, cost, measured_contextualization_cost,
                            price, project_corpus_cost, uncached_cost)

def _standin_version() -> str:
    """A digest of the stand-in's own source, so its cached replies are keyed by the program
    that wrote them: after a change to a rule, old replies are never served again."""
    import hashlib
    from pathlib import Path
    digest = hashlib.sha256()
    for path in sorted(Path(standin.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


STANDIN_BACKEND = f"offline-stand-in@{_standin_version()}"


def has_api_key() -> bool:
    """True when `ANTHROPIC_API_KEY` is set (checked before choosing the online path)."""
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


def make_client(max_retries: int | None = None,
                transport: httpx2.BaseTransport | None = None) -> anthropic.Anthropic:
    """The real client with a key in the environment; the offline stand-in otherwise.

    The real client waits and retries within `ragkit.online.budget()` (connect 10 s, each
    read 120 s, 2 retries by default, or RAGKIT_API_CONNECT_TIMEOUT / RAGKIT_API_TIMEOUT /
    RAGKIT_API_RETRIES) instead of the SDK's 600 s per attempt; `max_retries` overrides the
    retries. `transport` forces an in-process transport (a test's recording or failing
    handler).
    """
    limits = budget()
    retries = limits.retries if max_retries is None else max_retries
    timeout = httpx2.Timeout(limits.read, connect=limits.connect)
    if transport is None and has_api_key():
        return anthropic.Anthropic(max_retries=retries, timeout=timeout)
    return anthropic.Anthropic(api_key="offline-stand-in", base_url="http://offline-stand-in",
                               max_retries=retries, timeout=timeout, http_client=httpx2.Client(
                                   transport=transport or standin.transport()))


@dataclass
class ModelUsage:
    """One model's tokens in a run: sent to the API, served from the cache, unpriced."""

    requests: int = 0
    cache_hits: int = 0
    spent: Usage = field(default_factory=Usage)
    saved: Usage = field(default_factory=Usage)
    standin: int = 0  # replies from the offline stand-in (no cost)


class UsageLog:
    """Thread-safe per-model sums of reply usage; `summary()` prints tokens and dollars."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.models: dict[str, ModelUsage] = defaultdict(ModelUsage)

    def record(self, model: str, usage: Usage, cached: bool, priced: bool) -> None:
        with self._lock:
            row = self.models[model]
            if cached:
                row.cache_hits += 1
                row.saved += usage
            else:
                row.requests += 1
                row.spent += usage
            row.standin += not priced

    def dollars(self, model: str) -> float | None:
        """Dollars spent on `model` in this run; None when nothing of it was priced."""
        row = self.models.get(model)
        if row is None or row.standin or model not in PRICES:
            return None
        return cost(row.spent, model)

    def summary(self, split_cache: bool = True) -> str:
        """One line per model: calls, tokens and dollars. `split_cache=False` counts calls
        answered by the paid-call cache with the others (tokens are what the calls carry), so
        the line does not depend on what an earlier run left in the cache."""
        lines = []
        for model, row in sorted(self.models.items()):
            s, dollars = row.spent, self.dollars(model)
            money = "offline stand-in, no cost" if dollars is None else money_text(dollars)
            saved = "" if dollars is None else f", {money_text(cost(row.saved, model))} saved"
            calls = f"{row.requests} requests, {row.cache_hits} from the call cache"
            if not split_cache:
                s, calls = s + row.saved, f"{row.requests + row.cache_hits} calls"
                money = "offline stand-in, no cost" if dollars is None else \
                    f"{money_text(cost(s, model))} without the call cache"
                saved = ""
            lines.append(f"{model}: {calls}; tokens in {s.input}, out {s.output}, cache write "
                         f"{s.cache_write}, cache read {s.cache_read}; {money}{saved}")
        return "\n".join(lines) or "no Claude calls"

    def reset(self) -> None:
        with self._lock:
            self.models.clear()


RUN = UsageLog()


def run_usage() -> UsageLog:
    """The usage log every `LLM` of this process records to unless given its own."""
    return RUN


def limits_of(client: anthropic.Anthropic) -> Budget:
    """The connect and read timeouts and the retries a client was made with."""
    timeout = client.timeout
    if isinstance(timeout, httpx2.Timeout):
        return Budget(timeout.connect or 0.0, timeout.read or 0.0, client.max_retries)
    seconds = float(timeout) if isinstance(timeout, (int, float)) else 0.0
    return Budget(seconds, seconds, client.max_retries)


def explain(exc: Exception, model: str, client: anthropic.Anthropic | None = None) -> str:
    """One line for an SDK failure (after its retries); never contains a key
    (`ragkit.online.scrub`). `client` gives the endpoint and the time and retries spent on
    a timeout or a dead connection."""
    base = str(client.base_url) if client is not None else "http://offline-stand-in"
    at = "" if base.startswith("http://offline-stand-in") else f" at {base}"
    limits = limits_of(client) if client is not None else budget()
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        err = body.get("error") if isinstance(body.get("error"), dict) else {}
        detail = f"{exc.status_code} {err.get('type', '')}: {err.get('message', '')}".strip()
        if isinstance(exc, anthropic.AuthenticationError):
            return scrub(f"the Anthropic API rejected the key in ANTHROPIC_API_KEY ({detail})")
        if isinstance(exc, anthropic.NotFoundError) and "model" in str(err.get("message")):
            return scrub(f"the Anthropic API does not know model '{model}' ({detail})")
        if isinstance(exc, (anthropic.RateLimitError, anthropic.InternalServerError)):
            return scrub(f"the Anthropic API kept failing after the SDK's retries ({detail})")
        return scrub(f"the Anthropic API refused the request ({detail})")
    if isinstance(exc, anthropic.APITimeoutError):
        return scrub(f"the Anthropic API{at} did not answer ({limits.describe()}; change "
                     f"with {HOW_TO_CHANGE})")
    if isinstance(exc, anthropic.APIConnectionError):
        return scrub(f"cannot reach the Anthropic API{at} after {limits.tries} "
                     f"({exc.__cause__ or exc})")
    return scrub(f"malformed reply from the Anthropic API ({type(exc).__name__}: {exc})")


def _sdk_args(params: dict[str, Any], known: set[str]) -> dict[str, Any]:
    """Body parameters as SDK arguments; those it has no argument for go in `extra_body`."""
    extra = {k: v for k, v in params.items() if k not in known}
    return {**{k: v for k, v in params.items() if k in known},
            **({"extra_body": extra} if extra else {})}


def _call(model: str, method: Callable[..., Any], kwargs: dict[str, Any],
          client: anthropic.Anthropic | None = None) -> Any:
    """`method(**kwargs)` with SDK failures turned into one `RagkitError` line."""
    try:
        return method(**kwargs)
    except (anthropic.APIError, ValueError) as exc:  # ValueError: a body that is not JSON
        raise RagkitError(explain(exc, model, client)) from None


class LLM:
    """Cached, metered Messages API calls through one client (see module docstring)."""

    def __init__(self, client: anthropic.Anthropic | None = None,
                 cache: CallCache | None | bool = True, usage: UsageLog | None = None) -> None:
        self.client = client if client is not None else make_client()
        self.cache = CallCache() if cache is True else (cache or None)
        self.usage = usage if usage is not None else RUN
        base = str(self.client.base_url)
        self.offline = base.startswith("http://offline-stand-in")
        self.backend = STANDIN_BACKEND if self.offline else base
        self._create_args = set(inspect.signature(self.client.messages.create).parameters)

    @property
    def source(self) -> str:
        """What answers: the offline stand-in or the API's address (for one-line notices)."""
        return standin.NAME if self.offline else f"the Anthropic API at {self.backend}"

    def create(self, *, check: Callable[[Message], str | None] | None = None,
               **params: Any) -> Message:
        """`messages.create` with these body parameters, from the cache when possible.

        Parameters the SDK has no argument for (e.g. `temperature`) go in `extra_body`.
        `check(reply)` returns a complaint about an unusable reply, which is then raised
        and not cached (so the next run asks again).
        """
        key = request_key("/v1/messages", self.backend, params)
        cached = self._cached(key, params)
        if cached is not None:
            return cached
        message = _call(params["model"], self.client.messages.create,
                        _sdk_args(params, self._create_args), self.client)
        return self._keep(key, params, message, check)

    def stream(self, **params: Any) -> Generator[Any, None, Message]:
        """`messages.stream` with these body parameters: yields the SDK's stream events as
        they arrive and returns the final message (`message = yield from llm.stream(...)`).

        Cached and metered like `create`, under the same key (a streamed and an unstreamed
        call of one request share an entry): a cache hit yields no events and returns the
        stored reply at once.
        """
        key = request_key("/v1/messages", self.backend, params)
        cached = self._cached(key, params)
        if cached is not None:
            return cached
        args = _sdk_args(params, set(inspect.signature(self.client.messages.stream).parameters))
        try:
            with self.client.messages.stream(**args) as events:
                yield from events
                message = events.get_final_message()
        except (anthropic.APIError, ValueError) as exc:
            raise RagkitError(explain(exc, params["model"], self.client)) from None
        return self._keep(key, params, message, None)

    def _cached(self, key: str, params: dict[str, Any]) -> Message | None:
        entry = self.cache.get(key) if self.cache else None
        if entry is None:
            return None
        self.usage.record(params["model"], entry.usage, cached=True, priced=entry.priced)
        return Message.construct(**entry.reply)  # as the SDK parses a reply

    def _keep(self, key: str, params: dict[str, Any], message: Any,
              check: Callable[[Message], str | None] | None) -> Message:
        """Meter a fresh reply, check it, and store it in the cache."""
        if not isinstance(message, Message) or not isinstance(message.content, list) \
                or message.usage is None:
            raise RagkitError(explain(ValueError("no content or usage"), params["model"]))
        usage = Usage.of(message.usage)
        priced = not str(message.id or "").startswith(standin.STANDIN_ID_PREFIX)
        self.usage.record(params["model"], usage, cached=False, priced=priced)
        complaint = check(message) if check is not None else None
        if complaint:  # paid for, but not kept: the next run asks again
            raise RagkitError(explain(ValueError(complaint), params["model"]))
        if self.cache:
            self.cache.put(key, "/v1/messages", params["model"], message.to_dict(), usage,
                           priced)
        return message

    def count_tokens(self, **params: Any) -> int:
        """`messages.count_tokens` (free; cached so a repeated run sends nothing)."""
        key = request_key("/v1/messages/count_tokens", self.backend, params)
        entry = self.cache.get(key) if self.cache else None
        if entry is not None:
            return int(entry.reply["input_tokens"])
        reply = _call(params["model"], self.client.messages.count_tokens, params,
                      self.client)
        tokens = getattr(reply, "input_tokens", None)
        if not isinstance(tokens, int):
            raise RagkitError(explain(ValueError("no input_tokens"), params["model"]))
        if self.cache:
            self.cache.put(key, "/v1/messages/count_tokens", params["model"],
                           {"input_tokens": tokens}, Usage(), priced=not self.offline)
        return tokens

