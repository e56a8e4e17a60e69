"""The units the offline extractive answerer may quote: sentences built from a passage's
citation blocks.

What it is: `units(text, code)` cuts a passage's text into `Unit`s, each a run of
consecutive blocks of `ragkit.assemble.blocks` (one block per sentence or line, the smallest
range a citation can name), so a quote cites `[start, end)` of its search result exactly:
- a sentence that the blocks cut in two is one unit again: a hard-wrapped line ("… for one
  to be considered\\nas in the neighborhood of the other.") when the line ends mid-sentence
  (a letter, digit, comma or closing quote) and the next starts in lower case, or, after a
  line ending in a letter or comma, with a number and a lower-case word ("… 20 percent clay
  and\\n40 percent silt.", never a list item "1. Do this"); a cut after
  an abbreviation ("e.g.", "i.e.", "etc.") or after a bare list number ("2."); a heading
  line cut at a full stop ("## 2. Cooling-off period"); a numbered or bulleted list item
  ("4. … drops from 3 to 2\nmites per 100 bees.") joins its wrapped lines by the same rules,
  though the next item still starts a unit. Korean has no lower case: a line ending in a
  particle, a connective ending or a comma ("… 2일 이내에", "… 출고되며,") joins the next
  when that starts in Hangul (a quote stopped at "… 2일 이내에"), and so does a title or a
  list line ending in a noun that ends in such a syllable ("배송 문의", "재직증명서"); a
  table's row (a tab) does not. At most `MAX_LINES` lines a unit;
- a Markdown heading is a unit of its own, never quoted alone (a title is not an answer),
  and is offered once more joined to the unit after it, as one quote ("### C : float,
  default=1.0" with "Regularization parameter."): API references and manuals put the
  answer in the heading that the sentence below it explains. The answerer keeps the heading
  only where it adds to the sentence (`heading_adds`: a `=` value, a question term the
  sentence lacks), and `shown` sets it apart ("Heading — sentence");
- a question ("**When do I get my laptop?**", "Q. 백업은 얼마나 자주 실행되나요?": a unit
  ending in "?" once emphasis marks are set aside) is never quoted either: an FAQ's
  question line was quoted as the answer to the question it restates, while the sentence
  after it answered. A question on a line of its own (an HTML `<dt>` or `<summary>`, "Q.
  …?") is offered joined to the unit after it, as a heading is; a reply of one to three
  words on the question's line stays with it ("**Can I install software myself?** No." is
  one unit, and no question). A short line that a question ends is one question with the
  sentences before it ("The display shows E4. What does it mean?": its first sentence was
  quoted as the answer). Not in a source file, where "?" is an operator (Rust's
  `read()?`, a SQL placeholder);
- a Markdown table's header row (the row above its `| --- |` rule) is never quoted either,
  nor offered under the heading above the table: "Status LED codes — | LED | State |
  Meaning |" was quoted beside the row that answered. Its body rows are units of their own;
- in a code passage (`code=True`) every line is a unit and "#" starts a comment, not a
  heading, so a comment is quotable; but inside a triple-quoted string (a docstring) the
  lines are prose and a sentence's wrapped lines join as above, from the opening line on:
  a quote began mid-sentence ("them when ``SHOPCORE_ENV=production``.");
- a sentence over `MAX_QUOTE_CHARS` (a one-line list of readings) is cut by the blocks at its
  clauses (`ragkit.assemble.clause_blocks`); each clause is a unit marked `clause`, which
  the answerer quotes only when it holds a question term that is no bare number
  (`ragkit.support.clause_terms`: a line of readings has a number in every clause), and
  never as a second or third quote when it is data-like (`ragkit.support.data_like`:
  "sensor2 reading 15,").
A quote is one unit, so it is at most a heading line and one sentence (or clause) of at
most `MAX_LINES` lines; the answerer quotes none over `ragkit.support.MAX_QUOTE_CHARS`.

What it is not: a sentence parser. A wrapped line that starts with a capital, a list number
("1. ", "2) "), a number with no lower-case word after it ("2024 Annual Report", "0x0BU,"), or
a number after a line ending in a digit (lines of readings) stays its own unit, and a passage
cut by the chunker mid-sentence keeps its fragment.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ragkit.assemble import blocks, clause_blocks, clause_shown
from ragkit.citation_tags import section_list
from ragkit.config_keys import is_config_name, within
from ragkit.fences import passage_unfenced
from ragkit.markdown_tables import ROW, TABLE_RULE, labelled_row, row_headers
from ragkit.file_kinds import is_code_name
from ragkit.support import question_terms

MAX_LINES = 6
_HEADING = re.compile(r"^\s*#{1,6}(?:\s|$)")
# A line that starts a structure of its own: a list item, a table row, a doctest, a fence.
_STRUCTURE = re.compile(r"^\s*(?:[-*+•]\s|\d+[.)]\s|[①-⑳]|\||>>>|```|#)")
# A bulleted or numbered list item: its own unit, but its hard-wrapped lines are part of it.
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]\s|\d+[.)]\s|[①-⑳])")
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:e\.g|i\.e|etc|cf|vs|approx|incl|fig)\.$", re.I)
_ENUMERATOR = re.compile(r"^(?:\d{1,3}|[A-Za-z])[.)]$")
_OPEN_END = re.compile(r"[^\W_]$|[,:`'\")]$")
_LOWER_START = re.compile(r"[a-z(`'\":]")
# A wrapped line going on with a number and a lower-case word ("40 percent silt", "2.5 tonnes",
# "40% of", "300-metre radius", "10–15 minutes"); a list number ("1. ") is a block of its own,
# "2024 Annual" and "0x0BU," no prose.
_NUMBER_START = re.compile(r"\d+(?:[.,:/\u2013-]\d+)*(?:%|-?[^\W\d_A-Z]+)?\s+[^\W\d_A-Z]")
_WORD_END = re.compile(r"[^\W\d_]$|,$")
_TRIPLE = re.compile(r"\"\"\"|'''")
# Korean has no lower case to tell a wrapped line by: a line ending in a particle, a
# connective or adnominal ending ("… 2일 이내에", "… 상품이", "… 누르면", "고객센터나",
# "변경할 수") or a comma goes on, when the next line starts in Hangul (or, after a Hangul
# syllable, a Latin letter); one ending in a full stop or another syllable does not. Some
# nouns end in such a syllable too ("배송 문의", "검사 결과"): a title or a list line ending
# in one is joined to the line after it, a quote one line too long, where a sentence cut in
# two quoted half an answer. A line holding a tab (a table's row) never joins.
_HANGUL_START = re.compile(r"[\uac00-\ud7a3]")
_HANGUL_END = re.compile(r"[\uac00-\ud7a3]$")
_LETTER_START = re.compile(r"[\uac00-\ud7a3A-Za-z]")  # "… 보관 개수는 / HARBOR_KEEP …"
_KOREAN_OPEN_END = re.compile(r"[은는이가을를에의와과도로고며서면나게및수할될한된인,]$")
# A table's delimiter row, "| --- | :---: |" (GitHub-flavoured Markdown); a bare "---" is none.
# A question: a word's "?" (or the full-width "？") last, before emphasis marks or a bracket;
# not a quoted one (a dialog's '"Delete this file?"'), nor a placeholder ("id = ?").
_QUESTION = re.compile(r"[^\W\d_][?\uff1f][*_)]*\s*$")
_ROW_OPEN = re.compile(r" {0,3}\|")  # a line that opens a Markdown table row
_ASKED_LINE = 200  # characters: a line this short that ends in a question is one question
_WORDY = re.compile(r"[^\W\d_]{2}")  # an answer under a question has a word (no "```")
# A reply of one to three words ("No.", "Yes, always.", "아니요."): it stays with the question
# it answers, "**Can I install software myself?** No." one unit, which is no question.
_SHORT_REPLY = re.compile(r"^[*_]*\w+(?:,?[ \t]+\w+){0,2}[.!][*_]*\s*$")


@dataclass(frozen=True)
class Unit:
    """Blocks `start` … `end` − 1 of one passage, their text joined."""

    start: int
    end: int
    text: str
    heading: bool  # a heading alone, a question, a table's header or rule row: never quoted
    titled: bool = False  # a heading joined to the unit under it
    clause: bool = False  # holds a clause of a sentence over MAX_QUOTE_CHARS
    body: int = 0  # a titled unit's first block under its heading; 0 otherwise


def _joins(unit: list, block: str, code: bool) -> bool:
    """Whether `block` continues the unit `unit` ([start, end, text]) as one sentence."""
    text = unit[2]
    body = text.rstrip()
    gap = text[len(body):]
    if not body or code or unit[1] - unit[0] >= MAX_LINES or text.count("\n") >= MAX_LINES:
        return False
    line = body.rsplit("\n", 1)[-1]
    if "\n" not in gap:  # cut on one line after a full stop (never inside a table row)
        return bool(_HEADING.match(line) or _ABBREVIATION.search(line) or _ROW_OPEN.match(line)
                    or _ENUMERATOR.match(line.strip())
                    or _QUESTION.search(line) and _SHORT_REPLY.match(block))
    if gap.count("\n") > 1 or _HEADING.match(line) or (
            _STRUCTURE.match(line.lstrip()) and not _LIST_ITEM.match(line.lstrip())):
        return False
    if _NUMBER_START.match(block):
        return bool(_WORD_END.search(body))
    if ((_HANGUL_START.match(block) or _HANGUL_END.search(body) and _LETTER_START.match(block))
            and not _STRUCTURE.match(block)):
        return bool(_KOREAN_OPEN_END.search(body)) and "\t" not in line + block
    below = gap.rsplit("\n", 1)[-1] + block  # the next line, its indent in the gap
    if body.endswith(":") and _indent(below) > _indent(line):
        return False  # a block under its opening line ("def refund(order):"), no wrap
    return bool(_OPEN_END.search(body) and _LOWER_START.match(block)
                and not _STRUCTURE.match(block))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def units(text: str, code: bool = False) -> list[Unit]:
    """The units of a passage's `text` in order, with the heading-and-sentence pairs after
    the plain units (see the module docstring). Empty blocks are no unit."""
    runs: list[list] = []
    inside = False  # in a code passage, within a triple-quoted string (a docstring)
    pieces = blocks(text)
    for i, block in enumerate(pieces):
        prose = inside and not _TRIPLE.match(block.lstrip())  # not its closing quotes' line
        if runs and runs[-1][1] == i and _joins(runs[-1], block, code and not prose):
            runs[-1][1], runs[-1][2] = i + 1, runs[-1][2] + block
        else:
            runs.append([i, i + 1, block])
        inside = code and inside != (len(_TRIPLE.findall(block)) % 2 == 1)
    clauses = clause_blocks(text)
    runs = [run for run in runs if run[2].strip()]
    if not code:
        runs = _asked_lines(runs)
    read = text if code else passage_unfenced(text)  # a fenced `# comment` is no heading
    at = list(accumulate((len(piece) for piece in pieces), initial=0))
    marks = {i for i, (s, e, _) in enumerate(runs)
             if not code and _HEADING.match(read[at[s]:at[e]])}
    table = {i for i, run in enumerate(runs) if TABLE_RULE.match(run[2])}
    table |= {i - 1 for i in table if i and "|" in runs[i - 1][2]  # its header row: the
              and not (i > 1 and ROW.match(runs[i - 2][2].rstrip("\r\n")))}  # table's first
    asks = {i for i, run in enumerate(runs) if not code and _QUESTION.search(run[2])
            and "://" not in run[2]}
    plain = [Unit(s, e, t, i in marks or i in table or i in asks, False,
                  any(i in clauses for i in range(s, e))) for i, (s, e, t) in enumerate(runs)]
    pairs = [Unit(a.start, b.end, a.text + b.text, False, True, a.clause or b.clause, b.start)
             for i, (a, b) in enumerate(zip(plain, plain[1:]))
             if (i in marks or i in asks and "\n" not in a.text.strip() and "\n" in a.text
                 and _WORDY.search(b.text)) and not b.heading and a.end == b.start]
    return plain + pairs


def _asked_lines(runs: list[list]) -> list[list]:
    """`runs` with a short line that ends in a question one run: "The display shows E4. What
    does it mean?" (an HTML `<dt>`, an FAQ's question) is the question, and its first
    sentence was quoted as the answer to it. Only a line of at most `_ASKED_LINE` characters
    that the question ends; a question inside a paragraph ("… on disk. Why? Because …") or
    closing a long one leaves the sentences before it quotable."""
    out: list[list] = []
    for run in runs:
        first, start = len(out), run[0]
        while first and out[first - 1][1] == start and "\n" not in out[first - 1][2]:
            first, start = first - 1, out[first - 1][0]  # a sentence earlier on the line
        line = "".join(r[2] for r in out[first:]) + run[2]
        if (first < len(out) and run[2].endswith("\n") and _QUESTION.search(run[2])
                and (not first or out[first - 1][2].endswith("\n"))
                and len(line) <= _ASKED_LINE):
            out[first:] = [[out[first][0], run[1], line]]
        else:
            out.append(run)
    return out


def shown(text: str, clause: bool = False, titled: bool = False, code: bool = False) -> str:
    """A quote as an answer shows it: heading marks dropped, every run of white space (a
    wrapped line's break) one space, and a `clause` unit without the clause end it was cut
    after (`ragkit.assemble.clause_shown`). A `titled` quote (a heading and the sentence
    under it) shows them apart, "Heading — sentence": run together, "Losses Winter losses
    over …" read as one garbled sentence. In a source file (`code`) a "#" opens a comment,
    not a heading, and stays: "# retried three times" was shown as "retried three times", a
    comment read as code. The citation keeps the exact text."""
    if titled:
        head, _, rest = text.lstrip().partition("\n")
        if rest.strip():
            return f"{shown(head)} — {shown(rest, clause)}"
    out = " ".join((line if code else _MARKS.sub("", line)).strip()
                   for line in text.splitlines() if line.strip()).strip()
    return clause_shown(out) if clause else out


_MARKS = re.compile(r"^\s*#{1,6}\s+")
# A heading's value: "C : float, default=1.0", "n_jobs = None".
_VALUE = re.compile(r"\S\s*=\s*\S")


def heading_adds(text: str, asked: frozenset[str]) -> bool:
    """Whether the heading of a titled unit's `text` says something its sentence does not:
    a `=` value, or a term of the question (`asked`, `ragkit.support.question_terms`) that
    the sentence lacks. Only then does the answerer quote the heading with its sentence; a
    heading that repeats the sentence ("Losses" over "Winter losses …") is noise there."""
    head, _, rest = text.partition("\n")
    return bool(_VALUE.search(head)
                or (question_terms(head) - question_terms(rest)) & asked)


def asked_above(text: str) -> bool:
    """Whether a titled unit's `text` is a question over its answer: its heading line (a
    Markdown heading, or a question on a line of its own) ends in "?"."""
    return bool(_QUESTION.search(text.lstrip().partition("\n")[0]))


def under_heading(text: str) -> str:
    """A titled unit's `text` without its heading line: exactly its sentence's blocks."""
    return text.split("\n", 1)[1].lstrip()


def readings(name: str, section: str, pieces: Sequence[str], found: Sequence[Unit],
             head: str = "") -> list[str]:
    """What each unit of `found` (the units of a passage of the file `name`, its blocks
    `pieces`, its section `section`) is embedded as. A configuration file's line under the
    keys enclosing it (`ragkit.config_keys`), "database > pool_size: 25": alone,
    "pool_size: 25" names the setting without what it belongs to (e5-small's cosine to "What
    is the database pool size?" was 0.837 alone and 0.886 under its key). A Markdown table
    row under its columns' names (`labelled_row`; `head`: the header and rule rows of a
    table the passage opens inside, `ragkit.assemble.table_head`). The quote and its
    citation keep the text as written; other units are embedded as they are."""
    if is_code_name(name) and not is_config_name(name):
        return [unit.text for unit in found]
    offsets = list(accumulate((len(piece) for piece in pieces), initial=0))
    text = "".join(pieces)
    if not is_config_name(name):
        headers = row_headers(head + text)
        return [labelled_row(unit.text, headers.get(len(head) + offsets[unit.start]))
                for unit in found]
    outer = section_list(section)
    return [" > ".join([*within(name, outer, text, offsets[unit.start]), unit.text.strip()])
            for unit in found]


def quoted_as(text: str, titled: bool) -> str:
    """What quoting a unit of `text` says: white space normalised, without the heading line
    a `titled` unit is joined to (a sentence offered under its heading and alone is quoted
    once)."""
    return " ".join((under_heading(text) if titled and "\n" in text else text).split())


def repeats(one: str, other: str) -> bool:
    """Whether quoting both says one twice: equal, or one (3 words or more) inside the other
    — a chunk starting mid-sentence offers the tail of a sentence quoted whole ("… 85 °C, the
    gateway reduces …" after "When the internal temperature exceeds 85 °C, …")."""
    short, long = sorted((one, other), key=len)  # whole words: "5 days" is not in "15 days"
    return short == long or (len(short.split()) >= 3 and f" {short} " in f" {long} ")
