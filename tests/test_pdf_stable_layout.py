"""One PDF reads the same on every run: pdfminer's grouping of text boxes into a tree broke
ties between equal distances by `id()`, a memory address, so a code listing's boxes came out
in another order from run to run (pdfminer.six issue 607). A file never changed was then
"changed since the index was built" at every `eval --index`, and `--update` re-embedded it
each time."""
from __future__ import annotations

from pdfminer.layout import LAParams, LTPage, LTTextBoxHorizontal

from ragkit.loaders.pdf_layout import _stable_tree


def _boxes(allocated: list[int]) -> list[LTTextBoxHorizontal]:
    """Twelve boxes of one size on a 3 × 4 grid (every neighbour equally far), made in the
    order `allocated` — which decides their memory addresses — and listed in grid order."""
    made = {}
    for n in allocated:
        box = LTTextBoxHorizontal()
        x, y = 72 + 180 * (n % 3), 700 - 40 * (n // 3)
        box.set_bbox((x, y, x + 78, y + 12))
        box.number = n
        made[n] = box
    return [made[n] for n in range(12)]


def _tree(group) -> list:
    return [item.number if hasattr(item, "number") else _tree(item) for item in group]


def _grouped(allocated: list[int], stable: bool) -> list:
    page = LTPage(1, (0, 0, 612, 792))
    if stable:
        _stable_tree(page)
    (top,) = page.group_textboxes(LAParams(), _boxes(allocated))
    return _tree(top)


def test_the_tree_of_boxes_depends_on_their_order_not_their_addresses():
    forward, backward = list(range(12)), list(reversed(range(12)))
    # made in grid order, then in reverse: pdfminer's own grouping gave two trees here (its
    # ties follow the addresses), which a run cannot choose
    assert _grouped(forward, stable=True) == _grouped(backward, stable=True)
