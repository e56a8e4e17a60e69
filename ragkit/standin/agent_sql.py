"""The stand-in agent's rule for aggregation questions: one `reports_sql` call from a template.

What it is: `plan_query(question)` recognises a question that combines figures across the
quarterly reports — a comparison or aggregation word (`HIGH_WORDS`, `LOW_WORDS`,
`TOTAL_WORDS`, `AVERAGE_WORDS`), a year (2000–2099, optionally a quarter "Q3") and a figure
named in `FIGURES` ("How did revenue grow in 2025?" names no comparison, so it is a wording
question) — and builds one SQLite query for the `reports` table from a fixed set
of two templates:
- growth (also a `GROWTH_WORDS` word: "grew fastest", "slowest growth"): per company, the figure in the year and in the year
  before, and the change in per cent, best first;
- ranking (everything else): per company, the figure in the year, highest first ("lowest",
  "least", … : lowest first).
Flows (revenue, expenses, income, cash flows, capex, order intake) are summed over the
year's quarters; levels and rates (margins, headcount, cash, debt) are averaged. A question
that names a company is answered from that company's row.
`answer(question, result)` turns the tool's text table back into one sentence.

Why a template and not a model: the stand-in is a deterministic program; it shows the tool
choice (SQL for aggregation, search for wording) offline, and writes only queries whose
every word it chose in advance.

What it is not: a text-to-SQL system. Questions outside the templates fall through to the
search program; segments are not covered.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

GROWTH_WORDS = ("fastest", "slowest", "grew", "grow", "growth", "increase", "increased")
HIGH_WORDS = ("highest", "largest", "most", "biggest", "top", "best", "greatest", "maximum",
              "fastest")
LOW_WORDS = ("lowest", "smallest", "least", "fewest", "worst", "minimum", "slowest")
TOTAL_WORDS = ("total", "sum", "combined", "overall")
AVERAGE_WORDS = ("average", "mean")
FIGURES: tuple[tuple[str, str, str], ...] = (  # (words, column, SUM | AVG), longest first
    ("free cash flow", "free_cash_flow", "SUM"),
    ("operating cash flow", "operating_cash_flow", "SUM"),
    ("operating expenses", "operating_expenses", "SUM"),
    ("operating income", "operating_income", "SUM"),
    ("operating margin", "operating_margin", "AVG"),
    ("gross margin", "gross_margin", "AVG"),
    ("order intake", "order_intake", "SUM"),
    ("r&d", "rd_expense", "SUM"),
    ("capex", "capex", "SUM"),
    ("headcount", "headcount", "AVG"),
    ("revenue", "revenue", "SUM"),
    ("sales", "revenue", "SUM"),
    ("cash", "cash", "AVG"),
    ("debt", "debt", "AVG"),
)
_YEAR = re.compile(r"\b(20\d\d)\b")
_QUARTER = re.compile(r"\bQ([1-4])\b", re.I)


@dataclass(frozen=True)
class Query:
    """One planned query: what it computes and the SQL."""

    kind: str  # "growth" | "ranking"
    figure: str  # the words the question used
    column: str
    aggregate: str  # SUM | AVG
    year: int
    quarter: int | None
    descending: bool
    sql: str


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(p)}\b", text) for p in phrases)


def _where(year: int, quarter: int | None) -> str:
    return f"year = {year}" + (f" AND quarter = {quarter}" if quarter else "")


def plan_query(question: str) -> Query | None:
    """The query for an aggregation question over the reports, or None (not one)."""
    text = question.lower()
    year = _YEAR.search(text)
    figure = next((f for f in FIGURES if re.search(rf"(?<!\w){re.escape(f[0])}(?!\w)", text)),
                  None)
    growth = _has(text, GROWTH_WORDS)
    if not (year and figure and _has(text, HIGH_WORDS + LOW_WORDS + TOTAL_WORDS + AVERAGE_WORDS)):
        return None
    phrase, column, agg = figure
    if _has(text, AVERAGE_WORDS):
        agg = "AVG"
    elif _has(text, TOTAL_WORDS):
        agg = "SUM"
    y, quarter = int(year[1]), (int(q[1]) if (q := _QUARTER.search(question)) else None)
    descending = not _has(text, LOW_WORDS)
    order = "DESC" if descending else "ASC"
    if growth:
        prev, cur = (f"{agg}(CASE WHEN {_where(y - 1, quarter)} THEN {column} END)",
                     f"{agg}(CASE WHEN {_where(y, quarter)} THEN {column} END)")
        sql = (f"SELECT company, ROUND({prev}, 1) AS {column}_{y - 1}, ROUND({cur}, 1) AS "
               f"{column}_{y}, ROUND(100.0 * ({cur} / {prev} - 1), 1) AS growth_pct "
               f"FROM reports GROUP BY company ORDER BY growth_pct {order}")
        return Query("growth", phrase, column, agg, y, quarter, descending, sql)
    name = f"{column}_{y}" + (f"_q{quarter}" if quarter else "")
    sql = (f"SELECT company, ROUND({agg}({column}), 1) AS {name} FROM reports WHERE "
           f"{_where(y, quarter)} GROUP BY company ORDER BY {name} {order}")
    return Query("ranking", phrase, column, agg, y, quarter, descending, sql)


def parse_table(text: str) -> tuple[list[str], list[list[str]]]:
    """(column names, rows) of a `reports_sql` result (a tabulate "simple" table); the
    dashed rule under the header gives each column's span, so names with spaces survive."""
    lines = text.splitlines()
    rule = next((i for i, line in enumerate(lines) if re.fullmatch(r"[- ]*-[- ]*", line)), None)
    if rule is None or rule == 0:
        return [], []
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
    def cut(line: str) -> list[str]:
        bounds = [(a, spans[i + 1][0] if i + 1 < len(spans) else len(line))
                  for i, (a, _) in enumerate(spans)]
        return [line[a:b].strip() for a, b in bounds]
    rows = [cut(line) for line in lines[rule + 1:] if line.strip() and not line.startswith("[")]
    return cut(lines[rule - 1]), rows


def _what(query: Query) -> str:
    when = f"{query.year} Q{query.quarter}" if query.quarter else str(query.year)
    how = ("summed over the quarters" if query.aggregate == "SUM"
           else "averaged over the quarters") if not query.quarter else "in that quarter"
    if query.kind == "growth":
        return f"{query.figure} growth in {when} over {query.year - 1} ({how})"
    return f"{query.figure} in {when} ({how})"


def answer(question: str, query: Query, result: str) -> str | None:
    """One sentence from the result table, naming the query; None if it has no rows."""
    names, rows = parse_table(result)
    rows = [r for r in rows if len(r) == len(names) and r[-1] not in ("", "NULL")]
    if not rows:
        return None
    named = [r for r in rows if r[0] and r[0].lower() in question.lower()]
    row, rank = (named[0], rows.index(named[0]) + 1) if named else (rows[0], 1)
    values = ", ".join(f"{n} = {v}" for n, v in zip(names[1:], row[1:]))
    order = "highest first" if query.descending else "lowest first"
    out = (f"{row[0]}: {values} — ranked {rank} of {len(rows)} companies ({order}) by "
           f"{_what(query)}.")
    if rank == 1 and len(rows) > 1:
        out += f" Next: {rows[1][0]} ({names[-1]} = {rows[1][-1]})."
    return out + " Source: reports_sql over the reports' figures (one query, shown in the trace)."
