"""CRAG's default "search elsewhere": a plain grep over the raw corpus files, no index.

What it is: `GrepCorpus(root)` is a `Fallback` for `ragkit.agent.crag.crag` — a query (the
rewritten keywords) in, passages (`Chunk`s named `path:line`) out. What it is not: the agent's
sandboxed `grep` tool (`ragkit.agent.tools`), which could stand in here the same way.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ragkit.documents import Chunk


class GrepCorpus:
    """The default fallback: a plain case-insensitive grep for the keywords over the text
    files under `root` (the raw corpus, `data/corpus/`), no index.

    A hit line and one line either side form a passage (`path:line`); passages score the
    IDF (over files) of the distinct keywords they contain, best `limit` returned, at most
    one per ±1-line window. A symbolic link to a file outside `root` is not read (as the
    documents folder loader refuses it). The agent's sandboxed `grep` tool
    (`ragkit.agent.tools`) can stand in here: any `Fallback` — query → chunks — plugs into
    `crag(..., fallback=...)`.
    """

    def __init__(self, root: Path | str, limit: int = 5) -> None:
        self.root, self.limit = Path(root), limit
        self.files: dict[str, list[str]] = {}
        inside = self.root.resolve()
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            if not path.resolve().is_relative_to(inside):
                continue  # a link out of the corpus: its file would reach the prompts
            try:
                self.files[path.relative_to(self.root).as_posix()] = \
                    path.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: grep skips it too
        self.lower = {f: [line.lower() for line in lines] for f, lines in self.files.items()}

    def _idf(self, terms: Sequence[str]) -> dict[str, float]:
        n = len(self.files)
        df = {t: sum(any(t in line for line in lines) for lines in self.lower.values())
              for t in terms}
        return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}

    def __call__(self, query: str) -> list[Chunk]:
        terms = [t.lower() for t in query.split() if t.strip()]
        idf = self._idf(terms)
        found: list[tuple[float, str, int]] = []
        for name, lines in self.lower.items():
            for i, line in enumerate(lines):
                if any(t in line for t in terms):
                    window = " ".join(lines[max(0, i - 1):i + 2])
                    found.append((sum(w for t, w in idf.items() if t in window), name, i))
        found.sort(key=lambda f: (-f[0], f[1], f[2]))
        out: list[Chunk] = []
        taken: set[tuple[str, int]] = set()
        for _, name, i in found:
            if len(out) == self.limit:
                break
            if any((name, j) in taken for j in range(i - 2, i + 3)):
                continue
            taken.add((name, i))
            text = "\n".join(self.files[name][max(0, i - 1):i + 2])
            out.append(Chunk(f"{name}:{i + 1}", name, text, metadata={"title": name}))
        return out
