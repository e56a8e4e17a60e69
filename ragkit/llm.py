"""One way to reach Claude: the real SDK client or an offline backend, cached and metered.

What it is:
- `make_client()`: how a backend is chosen —
  1. `ANTHROPIC_API_KEY` set: `anthropic.Anthropic()` (the SDK also reads
     `ANTHROPIC_BASE_URL`);
  2. a `transport` given (a test's recording or failing handler): the same class over it;
  3. otherwise the registered offline backend (`ragkit.llm_backends.offline_backend()`, the
     offline stand-in `ragkit.standin` once `import ragkit` has registered it): the same
     class with `http_client=httpx2.Client(transport=backend.transport())`, so offline runs
     go through the SDK's own request serialization and reply parsing; an exception the
     backend raises is `OfflineBackendError` ("the offline stand-in failed (KeyError: …)",
     not retried), never an API that "cannot be reached";
  4. no key and no offline backend registered: one `RagkitError` line saying so.
  The online path cannot depend on the offline one: this module never imports an offline
  backend, it asks the registry for one only to build (or name, or key) an offline client,
  and the stand-in is registered by the face that builds clients (the root package).
- `LLM`: `create(**params)` and `count_tokens(**params)` in front of a client. Every call
  goes through the paid-call cache (`ragkit.cache`): a hit returns the stored reply through
  the same parsing as a fresh one and counts as tokens saved, not spent; a miss holds the
  request's lock across processes and threads (`ragkit.inflight`) and looks again, so two
  runs at once pay for it once; `before_send()` runs before a request leaves (a miss) and
  may stop it.
  SDK errors left after the SDK's own retries become one `RagkitError` line (never with the
  API key).
- `LLM.stream(**params)`: the same through `messages.stream`, yielding the SDK's events.
- `UsageLog` / `run_usage()` (`ragkit.usage_log`, re-exported): per-model sums of the four
  usage counters of every reply in this process (the run), priced with `ragkit.pricing.PRICES`;
  offline replies (ids starting `ragkit.llm_backends.OFFLINE_ID_PREFIX`) are never priced.

Time and retries: the real client waits at most 10 s to connect, 120 s for each read and 120 s
for the rest of a begun reply not streamed (`ragkit.whole_reply`), and retries twice
(`ragkit.online.budget()`; RAGKIT_API_*, --api-timeout / --api-retries): a silent endpoint is
given up after about 3 × 120 s, not the SDK's 3 × 600 s.

What it is not: a retry layer (the SDK's rules: 408/409/429/5xx, timeouts, connections).
"""
from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Generator
from contextlib import nullcontext
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from ragkit.cache import CallCache, request_key
from ragkit.documents import RagkitError
from ragkit.errors import KeyRejected
from ragkit.inflight import InFlight
from ragkit.llm_backends import (OFFLINE_BASE_URL, OFFLINE_ID_PREFIX, OfflineBackend,
                                 offline_backend)
from ragkit.llm_offline import Guarded, OfflineBackendError
from ragkit.online import Budget, budget, scrub
from ragkit.pricing import (PRICES, PRICES_DATE, CorpusCost, CostTable, Price, Usage,  # noqa: F401
                            contextualization_cost, cost, measured_contextualization_cost,
                            price, project_corpus_cost, uncached_cost)
from ragkit.usage_log import RUN, ModelUsage, UsageLog, run_usage  # noqa: F401
from ragkit.whole_reply import httpx_hooks, stalled_after, trickled_after


def _standin_version() -> str:
    """The offline backend's version now: a digest of the stand-in's own source, so its
    cached replies are keyed by the program that wrote them (`ragkit.standin.version`)."""
    return offline_backend().version()


@functools.lru_cache(maxsize=None)
def _offline_key(backend: OfflineBackend) -> str:
    """`offline-stand-in@<version>`: what the paid-call cache keys an offline backend's
    replies by, taken once per process per backend (the program is loaded once)."""
    return f"{backend.name.replace(' ', '-')}@{backend.version()}"


def __getattr__(name: str) -> str:
    """`STANDIN_BACKEND`: `_offline_key` of the registered offline backend, on first use."""
    if name == "STANDIN_BACKEND":
        return _offline_key(offline_backend())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def has_api_key() -> bool:
    """True when `ANTHROPIC_API_KEY` is set (checked before choosing the online path)."""
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


