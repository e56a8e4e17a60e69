"""Documents as `Pipeline.build` and `chunk_documents` take them, checked before any work.

What it is: `check_documents(documents)`, one `RagkitError` line naming the position of the
first item that cannot be indexed as given. What it is not: the loaders' checks, which name a
file and line (`ragkit.documents`, `ragkit.document_folder`); this is for documents made in
code.
"""
from __future__ import annotations

from collections.abc import Sequence

from ragkit.documents import Document, RagkitError


def check_documents(documents: Sequence[object]) -> None:
    """Refuse, in one line naming the position, what cannot be indexed as given: an item
    that is no `Document`, an id that is no non-empty text, a text or title that is no text,
    and an id given twice. Why here: `Pipeline.build` of two documents "a" made two chunks
    "a#0", which no run or judgment can tell apart, and `Document("x", None)` failed as a
    TypeError deep in chunking (the loaders refuse the same in a file, with its line)."""
    seen: dict[str, int] = {}
    for n, doc in enumerate(documents, start=1):
        if not isinstance(doc, Document):
            raise RagkitError(f"documents[{n - 1}]: {doc!r:.60} ({type(doc).__name__}), not "
                              f"a ragkit.Document")
        for name in ("id", "text", "title"):
            value = getattr(doc, name)
            if not isinstance(value, str) or (name == "id" and not value):
                raise RagkitError(f"documents[{n - 1}].{name}: {value!r:.80} is no "
                                  f"{'non-empty ' if name == 'id' else ''}text")
        first = seen.setdefault(doc.id, n)
        if first != n:
            raise RagkitError(f"documents[{n - 1}].id: '{doc.id}' is the id of "
                              f"documents[{first - 1}] too; each document needs its own")
