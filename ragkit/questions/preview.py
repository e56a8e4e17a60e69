"""Generated questions as a notebook's table shows them, each cell on one line.

What it is: `question_preview(questions)` — one row per generated question (the records
`ragkit.questions.generate` returns), indexed by kind: the question, its first answer span
("(none: unanswerable)" without one) and its source (`ragkit.questions.review.source_text`),
every line break and run of blanks in a cell one space. Notebook 08's table of generated
questions showed a span copied from a JSON example as `"id": "whk_51Ba",\\n          "url": …`:
pandas prints a line break inside a cell as a literal `\\n`. `sheet_preview` does the same for
the review sheet.

What it is not: the questions themselves. The records keep each span exactly as its
document has it, line breaks included; `write_golden` and `write_review` write those.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragkit.questions.review import source_text

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("kind", "question", "answer span", "source")
NO_SPAN = "(none: unanswerable)"


def _one_line(text: str) -> str:
    """`text` with each run of white space (a line break included) one space."""
    return " ".join(text.split())


def question_preview(questions: Sequence[dict[str, Any]]) -> "pd.DataFrame":
    """The table of `questions` described above (no row for no question, the columns kept)."""
    import pandas as pd  # deferred: pandas only for a notebook's table
    rows = [(q.get("kind", ""), q["question"],
             q["golden"][0]["span"] if q.get("golden") else NO_SPAN, source_text(q))
            for q in questions]
    return pd.DataFrame([[_one_line(str(cell)) for cell in row] for row in rows],
                        columns=list(COLUMNS)).set_index("kind")
