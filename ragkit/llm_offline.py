"""An offline backend's transport for the SDK client: its own failures named as its own.

What it is: `Guarded(transport, name)`, the in-process transport `ragkit.llm.make_client`
gives the SDK client without a key, and `OfflineBackendError`, what it raises when the
backend (`ragkit.llm_backends`) fails while answering.

Why: the SDK words any transport exception as a connection error, which `ragkit.llm.explain`
reads as an API that cannot be reached; a bug in the offline program is not that. Apart from
`ragkit.llm_backends` because that registry is imported by `import ragkit`, which must not
load the SDK.

What it is not: a retry or a fallback: the error stops the call as any SDK error does.
"""
from __future__ import annotations

import anthropic
import httpx2


class OfflineBackendError(anthropic.APIError):
    """The offline backend raised while answering: a bug in that program, not a network
    fault. An `APIError`, so every place that turns SDK failures into one line catches it;
    neither a connection error nor a status error, so the SDK does not retry it."""


class Guarded(httpx2.BaseTransport):
    """An offline backend's in-process transport whose own exceptions become
    `OfflineBackendError` (naming the backend and the error's class), instead of the SDK's
    "connection error" — which `explain` words as an API that cannot be reached. httpx2's
    transport errors pass through as they are: those are what a network failure raises."""

    def __init__(self, inner: httpx2.BaseTransport, name: str) -> None:
        self.inner, self.name = inner, name

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return self.inner.handle_request(request)
        except httpx2.TransportError:
            raise
        except Exception as exc:
            raise OfflineBackendError(
                f"the {self.name} failed ({type(exc).__name__}: {exc}): a bug in it, not a "
                f"network fault", request, body=None) from exc

    def close(self) -> None:
        self.inner.close()
