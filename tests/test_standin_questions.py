"""The offline stand-in's question writer on a source file's passage: every line a sentence,
as the offline answerer cuts a file whose id ends in a code suffix."""
from __future__ import annotations

import pytest

from ragkit.standin.questions import answer, write

REFUND_TOTAL = ("def refund_total(order, restocking_fee):\n"
                "    total = sum(line.price * line.quantity for line in order.lines\n"
                "                if line.returned and not line.damaged)\n"
                "    return max(total - restocking_fee, 0)\n")


@pytest.mark.parametrize("title", ["shopcore/refunds.py", "shopcore/Refunds.PY"])
def test_a_source_file_passage_is_asked_about_line_by_line(title):
    """A passage whose title (a source file's id) ends in a code suffix, any case, has every
    line a sentence, as the offline answerer cuts a source file: its key sentence is its
    line with the most content terms, not three lines a prose rule joins."""
    written = write("lexical", title, [REFUND_TOTAL])
    assert (written["question"], written["answer_span"]) == (
        "What does the text state about def, refund_total and refund?",
        "def refund_total(order, restocking_fee):")
    assert write("contextual", title, [REFUND_TOTAL])["question"] == (
        f"In {title}, what is stated about def, refund_total and refund?")
    assert answer(written["question"], [REFUND_TOTAL]) == written["answer_span"]


def test_the_same_lines_under_a_prose_title_are_joined_where_they_go_on_in_lower_case():
    written = write("lexical", "shopcore/refunds.md", [REFUND_TOTAL])
    assert (written["question"], written["answer_span"]) == (
        "What does the text state about total, sum and line?",
        ("total = sum(line.price * line.quantity for line in order.lines\n"
         "                if line.returned and not line.damaged)\n"
         "    return max(total - restocking_fee, 0)"))
