"""A hyphen at a PDF line's end: a word broken across two lines ("manip-" "ulation"), or a
compound that happened to break there ("branch-" "prediction"), told apart by the document.

What it is: `BREAK`, the mark `ragkit.loaders.pdf` leaves where a line ended in "-" and the
next went on in lower case, and `Hyphens(texts)`, built from all of a document's box texts,
whose `mend(text)` writes each mark as nothing (the word joined) or "-" (the compound kept).
Each break is decided by the rest of the document: kept when it prints the compound with its
hyphen mid-line ("branch-prediction") more often than as one word ("branchprediction"),
joined in the opposite case; a break the document says nothing about follows the document's
own habit, the way most of its decided breaks went; in a document with no habit, it is kept
when both halves are words the document prints on their own ("public" "standard"), else
joined ("manip" "ulation"). A soft hyphen (U+00AD) is the typesetter's mark of a broken word
and is always joined, without a mark.

Why: TeX hyphenates words at line ends, so joining every such break was right for TeX's
PDFs; LibreOffice and Word exports do not hyphenate, so their line-end hyphens are the
compounds' own and joining them lost both words to search ("branchprediction" matched
neither "branch" nor "prediction").

What it is not: a dictionary. A word the document never prints elsewhere is decided by the
document's habit alone, and a compound its author writes both ways counts both.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

BREAK = "\x00"  # never in a box's text: pdfminer's text holds no NUL, `_clean` drops controls
_BROKEN = re.compile(rf"([^\W\d_]+){BREAK}([^\W\d_]+)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


class Hyphens:
    """The breaks of one document's texts, decided (module docstring)."""

    def __init__(self, texts: Iterable[str]) -> None:
        words: Counter[str] = Counter()
        compounds: Counter[str] = Counter()
        pairs: list[tuple[str, str]] = []
        for text in texts:
            pairs += [(a.casefold(), b.casefold()) for a, b in _BROKEN.findall(text)]
            for token in _WORD.findall(_BROKEN.sub(" ", text).casefold()):
                parts = token.split("-")
                words.update(parts)
                compounds.update(f"{x}-{y}" for x, y in zip(parts, parts[1:]))
        self.words, self.compounds = words, compounds
        votes = Counter(self._evidence(a, b) for a, b in pairs)
        self.habit = ("-" if votes["-"] > votes[""] else "" if votes[""] > votes["-"]
                      else None)

    def _evidence(self, a: str, b: str) -> str | None:
        """"-" when the document prints a-b more often than ab, "" for the opposite, None
        when it prints both equally often or neither."""
        kept, joined = self.compounds[f"{a}-{b}"], self.words[a + b]
        return "-" if kept > joined else "" if joined > kept else None

    def mend(self, text: str) -> str:
        """`text` with each `BREAK` written as decided."""
        if BREAK not in text:
            return text

        def decided(m: re.Match) -> str:
            a, b = m.group(1).casefold(), m.group(2).casefold()
            said = self._evidence(a, b)
            if said is None:
                said = self.habit if self.habit is not None else (
                    "-" if self.words[a] and self.words[b] else "")
            return m.group(1) + said + m.group(2)
        return _BROKEN.sub(decided, text).replace(BREAK, "")
