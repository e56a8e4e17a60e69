"""Numbers in a notebook's Markdown against the numbers its outputs show (for
`tests/test_notebook_prose.py`).

A number in prose is either a constant of the text — a definition, a parameter, a published
figure, listed per notebook in the test — or a result, and then it must be one the notebook's
outputs show, up to the precision the prose gives it ("about 1,800" is 1,775.6 rounded to
hundreds, "12.5 %" is 0.125, "10k" is 10,129.9 rounded to thousands). A range "a–b" must have
both ends in one output. Timings vary from run to run, so prose states none: a sentence about
times is printed by the cell that measured them.
"""
from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from ragkit.money import DOLLAR

# What is not a claim: code, headings' section numbers, cross-references, model names, years.
NOT_CLAIMS = [re.compile(p, re.M) for p in (
    r"```.*?```", r"`[^`\n]*`", r"https?://\S+", r"^#+ [^\n]*",
    r"\b[Nn]otebooks? \d\d(?:[–-]\d\d)?\b", r"\*\*\d\d · [^*]*\*\*", r"\b[Ss]ections? \d\b",
    r"\b(?:Haiku|Sonnet|Opus) \d(?:\.\d)?", r"\bClaude \d(?:\.\d)?", r"\b(?:19|20)\d\d\b",
    r"\b[Qq][1-4]\b")]
NUMBER = (r"(?<![\w@./\-])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?"
          r"(?:\s?(?P<kilo>[kK])(?![A-Za-z]))?(?![\w@]|\.\d)(?P<pct>\s?%)?")
PROSE_NUMBER = re.compile(NUMBER)
RANGE = re.compile(NUMBER.replace("?P<", "?P<a_") + r"\s?[–…]\s?"
                   + NUMBER.replace("?P<", "?P<b_"))
TIMING = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|seconds?|µs|minutes?)\b")
OUTPUT_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def markdown_cells(nb: dict) -> list[str]:
    """Each Markdown cell's text as a reader sees it (the formula-proof dollar sign a "$")."""
    return ["".join(c["source"]).replace(DOLLAR, "$") for c in nb["cells"]
            if c["cell_type"] == "markdown"]


def output_texts(nb: dict) -> list[str]:
    """Every text a code cell shows: streams, text/plain, text/markdown and text/html."""
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if "text" in o:
                out.append("".join(o["text"]))
            for kind in ("text/plain", "text/markdown", "text/html"):
                value = o.get("data", {}).get(kind)
                if value is not None and not (kind == "text/plain" and
                                              "image/png" in o.get("data", {})):
                    text = "".join(value) if isinstance(value, list) else value
                    out.append(text.replace(DOLLAR, "$"))
    return out


def output_numbers(text: str) -> set[Decimal]:
    return {Decimal(m.group(0).replace(",", "")) for m in OUTPUT_NUMBER.finditer(text)}


def _claim_text(markdown: str, constants: list[str]) -> str:
    for constant in sorted(constants, key=len, reverse=True):   # "k = 5" is not in "k = 50"
        markdown = re.sub(rf"(?<![\d.]){re.escape(constant)}(?!\d|\.\d)", " ", markdown)
    for pattern in NOT_CLAIMS:
        markdown = pattern.sub(" ", markdown)
    return markdown


def _rounded(value: Decimal, exponent: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP)


def shown_as(number: dict[str, str | None], found: set[Decimal]) -> bool:
    """Whether a prose number (the named groups of NUMBER) is one of `found`, as the prose
    rounds it: to its decimals, or to its trailing zeros for a round whole number."""
    digits = number["int"].replace(",", "")
    value = Decimal(digits + (number["frac"] or ""))
    exponent = -(len(number["frac"]) - 1) if number["frac"] else 0
    if not number["frac"] and len(digits) > 2:
        exponent = len(digits) - len(digits.rstrip("0"))
    scale = [Decimal(1000)] if number["kilo"] else [Decimal(1), Decimal("0.01"), Decimal(100)]
    for o in found:
        for s in scale:
            if exponent > 0 and _rounded(o / s, exponent) == value:
                return True
            if exponent <= 0 and _rounded(o / s, exponent) == _rounded(value, exponent):
                return True
    return False


def unsupported(nb: dict, constants: list[str]) -> list[str]:
    """Numbers of `nb`'s Markdown that are neither constants nor shown by its outputs."""
    texts = output_texts(nb)
    every = set().union(*(output_numbers(t) for t in texts)) if texts else set()
    per_output = [output_numbers(t) for t in texts]
    problems = []
    for markdown in markdown_cells(nb):
        prose = _claim_text(markdown, constants)
        for r in RANGE.finditer(prose):
            a = {k[2:]: v for k, v in r.groupdict().items() if k.startswith("a_")}
            b = {k[2:]: v for k, v in r.groupdict().items() if k.startswith("b_")}
            if not any(shown_as(a, f) and shown_as(b, f) for f in per_output):
                problems.append(f"range {r.group(0)!r}: no output shows both ends")
        problems += _unshown(prose, every)
    return problems


def _unshown(prose: str, shown: set[Decimal]) -> list[str]:
    """Each number of `prose` that `shown` does not hold, with the words around it."""
    problems = []
    for m in PROSE_NUMBER.finditer(prose):
        if not shown_as(m.groupdict(), shown):
            start = max(0, m.start() - 40)
            context = " ".join(prose[start:m.end() + 20].split())
            problems.append(f"{m.group(0)!r} in “…{context}…”")
    return problems


def sections(nb: dict) -> list[list[dict]]:
    """The notebook's cells cut at each Markdown cell that opens a `## ` section."""
    out: list[list[dict]] = [[]]
    for cell in nb["cells"]:
        opens = "".join(cell["source"]).lstrip().startswith("## ")
        if cell["cell_type"] == "markdown" and opens and out[-1]:
            out.append([])
        out[-1].append(cell)
    return out


def unsupported_in_section(nb: dict, constants: list[str]) -> list[str]:
    """Numbers of a section's Markdown that no output of the same section shows. The
    introduction and the take-aways summarise the whole notebook and are left out; a number
    shown only in another section is the wrong quantity or a stale one (a seeded p-value of
    one comparison quoted for another)."""
    problems = []
    parts = sections(nb)
    for n, part in enumerate(parts):
        head = "".join(part[0]["source"]) if part[0]["cell_type"] == "markdown" else ""
        if n == 0 or head.lstrip().startswith("## Take-aways"):
            continue
        shown = set().union(set(), *map(output_numbers, output_texts({"cells": part})))
        for markdown in markdown_cells({"cells": part}):
            problems += _unshown(_claim_text(markdown, constants), shown)
    return problems


def timings(nb: dict, constants: list[str]) -> list[str]:
    """Times typed into the Markdown (after removing the notebook's constants)."""
    return [m.group(0) for markdown in markdown_cells(nb)
            for m in TIMING.finditer(_claim_text(markdown, constants))]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def without_optional_data(nb: dict, parameter: str = "cookbook_dir") -> dict:
    """`nb` as a fresh clone shows it: a data set that is not shipped (Anthropic's cookbook set,
    read through `parameter`) is absent, so every cell reading it prints only its skip line."""
    copy = json.loads(json.dumps(nb))
    for cell in copy["cells"][1:]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and parameter in source \
                and "parameters" not in cell.get("metadata", {}).get("tags", []):
            cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                "text": f"data set not found at {parameter}: section skipped\n"}]
    return copy
