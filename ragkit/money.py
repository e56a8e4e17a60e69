"""Dollars as text: the one money formatter of ragkit (report, summaries, CLI lines).

What it is: `dollars(value)` prints an amount in US dollars with 3 significant digits, so
small costs keep their story — `$0.00512`, `$0.0107`, `$0.0230` against `$0.0109` — where
rounding to cents would show `$0.01` against `$0.01`. Below $100 an amount keeps at least
its cents (`$3.84`, `$11.69`); from $100 it is whole dollars (`$118`), with thousands
separators from $1,000 (`$1,020`, `$12,346`: never fewer digits than its integer part).
Zero is `$0.00`; no nonzero amount prints as `$0.00`; negative amounts are `-$0.0123`.

`dollars_kept(markdown)`: Markdown whose dollar signs no formula reader pairs up (`DOLLAR`).

What it is not: a rounding of stored numbers (results.json, records and caches keep the
exact floats) nor a currency library: ragkit only prices in US dollars.
"""
from __future__ import annotations

import math
import re

SIGNIFICANT = 3


def _decimals(amount: float, digits: int) -> int:
    """Decimals that show `digits` significant digits of `amount` (> 0), at least 2 below $100
    (cents), none from $100 up."""
    exponent = math.floor(math.log10(amount))
    return max(digits - 1 - exponent, 0 if amount >= 100 else 2)


def dollars(value: float, digits: int = SIGNIFICANT) -> str:
    """`value` US dollars as text with `digits` significant digits (see the module)."""
    value = float(value)
    if not math.isfinite(value):
        return f"${value}"
    amount = abs(value)
    if amount == 0:
        return "$0.00"
    decimals = _decimals(amount, digits)
    rounded = round(amount, decimals)
    if rounded and _decimals(rounded, digits) < decimals:  # 0.0099996 → 0.0100
        decimals = _decimals(rounded, digits)
    return f"{'-' if value < 0 else ''}${amount:,.{decimals}f}"


# A dollar sign no formula reader pairs up: JupyterLab 4, nbconvert and GitHub read the text
# between two "$" as a formula ("($0.01), 12.3 calls … ($0.116" came out as italic
# run-together letters, the signs gone), and `\$` does not stop JupyterLab's MathJax (the
# Markdown renderer unescapes it first); an entity alone in its element does.
DOLLAR = "<span>&#36;</span>"


def dollars_kept(markdown: str) -> str:
    """`markdown` with every "$" (or "\\$") written `DOLLAR`, so it stays a dollar sign —
    except inside a code span, which shows HTML as typed (a changed `question` parameter
    "… over $100 …" came out as "<span>&#36;</span>100" in the banner). A code span is
    CommonMark's: a run of backticks closed by a run of the same length (``a ` $b``)."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(markdown):
        out += [_SIGN.sub(DOLLAR, markdown[at:span.start()]), span.group(0)]
        at = span.end()
    return "".join(out) + _SIGN.sub(DOLLAR, markdown[at:])


_SIGN = re.compile(r"\\?\$")  # a dollar sign, escaped or not
# A run of backticks, the shortest text, and a run of exactly as many (CommonMark code span).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
