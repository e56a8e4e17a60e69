"""The whole-reply deadline of a call that is not streamed: a reply that trickles in is cut.

Why: --api-timeout / RAGKIT_API_TIMEOUT is, for both HTTP libraries, a timeout on each read.
An endpoint that accepts a request and then sends a byte every few seconds (each read well
within the timeout: a broken proxy, a server stuck writing) held a Claude or Voyage call for
ever. So once a reply that is not streamed begins (its status line and headers are in, which
the timeout on each read already bounds), all the rest of it must arrive within that same
number of seconds: a non-streamed attempt is given up after about twice the timeout at most.
Counting from the reply, not the request, leaves the upload of a large request (a Message
Batch of many MB) its own time. Past the deadline the reply is cut at the next piece that
arrives, and the call fails as a read timeout: each SDK retries it by its own rules, and
`trickled_after(exc)` lets the one error line say what happened ("gave up after 1 s: the
reply trickled in ...").

What it is:
- `httpx_hooks()`: event hooks for an `httpx2.Client` (`anthropic.DefaultHttpxClient`, which
  keeps the SDK's proxies, keep-alive and connection limits, `ragkit.llm.make_client`; the
  Voyage Batch API client, `ragkit.voyage_batch`): the response hook, run once the headers
  are in, wraps the body of a reply that is not streamed so that a piece arriving past the
  deadline raises.
- `requests_session(connection_retries)`: a `requests.Session` for voyageai 0.5, which reads
  the session from its `voyageai.requestssession` hook (`ragkit.voyage.client`): the SDK's
  own session (an HTTPAdapter with those connection retries on https) plus a response hook
  doing the same for each request not sent with `stream=True`.
- `Trickled`: what the cut raises (an `httpx2.ReadTimeout` or a `requests` ReadTimeout, as
  each library's own read timeout, so each SDK treats it as one); `trickled_after(exc)` finds
  it in an SDK error's causes and returns its seconds.
- `Stalled`: what a read of such a body that waits past the timeout raises (the reply began,
  then nothing more came), as each library's read timeout; `stalled_after(exc)` finds it.
  requests itself turns urllib3's read timeout inside a body into a ConnectionError, which
  voyageai does not retry and `ragkit.voyage.failure` reported as "cannot reach the Voyage
  API".

What it is not: a limit on a streamed reply. `ragkit ask --stream`, the Message Batches
results file and the Voyage Batch API's output file are read as they arrive and may rightly
take minutes: each of their reads still waits up to the timeout, with no deadline for the
whole. Which calls are streamed is what the request asks for (`"stream": true` in its JSON
body, an Accept naming another type than JSON, requests' `stream=True`, or the request
extension `STREAMED`, which `ragkit.voyage_batch` fetches the output file with), never what
the server answers, so a reply cannot lift its deadline by calling itself a stream. Nor does
it cut a server that trickles its status line and headers: both libraries read those before
a hook runs (h11 caps them at 16 KB, http.client at 100 lines).
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import requests
import requests.adapters
import urllib3.exceptions


STREAMED = "ragkit_streamed"  # a request extension: its reply may take minutes in all


class Trickled(Exception):
    """A reply that was not whole `seconds` after it began."""

    seconds: float = 0.0


class TrickledHttpx(Trickled, httpx2.ReadTimeout):
    """`Trickled` as httpx2 raises a read timeout (the Anthropic SDK retries it)."""


class TrickledRequests(Trickled, requests.exceptions.ReadTimeout):
    """`Trickled` as requests raises a read timeout (voyageai retries it as `error.Timeout`)."""


class Stalled(Exception):
    """A reply that began, then sent nothing more for `seconds` (one read's timeout)."""

    seconds: float = 0.0


class StalledHttpx(Stalled, httpx2.ReadTimeout):
    """`Stalled` as httpx2 raises a read timeout."""


class StalledRequests(Stalled, requests.exceptions.ReadTimeout):
    """`Stalled` as requests raises a read timeout (voyageai retries it as `error.Timeout`)."""


def _cut(kind: type[Trickled] | type[Stalled], seconds: float, **kwargs: Any) -> Exception:
    """A `kind` saying the reply was cut `seconds` after it began, or (a `Stalled`) after
    `seconds` without a byte (`kwargs`: its library's)."""
    error = kind(f"the reply began, then nothing more came for {seconds:g} s"
                 if issubclass(kind, Stalled) else
                 f"the reply trickled in and was not whole {seconds:g} s after it began",
                 **kwargs)
    error.seconds = seconds
    return error


def _seconds_of(exc: BaseException, kind: type[Trickled] | type[Stalled]) -> float | None:
    """The seconds of the first `kind` among `exc` and its causes, or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current.seconds
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def trickled_after(exc: BaseException) -> float | None:
    """The deadline, in seconds, that cut `exc`'s reply (a `Trickled` among its causes)."""
    return _seconds_of(exc, Trickled)


def stalled_after(exc: BaseException) -> float | None:
    """The read timeout, in seconds, a reply that began waited past (a `Stalled` among
    `exc`'s causes), or None."""
    return _seconds_of(exc, Stalled)


def asks_for_stream(request: httpx2.Request) -> bool:
    """True when `request` asks for a reply read as it arrives: `"stream": true` in its JSON
    body (`messages.stream`, `create(stream=True)`), an Accept naming neither JSON nor
    `*/*` (the Message Batches results file asks for `application/binary`), or the extension
    `STREAMED` (the Voyage Batch API's output file, asked for as JSON)."""
    if request.extensions.get(STREAMED):
        return True
    accept = request.headers.get("accept", "*/*")
    if "json" not in accept and "*/*" not in accept:
        return True
    try:
        content = request.content
    except httpx2.RequestNotRead:  # a streamed upload: not a JSON body
        return False
    if b'"stream"' not in content:
        return False
    try:
        body = json.loads(content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


class _TimedBody(httpx2.SyncByteStream):
    """A reply's body that raises `TrickledHttpx` when a piece arrives after `deadline`."""

    def __init__(self, body: httpx2.SyncByteStream, request: httpx2.Request, deadline: float,
                 seconds: float) -> None:
        self.body, self.request, self.deadline, self.seconds = body, request, deadline, seconds

    @property
    def elapsed(self) -> Any:
        """The wrapped body's `elapsed`, which `httpx2.Response.elapsed` reads from here."""
        return getattr(self.body, "elapsed", None)

    def __iter__(self) -> Iterator[bytes]:
        pieces = iter(self.body)
        while True:
            try:
                piece = next(pieces)
            except StopIteration:
                return
            except httpx2.ReadTimeout:  # a read past the timeout, which is `seconds` too
                raise _cut(StalledHttpx, self.seconds, request=self.request) from None
            if time.monotonic() > self.deadline:
                raise _cut(TrickledHttpx, self.seconds, request=self.request)
            yield piece

    def close(self) -> None:
        self.body.close()


def _arm(response: httpx2.Response) -> None:
    """httpx2's response hook, run once the headers are in and before the body is read."""
    request = response.request
    seconds = (request.extensions.get("timeout") or {}).get("read")
    if not seconds or asks_for_stream(request):
        return
    response.stream = _TimedBody(response.stream, request, time.monotonic() + seconds, seconds)


def httpx_hooks() -> dict[str, list[Callable[[Any], None]]]:
    """`event_hooks` for an httpx2.Client: the whole-reply deadline (module docstring)."""
    return {"response": [_arm]}


class _TimedRaw:
    """A urllib3 reply whose `stream()` (what requests reads a body with) returns each piece
    as it comes (`read1`, not a read that waits for a whole chunk) and raises
    `TrickledRequests` when one arrives after `deadline`; everything else is the reply's."""

    def __init__(self, raw: Any, deadline: float, seconds: float) -> None:
        self.raw, self.deadline, self.seconds = raw, deadline, seconds

    def stream(self, amt: int | None = 2 ** 16,
               decode_content: bool | None = None) -> Iterator[bytes]:
        """The body's pieces as urllib3's `stream` gives them, each as soon as it is in."""
        while True:
            try:
                piece = self.raw.read1(amt, decode_content=decode_content)
            except urllib3.exceptions.ReadTimeoutError:  # requests: a ConnectionError
                self.raw.close()
                raise _cut(StalledRequests, self.seconds) from None
            if not piece:
                return
            if time.monotonic() > self.deadline:
                self.raw.close()  # the rest is not read: the connection is not reused
                raise _cut(TrickledRequests, self.seconds)
            yield piece

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def _arm_requests(response: requests.Response, *args: Any, stream: bool = False,
                  timeout: Any = None, **kwargs: Any) -> requests.Response:
    """requests' response hook, run once the headers are in and before the body is read."""
    seconds = timeout[1] if isinstance(timeout, tuple) else timeout
    if stream or not isinstance(seconds, (int, float)) or seconds <= 0:
        return response
    response.raw = _TimedRaw(response.raw, time.monotonic() + seconds, float(seconds))
    return response


def requests_session(connection_retries: int) -> requests.Session:
    """voyageai's session (`connection_retries` on https, as its `MAX_CONNECTION_RETRIES`)
    with the whole-reply deadline on every request not sent with `stream=True`."""
    session = requests.Session()
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=connection_retries))
    session.hooks["response"].append(_arm_requests)
    return session
