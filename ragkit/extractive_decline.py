"""The offline extractive answerer's missing-unit rule: a question that names something no
retrieved passage mentions is not answered by them.

What it is: `distinctive(question)` — the units of a question that name one thing (a quarter
"Q3 2022" = "third quarter of 2022", a number or code, an acronym, a capitalised name) — and
`missing(question, passages)`, those of them that no passage (text or `[Source | Section]`
tag) holds as a whole word or a part of an identifier ("jwt" in `jwt_expiry_minutes`). Both
sides are compared on a folded form (`fold`): a hyphen, en dash, em dash, minus sign or
non-breaking hyphen is one "-", curly quotes and apostrophes are straight ones, a no-break
space is a space — "2022-23" typed on a keyboard is held by a report's "2022–23".
`ragkit.extractive.choose` declines when `missing` is not empty (`Params.decline_missing`);
the rule was adopted after 5-fold cross-validation on dev (see `ragkit.extractive`).

What it is not: a check that the passages say what was asked. An unanswerable question about
an absent *field* of a named thing ("the chief executive of Cedarline Health") names nothing
the passages lack, and passes. A rule for that (no passage holding both the named thing and
the question's other terms) was tried and not adopted: `benchmarks/study_extractive.py`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ragkit.assemble import Passage
from ragkit.file_kinds import language

_DIGIT = re.compile(r"\d")
QUOTE_SHOWN = 160  # characters of the quote a threshold decline names
# A quarter of a year, as questions and reports write it: "Q3 2025", "Q3 FY2025", "third
# quarter of 2025", "third-quarter 2025" are all the unit "q3 2025".
_ORDINAL = {"first": "1", "second": "2", "third": "3", "fourth": "4"}
_QUARTER = re.compile(r"\b(?:q([1-4])\s*(?:fy\s*)?((?:19|20)\d\d)|(first|second|third|fourth)"
                      r"[\s-]+quarter\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d\d))\b",
                      re.I)
# A Latin-script word, codes joined by - . / kept whole ("EG-400", "n_trees", "0.5").
_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9_]+(?:[-./][A-Za-z0-9_]+)*")


# Characters that look alike but are typed differently: every dash and hyphen is "-", every
# single quote or apostrophe is "'", every double quote is '"', a no-break space is " ".
_LOOK_ALIKES = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\uff07", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\uff02", '"'),
    **dict.fromkeys("\u00a0\u202f\u2007", " ")})


def fold(text: str) -> str:
    """`text` with look-alike dashes, quotes and spaces written one way (`_LOOK_ALIKES`), so
    a question and a passage compare on what they say, not on how it was typed. Not a full
    Unicode normalisation: letters, digits and other marks are left as they are."""
    return text.translate(_LOOK_ALIKES)


def _canonical(text: str) -> str:
    """Folded (`fold`), lower case, every quarter written as "q<n> <year>"."""
    text = fold(text)
    def quarter(m: re.Match) -> str:
        return f"q{m.group(1) or _ORDINAL[m.group(3).lower()]} {m.group(2) or m.group(4)}"
    return _QUARTER.sub(quarter, text).lower()


def distinctive(question: str) -> tuple[str, ...]:
    """The units of `question` that name one thing: quarters ("q3 2025"), numbers and codes
    (a digit or an underscore: "2022", "eg-400", "n_trees"), acronyms and mixed case
    ("graphql", "onnx") and capitalised names not starting a sentence ("cedarline"), lower
    case, in question order, dashes and quotes folded (`fold`). Not Hangul words: Korean has
    no capitals to tell a name by."""
    question = fold(question)
    units = [_canonical(m.group(0)) for m in _QUARTER.finditer(question)]
    text = _QUARTER.sub(" ", question)
    for m in _WORD.finditer(text):
        word = m.group(0)
        before = text[:m.start()].rstrip()
        starts = not before or before[-1] in ".?!:;"
        if (_DIGIT.search(word) or "_" in word or sum(c.isupper() for c in word) >= 2
                or (word[:1].isupper() and len(word) > 1 and not starts)):
            units.append(word.lower())
    return tuple(dict.fromkeys(units))


def missing(question: str, passages: Sequence[Passage]) -> tuple[str, ...]:
    """The `distinctive` units of `question` that none of `passages` (text or
    `[Source | Section]` tag) holds as a whole word, or as a part of an identifier
    (`_parts`); a plural's "s" may be absent. A source file's passage also holds the name
    of its language (`ragkit.file_kinds.language`): "What is the Python client's timeout?"
    was declined as mentioned by no passage with `client.py` first."""
    raw = "\n".join(f"{p.tag}\n{language(p.doc_id)}\n{p.text}" for p in passages)
    texts = (_canonical(raw), _canonical(_parts(raw)), _canonical(_parts(raw, _LOWER_UPPER)))

    def held(unit: str) -> bool:
        forms = {unit, unit[:-1]} if unit.endswith("s") and len(unit) > 3 else {unit}
        return any(re.search(rf"(?<![a-z0-9_]){re.escape(f)}(?![a-z0-9_])", text)
                   for f in forms for text in texts)
    return tuple(u for u in distinctive(question) if not held(u))


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # keeps "GPUs" whole in "numGPUs"


def _parts(text: str, camel: re.Pattern = _CAMEL) -> str:
    """`text` with its identifiers cut into words: at "_" and where camel case starts a
    word ("jwt_expiry_minutes", "apiTimeoutSeconds", "SMTPHost": "jwt expiry minutes", "api
    Timeout Seconds", "SMTP Host"). A configuration file names "the JWT expiry" so, and the
    question's "jwt" was declined as mentioned by no passage. `missing` reads both this and
    the cut at lower-to-upper case only: "numGPUs" is "num GP Us" here, "num GPUs" there."""
    return camel.sub(" ", text.replace("_", " "))


def under_threshold(strength: float, threshold: float, first: str) -> str:
    """The reason for a decline under the similarity threshold, naming the quote the answerer
    would have led with (`first`, cut to `QUOTE_SHOWN` characters): the answer may be there,
    and the user can judge it. A similarity that rounds to the threshold shows the digits
    that put it under ("0.85999", not "0.860 is under 0.86")."""
    value = (f"{strength:.3f}" if round(strength, 3) < threshold else
             f"{math.floor(strength * 1e5) / 1e5:.5f}")
    first = first if len(first) <= QUOTE_SHOWN else first[:QUOTE_SHOWN - 1] + "…"
    return (f"the closest sentence's similarity to the question, {value}, is under the "
            f"threshold {threshold}; it would have quoted first: '{first}'")
