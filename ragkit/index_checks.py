"""An index's options checked: read back from index.json, or given on the command line.

What it is: `read_config(folder, manifest)` — index.json's `config` as an `IndexConfig`, each
field's type and what it names checked, one line naming `config.<field>` (a hand-edited
`"embedder": 7` was a traceback in search, `"chunk_size": "x"` one in `--update`) — and
`check_config(config)`, the same checks and the embedder's name, run by the command line
before any document is read (a mistyped name was refused only after a whole folder loaded).

What it is not: a check that the index's files agree with the config (`ragkit.index_folder`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragkit.chunking import ChunkerConfig
from ragkit.config import IndexConfig, field_error
from ragkit.contextualize import FACTORIES, get_contextualizer
from ragkit.documents import RagkitError, where
from ragkit.embed import check_name
from ragkit.lexical import get_tokenizer

__all__ = ["IndexConfig", "check_config", "read_config"]


def read_config(folder: Path, manifest: dict[str, Any]) -> IndexConfig:
    """index.json's `config` as an `IndexConfig`, each field's type checked against the
    default's (a hand-edited `"embedder": 7` or `"chunk_size": "x"` was a traceback later)."""
    path, values = folder / "index.json", manifest.get("config")
    if not isinstance(values, dict):
        raise RagkitError(f"{where(path, None, 'config')}: expected an object")
    known = {f.name for f in dataclasses.fields(IndexConfig)}
    for name, value in values.items():
        wrong = field_error(name, value) if name in known else "not an index option"
        if wrong:
            raise RagkitError(f"{where(path, None, 'config.' + name)}: {wrong}")
    config = IndexConfig(**values)
    for name, check in _checks(config).items():  # what `--update` would fail on later, unnamed
        try:
            check()
        except RagkitError as exc:
            raise RagkitError(f"{where(path, None, 'config.' + name)}: {exc}") from None
    return config


def check_config(config: IndexConfig) -> None:
    """The names and sizes `config` gives, checked before any document is read (a mistyped
    embedder, tokenizer or contextualizer was refused only once a whole folder was loaded)."""
    if config.embedder:  # an index on disk may name one its program registers: not checked
        check_name(config.embedder)
    for check in _checks(config).values():
        check()


def _checks(config: IndexConfig) -> dict[str, Callable[[], object]]:
    """Config field -> the check of what it names: chunk sizes, contextualizer, tokenizer."""
    return {"chunk_size": lambda: ChunkerConfig(config.chunk_size, config.overlap),
            "contextualizer": lambda: config.contextualizer in FACTORIES
            or get_contextualizer(config.contextualizer),
            "tokenizer": lambda: get_tokenizer(config.tokenizer)}