def make_client(max_retries: int | None = None,
                transport: httpx2.BaseTransport | None = None) -> anthropic.Anthropic:
    """The real client with a key in the environment; the offline stand-in otherwise.

    The real client waits and retries within `ragkit.online.budget()` (connect 10 s, each
    read 120 s and the rest of a begun reply not streamed 120 s, 2 retries by default; or
    RAGKIT_API_CONNECT_TIMEOUT / RAGKIT_API_TIMEOUT / RAGKIT_API_RETRIES) instead of the SDK's
    600 s per attempt; `max_retries` overrides the retries. `transport` forces an in-process
    transport (a test's recording or failing handler); without a key or a transport, the
    registered offline backend's (a RagkitError when none is registered).
    """
    limits = budget()
    retries = limits.retries if max_retries is None else max_retries
    timeout = httpx2.Timeout(limits.read, connect=limits.connect)
    if transport is None and has_api_key():
        http = anthropic.DefaultHttpxClient(timeout=timeout, event_hooks=httpx_hooks())
        return anthropic.Anthropic(max_retries=retries, timeout=timeout, http_client=http)
    if transport is None:
        backend = offline_backend()
        transport = Guarded(backend.transport(), backend.name)
    return anthropic.Anthropic(api_key="offline-stand-in", base_url=OFFLINE_BASE_URL,
                               max_retries=retries, timeout=timeout,
                               http_client=httpx2.Client(transport=transport))


def limits_of(client: anthropic.Anthropic) -> Budget:
    """The connect and read timeouts and the retries a client was made with."""
    timeout = client.timeout
    if isinstance(timeout, httpx2.Timeout):
        return Budget(timeout.connect or 0.0, timeout.read or 0.0, client.max_retries)
    seconds = float(timeout) if isinstance(timeout, (int, float)) else 0.0
    return Budget(seconds, seconds, client.max_retries)


def explain(exc: Exception, model: str, client: anthropic.Anthropic | None = None,
            streamed: bool = False) -> str:
    """One line for an SDK failure (after its retries), never with a key (`online.scrub`);
    `client`: endpoint, time and retries; a reply breaking off is retried unless `streamed`."""
    base = str(client.base_url) if client is not None else OFFLINE_BASE_URL
    at = "" if base.startswith(OFFLINE_BASE_URL) else f" at {base}"
    limits = limits_of(client) if client is not None else budget()
    if isinstance(exc, OfflineBackendError):
        return scrub(str(exc))
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        err = body.get("error") if isinstance(body.get("error"), dict) else {}
        detail = f"{exc.status_code} {err.get('type', '')}: {err.get('message', '')}".strip()
        if isinstance(exc, anthropic.AuthenticationError):
            return scrub(f"the Anthropic API rejected the key in ANTHROPIC_API_KEY ({detail})")
        if isinstance(exc, anthropic.NotFoundError) and "model" in str(err.get("message")):
            return scrub(f"the Anthropic API does not know model '{model}' ({detail})")
        if exc.status_code < 300:  # an `error` event in a stream that had begun
            return scrub(f"the Anthropic API reported an error mid-reply "
                         f"({detail.split(' ', 1)[1]}); a reply cut off is not retried")
        if isinstance(exc, (anthropic.RateLimitError, anthropic.InternalServerError)):
            tried = "not retried (retries 0)" if limits.retries == 0 else \
                f"{limits.tries} with the SDK's back-off"
            return scrub(f"the Anthropic API kept failing ({detail}; {tried})")
        return scrub(f"the Anthropic API refused the request ({detail})")
    if isinstance(exc, anthropic.APITimeoutError):  # silence, a reply that stalled or trickled
        return scrub(f"the Anthropic API{at} "
                     f"{limits.timed_out(trickled_after(exc), stalled_after(exc))}")
    if isinstance(exc, anthropic.APIConnectionError):
        cut = ("a streamed reply cut off mid-way is not retried" if streamed else
               "also when its reply breaks off before its end")
        return scrub(f"cannot reach the Anthropic API{at} ({exc.__cause__ or exc}; a request "
                     f"is tried {limits.tries_up_to}, {cut})")
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
        refused = isinstance(exc, anthropic.AuthenticationError)
        raise (KeyRejected if refused else RagkitError)(explain(exc, model, client)) from None


