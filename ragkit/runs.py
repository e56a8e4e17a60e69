"""TREC run files: `qid Q0 doc_id rank score tag`, one line per retrieved chunk.

The format trec_eval, ranx and ir_measures read. Files are written to a temporary name and
renamed, so a crash never leaves a truncated run behind.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ragkit.documents import RagkitError, where
from ragkit.fusion import Ranking


def write_atomic(path: Path | str, text: str) -> Path:
    """Write `text` to `path` via a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_trec(path: Path | str, rankings: Mapping[str, Ranking], tag: str = "ragkit") -> Path:
    """Write {query id: [(chunk id, score), ...]} as a TREC run."""
    lines = [f"{qid} Q0 {ident} {rank} {score:.6f} {tag}"
             for qid, ranking in rankings.items()
             for rank, (ident, score) in enumerate(ranking, start=1)]
    return write_atomic(path, "\n".join(lines) + ("\n" if lines else ""))


def read_trec(path: Path | str) -> dict[str, Ranking]:
    """Read a TREC run back, each query's list sorted by score (best first)."""
    rankings: dict[str, Ranking] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise RagkitError(f"{where(path, number)}: expected 6 fields "
                                  f"(qid Q0 doc rank score tag), got {len(fields)}")
            try:
                score = float(fields[4])
            except ValueError:
                raise RagkitError(f"{where(path, number, 'score')}: not a number") from None
            rankings.setdefault(fields[0], []).append((fields[2], score))
    return {qid: sorted(r, key=lambda item: -item[1]) for qid, r in rankings.items()}
