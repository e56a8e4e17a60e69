"""One loaded copy of a local model's file per process: the parsed weights, tokenizer and
ONNX Runtime session shared by every embedder object made over the same file.

Why: a notebook, `ragkit tune` or a test builds and opens many pipelines, and each made its
own embedder, which built its session again — about 2 s and the unpacked weights once more
for e5-small, 1.4 s for MiniLM. The key is the file's resolved path, size and modification
time, so a file replaced (a re-install) is loaded anew. Each embedder object still checks its
files against their pinned sha256 (`models.verify`) when it is made; what is shared is only
what was built from a file that passed. An ONNX Runtime session may be run from many threads
at once, which is how the embedders use it.

What it is not: a cache across processes, nor of vectors (that is `ragkit.embed.cache`).
Nothing is ever dropped: a process keeps what it loaded, as one embedder object did.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_LOADED: dict[tuple[str, str, int, int], Any] = {}
_LOCK = threading.Lock()


def shared(what: str, path: Path, load: Callable[[], T]) -> T:
    """`load()`'s result for `what` built from the file `path`, made once per process for
    that file's path, size and modification time (under one lock: two threads asking at once
    load it once)."""
    stat = Path(path).stat()
    key = (what, str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = load()
        return _LOADED[key]
