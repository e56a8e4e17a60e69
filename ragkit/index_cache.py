"""Build each index once per cookbook run: a folder of built indexes the notebooks share.

What it is: while `$RAGKIT_INDEX_CACHE` names a folder, `Pipeline.build` looks there for the
index it is asked to build — keyed by sha256 of the documents, the chunks given, the
`IndexConfig` and the embedder's name and weights fingerprint — and loads it
(`Pipeline.load`) instead of chunking, contextualizing, fitting BM25 and embedding again; a
miss builds the index and saves it there. `ragkit cookbook run`, `sweep` and `refresh` set the
variable to a temporary folder for the command (`shared()`) and delete it at the end (a
killed command's, at the start of the next), so
notebooks 02, 03 and 04 (the shipped corpus, structural context, `auto`) and 01 and 06 (no
context, MiniLM) each build their index once per run instead of once per notebook.

What it is not: a cache a reader sees. Unset — a notebook run in JupyterLab or under pytest —
nothing changes. Indexes built with an in-code embedder (`Pipeline.build(embedder=...)`) are
never cached (an object has no name to key by), nor those of the `claude` contextualizer,
whose build counts calls and prints notes a notebook shows (and makes API calls online).
A loaded index searches exactly like the one built (the index folder stores every part).
Notebooks run side by side (`ragkit cookbook run --jobs 2`) build an index they share once:
the first takes a lock file beside its folder, the others wait for it and load what it saved.

Why not the embedding cache alone: it already makes repeated texts cheap, but a build still
chunks, contextualizes, measures every window's tokens, hashes and looks up every window and
fits BM25 — seconds to tens of seconds per build, paid again in each notebook.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Protocol, TypeVar

from filelock import FileLock

from ragkit.config import IndexConfig
from ragkit.documents import Chunk, Document, RagkitError
from ragkit.embed import fingerprint_of, get_embedder
from ragkit.stale_temp import scratch

ENV = "RAGKIT_INDEX_CACHE"
PREFIX = "ragkit-indexes-"  # the shared folder's name in the system's temporary folder
UNCACHED_CONTEXTUALIZERS = ("claude",)


class Saveable(Protocol):
    """What this module needs of a built index (a `ragkit.pipeline.Pipeline`): saving it."""

    def save(self, folder: Path | str) -> Path: ...


Index = TypeVar("Index", bound=Saveable)


def folder() -> Path | None:
    """The shared folder named by `$RAGKIT_INDEX_CACHE`, or None when it is unset; one that
    is a file is a `RagkitError` naming the setting (it was "…: File exists")."""
    value = os.environ.get(ENV)
    if value and os.path.exists(value) and not os.path.isdir(value):
        raise RagkitError(f"{ENV}={value} is not a folder: it names where indexes built once "
                          f"are shared; unset it or name a folder")
    return Path(value) if value else None


@contextmanager
def shared() -> Iterator[Path]:
    """Set `$RAGKIT_INDEX_CACHE` to a new temporary folder for the block, then delete it.

    Already set (e.g. by an outer command), the block keeps using that folder. The folder is
    named by its process (`ragkit-indexes-PID.HOST-*`), and those of a command that no longer
    runs are deleted first: a run killed with -9, or by SIGTERM or SIGHUP (a closed
    terminal), never reaches the deletion at the end, and each left its indexes behind for
    good (up to 57 MB for a run of the shipped notebooks; a tmpfs /tmp holds them in
    memory)."""
    if folder() is not None:
        yield folder()  # type: ignore[misc]
        return
    with scratch(Path(tempfile.gettempdir()), PREFIX) as made:
        os.environ[ENV] = str(made)
        try:
            yield made
        finally:
            os.environ.pop(ENV, None)


def key(documents: Sequence[Document], config: IndexConfig, chunks: Sequence[Chunk] | None,
        embedder) -> str:
    """sha256 over everything a build reads: documents, given chunks, config, embedder."""
    digest = hashlib.sha256()

    def add(value) -> None:
        digest.update(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
                      .encode())
        digest.update(b"\n")

    add({"config": asdict(config),
         "embedder": None if embedder is None else [embedder.name, fingerprint_of(embedder),
                                                    embedder.dim, embedder.max_tokens]})
    for d in documents:
        add([d.id, d.text, d.title, d.metadata])
    add(None if chunks is None else len(chunks))
    for c in chunks or ():
        add([c.id, c.doc_id, c.text, c.context, c.start, c.end, c.metadata])
    return digest.hexdigest()


def cacheable(config: IndexConfig) -> bool:
    """Whether a build with `config` may be served from the shared folder (module docstring)."""
    return config.contextualizer not in UNCACHED_CONTEXTUALIZERS


def build_once(build: Callable[..., Index], load: Callable[..., Index], where: Path,
               documents: Sequence[Document], config: IndexConfig,
               chunks: Sequence[Chunk] | None, progress: bool) -> Index:
    """The index `build(documents, config, chunks, progress, embedder)` would make: loaded
    from `where` when a previous build saved it, else built and saved there."""
    embedder = None
    if config.embedder:
        embedder = get_embedder(config.embedder)
    target = where / key(documents, config, chunks, embedder)
    with FileLock(f"{target}.lock"):  # another process building it: wait, then load it
        if (target / "index.json").is_file():
            return load(target, embedder=embedder)
        pipeline = build(documents, config, chunks, progress, embedder)
        try:
            pipeline.save(target)
        except RagkitError:  # e.g. chunk metadata that is not JSON: serve it uncached
            pass
    return pipeline
