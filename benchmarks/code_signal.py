"""Code-ness of a chunk and of a question, read from their content (`bench_transfer.py`).

What it is: the signals the interaction features of `bench_transfer.py` multiply each model
family's MaxP by, so a linear reranker can weigh e5-small and MiniLM differently on code and
on prose candidates:
- `code_share(text)`: the share of a chunk's non-blank lines that look like code (a
  statement keyword such as `def`, `import`, `fn`, `pub`; a line opening with `>>>`, `//`,
  `/*`, `@name`, `#[`, or a closing bracket; a line ending in a bracket or `;`; an
  assignment `name = …`; a Python block header `if …:`), in [0, 1];
- `has_code_suffix(path, ident, title)`: 1 when the chunk's document is named with a
  programming language's suffix (`ragkit.file_kinds.CODE_SUFFIXES`), from its path, id or a
  title ending in one (the cookbook's titles are `repo: path`);
- `names_identifier(question)`: 1 when the question names a code identifier
  (`bench_rerank_features.query_identifiers`: backticked, `name()`, snake_case, camelCase or
  two capitals).

`CODE_OPTIONS` are the reranker feature sets built on them and `annotate` adds the three
signals to `bench_transfer.py`'s collected candidates.

What it is not: a language detector nor anything a data set is named by; every rule reads the
text (or the file name) of one chunk or question, so it works on any folder.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

import numpy as np
from bench_rerank_features import query_identifiers

from ragkit.file_kinds import CODE_SUFFIXES

_KEYWORD = re.compile(
    r"(?:def|class|import|raise|yield|return|fn|pub|impl|struct|enum|trait|func|package|const"
    r"|var|let|elif|except|finally|async|await|case|break|continue|pass|#include|#define)\b"
    r"|from\s+[\w.]+\s+import\b")
_OPENS = re.compile(r"(?:>>>|//|/\*|\*/|@\w|#\[|[}\])])")
_BLOCK = re.compile(r"(?:if|for|while|else|try|with)\b.*:$")
_ENDS = re.compile(r"[{}()\[\];]$")
_ASSIGN = re.compile(r"[\w.\[\]'\"]+\s*(?::\s*[\w\[\]., |]+)?\s*(?:=|\+=|-=|:=|\*=)\s*[^=\s]")

E5_MINILM = ["e5", "bm25", "docmax", "phrase", "minilm"]  # bench_transfer's "e5|minilm"
BASE = E5_MINILM[1:4]
# code-ness interactions (`--code`): each family's MaxP weighed apart on code and on prose
# candidates ("code" = the chunk's share of code-like lines, "suffix" = its
# file's programming-language suffix) and on questions that write an identifier ("qid")
CODE_OPTIONS = {
    "e5|minilm,code": ("e5", [*E5_MINILM, "e5*code", "minilm*code"]),
    "e5|minilm,code+": ("e5", [*E5_MINILM, "code", "e5*code", "minilm*code"]),
    "e5|minilm,split": ("e5", ["e5*prose", "minilm*prose", "e5*code", "minilm*code", *BASE]),
    "e5|minilm,code,bm25": ("e5", [*E5_MINILM, "e5*code", "minilm*code", "bm25*code"]),
    "e5|minilm,suffix": ("e5", [*E5_MINILM, "e5*suffix", "minilm*suffix"]),
    "e5|minilm,qid": ("e5", [*E5_MINILM, "e5*qid", "minilm*qid"]),
    "e5|minilm,code,qid": ("e5", [*E5_MINILM, "e5*code", "minilm*code", "e5*qid",
                                  "minilm*qid"]),
}


def code_line(line: str) -> bool:
    """True when one line, stripped, looks like a line of source code (module docstring)."""
    s = line.strip()
    return bool(_KEYWORD.match(s) or _OPENS.match(s) or _BLOCK.match(s) or _ENDS.search(s)
                or _ASSIGN.match(s))


def code_share(text: str) -> float:
    """Share of `text`'s non-blank lines that `code_line` calls code; 0 for blank text."""
    lines = [line for line in text.splitlines() if line.strip()]
    return sum(map(code_line, lines)) / len(lines) if lines else 0.0


def has_code_suffix(path: str, ident: str, title: str) -> float:
    """1.0 when the document's path, id or title ends in a programming-language suffix."""
    for name in (path, ident, title):
        if name and PurePosixPath(name.strip()).suffix.lower() in CODE_SUFFIXES:
            return 1.0
    return 0.0


def names_identifier(question: str) -> float:
    """1.0 when the question names a code identifier (`query_identifiers`), else 0.0."""
    return 1.0 if query_identifiers(question) else 0.0


def annotate(sets: dict) -> None:
    """Per candidate, its chunk's `code_share` ("code") and `has_code_suffix` ("suffix"),
    and per question `names_identifier` ("qid", one value for all its candidates)."""
    for data in sets.values():
        share = np.array([code_share(text) for *_, text in data["chunks"]])
        suffix = np.array([has_code_suffix(path, ident, title)
                           for path, ident, title, _ in data["chunks"]])
        for r in data["questions"]:
            qid = names_identifier(r["text"])
            for _, feats in r["stages"].values():
                feats.update(code=share[feats["at"]], suffix=suffix[feats["at"]],
                             qid=np.full(len(feats["at"]), qid))
