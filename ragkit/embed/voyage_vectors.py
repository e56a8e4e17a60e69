"""What a Voyage reply must hold to become vectors, checked before anything is kept.

What it is: `unit_rows(rows, dim, what, texts)`, the reply's vectors as float32 unit rows or
one `RagkitError` line (a count other than the texts sent, values that are not numbers,
another width, NaN / infinite or all-zero rows — each of which was stored in the embedding
cache and the index as if it were a vector); `problem_of(reader)`, the same checks as a
Batch API result check (`ragkit.voyage_batch.VoyageBatches.run`). What it is not: a client.
"""
from __future__ import annotations

import numpy as np

from ragkit.documents import RagkitError


def unit_rows(rows, dim: int, what: str, texts: int | None = None) -> np.ndarray:
    """Voyage's vectors as float32 unit rows, or one line saying what is wrong with them:
    fewer or more than the `texts` sent, not numbers, another width, NaN / infinite or all
    zero (which would be stored in the embedding cache and index as if they were vectors)."""
    if texts is not None and len(rows) != texts:
        raise RagkitError(f"{what}: Voyage returned {len(rows)} vectors for {texts} texts")
    try:
        out = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
    except (TypeError, ValueError):  # a null, a string or rows of different lengths
        raise RagkitError(f"{what}: Voyage returned vectors that are not lists of "
                          f"numbers") from None
    if out.shape[1] != dim:
        raise RagkitError(f"{what}: Voyage returned {out.shape[1]}-dim vectors, expected {dim}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    bad = ~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0)
    if bad.any():
        kind = "NaN or infinite values" if not np.isfinite(out[bad]).all() else "all zeros"
        raise RagkitError(f"{what}: Voyage returned {int(bad.sum())} vector(s) holding {kind} "
                          f"(the first: row {int(np.argmax(bad))} of its reply); nothing was "
                          f"kept from that reply")
    return out / norms


def problem_of(read, by_key: bool = False):
    """A batch result check (`VoyageBatches.run`) from a reader that raises on a bad body:
    the reader's message, or None when it reads."""
    def check(key: str, body: dict) -> str | None:
        try:
            read(key, body) if by_key else read(body)
        except RagkitError as exc:
            return str(exc).split(": ", 1)[-1]
        return None
    return check
