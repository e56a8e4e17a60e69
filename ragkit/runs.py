"""TREC run files: `qid Q0 doc_id rank score tag`, one line per retrieved chunk.

The format trec_eval, ranx and ir_measures read. Runs are written through `ragkit.atomic`:
a crash never leaves a truncated run behind, and an existing file is replaced only when it
is already a TREC run (`is_trec_run`), so a mistyped `--out` cannot destroy a user's file.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ragkit.atomic import write_text
from ragkit.documents import RagkitError, where
from ragkit.fusion import Ranking


def is_trec_run(path: Path | str) -> bool:
    """True for an empty file or one whose every non-blank line is `qid Q0 doc rank score tag`.

    This is what `write_trec` may overwrite; anything else (a user's notes, a JSONL file, a
    binary) is not a run.
    """
    try:
        with Path(path).open(encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if fields and (len(fields) != 6 or fields[1] != "Q0"):
                    return False
    except (OSError, UnicodeDecodeError):
        return False
    return True


def write_trec(path: Path | str, rankings: Mapping[str, Ranking], tag: str = "ragkit") -> Path:
    """Write {query id: [(chunk id, score), ...]} as a TREC run.

    Refuses (RagkitError) to replace an existing file that is not a TREC run.
    """
    lines = [f"{qid} Q0 {ident} {rank} {score:.6f} {tag}"
             for qid, ranking in rankings.items()
             for rank, (ident, score) in enumerate(ranking, start=1)]
    return write_text(path, "\n".join(lines) + ("\n" if lines else ""),
                      is_ours=is_trec_run, what="a TREC run")


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