class LLM:
    """Cached, metered Messages API calls through one client (see module docstring)."""

    def __init__(self, client: anthropic.Anthropic | None = None,
                 cache: CallCache | None | bool = True, usage: UsageLog | None = None) -> None:
        self.client = client if client is not None else make_client()
        self.cache = CallCache() if cache is True else (cache or None)
        self.usage = usage if usage is not None else RUN
        base = str(self.client.base_url)
        self.offline = base.startswith(OFFLINE_BASE_URL)
        # the cache's and the journal's name for the API: "https://api.anthropic.com/" was
        # another than "https://api.anthropic.com", and every call was paid for again
        self.backend = _offline_key(offline_backend()) if self.offline else base.rstrip("/")
        self._create_args = set(inspect.signature(self.client.messages.create).parameters)
        self.before_send: Callable[[], None] = lambda: None  # `MessageBatches` calls it too

    @property
    def source(self) -> str:
        """What answers: the offline backend or the API's address (for one-line notices)."""
        return offline_backend().name if self.offline else f"the Anthropic API at {self.backend}"

    def create(self, *, check: Callable[[Message], str | None] | None = None,
               **params: Any) -> Message:
        """`messages.create` with these body parameters, from the cache when possible.

        Parameters the SDK has no argument for (e.g. `temperature`) go in `extra_body`.
        `check(reply)` returns a complaint about an unusable reply, which is then raised
        and not cached (so the next run asks again).
        """
        key = request_key("/v1/messages", self.backend, params)
        cached = self.cached(key, params)
        if cached is not None:
            return cached
        with self._sending(key):
            cached = self.cached(key, params)  # another run's, sent while this one waited
            if cached is not None:
                return cached
            self.before_send()
            message = _call(params["model"], self.client.messages.create,
                            _sdk_args(params, self._create_args), self.client)
            return self._keep(key, params, message, check)

    def _sending(self, key: str):
        """The cross-process lock of a paid call (`ragkit.inflight`); none without a cache
        that can be written (nothing to find there afterwards)."""
        if not self.cache or self.cache.read_only or self.offline:
            return nullcontext()
        return InFlight(self.cache.path).holding(key)

    def stream(self, **params: Any) -> Generator[Any, None, Message]:
        """`messages.stream` with these body parameters: yields the SDK's stream events as
        they arrive and returns the final message (`message = yield from llm.stream(...)`).

        Cached and metered like `create`, under the same key (a streamed and an unstreamed
        call of one request share an entry): a cache hit yields no events and returns the
        stored reply at once. A miss holds the request's in-flight lock while it streams, as
        `create` does: two `ragkit ask --stream` of one question at once paid twice.
        """
        key = request_key("/v1/messages", self.backend, params)
        cached = self.cached(key, params)
        if cached is not None:
            return cached
        with self._sending(key):
            cached = self.cached(key, params)  # another run's, streamed while this one waited
            if cached is not None:
                return cached
            self.before_send()
            args = _sdk_args(params,
                             set(inspect.signature(self.client.messages.stream).parameters))
            try:
                with self.client.messages.stream(**args) as events:
                    yield from events
                    message = events.get_final_message()
            except (anthropic.APIError, ValueError, AttributeError, TypeError) as exc:
                # the SDK adds up a stream's usage as it goes: an event without it was an
                # AttributeError traceback after the text had been printed
                raise RagkitError(explain(exc, params["model"], self.client, True)) from None
            return self._keep(key, params, message, None)

    def cached(self, key: str, params: dict[str, Any]) -> Message | None:
        """The cached reply under `key` (metered as a cache hit), or None."""
        entry = self.cache.get(key) if self.cache else None
        if entry is None or entry.reply.get("stop_reason") is None:  # None: a cut-off reply
            return None
        self.usage.record(params["model"], entry.usage, cached=True, priced=entry.priced)
        return Message.construct(**entry.reply)  # as the SDK parses a reply

    def _keep(self, key: str, params: dict[str, Any], message: Any,
              check: Callable[[Message], str | None] | None) -> Message:
        """Meter a fresh reply, check it, and store it in the cache. A reply without a stop
        reason (a stream cut before its end) is metered but neither returned nor kept."""
        if not isinstance(message, Message) or not isinstance(message.content, list):
            raise RagkitError(explain(ValueError("no content"), params["model"]))
        usage = Usage.of(message.usage)  # none reported: kept, its cost said to be unknown
        priced = not str(message.id or "").startswith(OFFLINE_ID_PREFIX)
        self.usage.record(params["model"], usage, cached=False, priced=priced)
        if message.stop_reason is None:  # a stream cut before message_stop: not the answer
            raise RagkitError(f"the reply from {self.source} broke off before its end (no stop "
                              f"reason: cut mid-reply); nothing was kept: run again")
        complaint = check(message) if check is not None else None
        if complaint:  # paid for, but not kept: the next run asks again
            raise RagkitError(explain(ValueError(complaint), params["model"]))
        if self.cache:
            self.cache.put(key, "/v1/messages", params["model"], message.to_dict(), usage,
                           priced)
        return message

    def count_tokens(self, **params: Any) -> int:
        """`messages.count_tokens`: free, so cached, or sent unkept where the cache is read-only."""
        key = request_key("/v1/messages/count_tokens", self.backend, params)
        entry = self.cache.get(key, free=True) if self.cache else None
        if entry is not None:
            return int(entry.reply["input_tokens"])
        self.before_send()
        reply = _call(params["model"], self.client.messages.count_tokens, params, self.client)
        tokens = getattr(reply, "input_tokens", None)
        if not isinstance(tokens, int):
            raise RagkitError(explain(ValueError("no input_tokens"), params["model"]))
        if self.cache and not self.cache.read_only:
            self.cache.put(key, "/v1/messages/count_tokens", params["model"],
                           {"input_tokens": tokens}, Usage(), priced=not self.offline)
        return tokens

