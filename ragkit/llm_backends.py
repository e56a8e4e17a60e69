"""Which program answers Claude calls when no ANTHROPIC_API_KEY is set: a one-slot registry.

What it is: `ragkit.llm` builds the real SDK client when a key is set; otherwise it asks this
module for the *offline backend* — a program that answers the Messages API in process (the
offline stand-in, `ragkit.standin`) — and gives its transport to the same SDK client class.
- `register_offline(factory)`: a face (the root package `ragkit`, a test, an application)
  says which backend that is. `factory()` returns an `OfflineBackend`; it is called once, on
  the first offline client, so registering costs nothing at import. The last one wins.
- `register_offline_module(name)`: the same for a module that provides
  `offline_backend() -> OfflineBackend`, imported only then. This is how `ragkit/__init__.py`
  registers the stand-in: `import ragkit` stays as cheap as before (the stand-in's rules
  load the answering code and the Anthropic SDK), and no module below the faces imports it.
- `offline_backend()`: the registered backend; with none registered, a `RagkitError` line
  saying so (set ANTHROPIC_API_KEY, or register one).
- `OFFLINE_BASE_URL`, `OFFLINE_ID_PREFIX`: the address an offline client is made with, and
  the prefix of the reply ids an offline backend writes (a reply whose id has it cost
  nothing, even when the backend is served over a socket). They live here, not in a
  backend, so the online path reads them without loading one.

What it is not: a choice between online services (with a key, `ragkit.llm` always builds
`anthropic.Anthropic()`), nor a plugin loader that scans installed packages.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragkit.documents import RagkitError

OFFLINE_BASE_URL = "http://offline-stand-in"
OFFLINE_ID_PREFIX = "msg_offline_standin_"


@dataclass(frozen=True)
class OfflineBackend:
    """What `ragkit.llm` needs of an offline backend."""

    name: str  # who answers, in one-line notices ("offline stand-in")
    transport: Callable[[], Any]  # a new in-process httpx2 transport answering the API
    version: Callable[[], str]  # the program's version now (e.g. a digest of its source),
    # part of the paid-call cache key, so a changed program is never served old replies


Factory = Callable[[], OfflineBackend]
_factory: list[Factory] = []  # the registered factory (one slot)
_loaded: dict[Factory, OfflineBackend] = {}  # what it returned, made once


def register_offline(factory: Factory) -> None:
    """Make `factory()` the offline backend (called on first use; replaces any earlier one)."""
    _factory[:] = [factory]


def register_offline_module(name: str) -> None:
    """Register the backend that module `name` provides as `offline_backend()`, importing
    the module only when an offline client is first built."""
    def load() -> OfflineBackend:
        return importlib.import_module(name).offline_backend()
    register_offline(load)


def offline_backend() -> OfflineBackend:
    """The registered offline backend (made on first call), or a RagkitError if none is."""
    if not _factory:
        raise RagkitError("no ANTHROPIC_API_KEY is set and no offline backend is registered: "
                          "set the key, or register one with "
                          "ragkit.llm_backends.register_offline")
    factory = _factory[0]
    if factory not in _loaded:
        _loaded[factory] = factory()
    return _loaded[factory]
